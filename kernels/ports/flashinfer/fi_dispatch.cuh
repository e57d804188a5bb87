// Compile only the NUM_MMA_KV variant FlashInfer's own dispatch selects on this GPU class.
//
// FlashInfer's host launchers (pod.cuh, batch_pod.cuh, prefill.cuh) compute a KV tile depth from the
// device's shared memory at run time and branch with DISPATCH_NUM_MMA_KV over 8/4/2/1, so every
// instantiation compiles four kernels per query tile where one runs (one POD instantiation: 97 s of
// nvcc and 9.3 MB of object; with this header 10 s and 0.75 MB). This header must be included before
// any FlashInfer header: it loads flashinfer/utils.cuh, replaces DISPATCH_NUM_MMA_KV with a version
// that evaluates, at compile time, the same formula each call site uses for a GPU with
// kSmemPerSm / kSmemPerBlockOptin bytes of shared memory (H100, H200: 228 KB per SM, 227 KB per block)
// and compiles that one branch. At run time FlashInfer's own computation still runs; if it picks a
// depth this build did not compile, the launcher throws (the port reports a CUDA error, never a result),
// and podcheck_kernel_supports refuses any device whose shared-memory sizes differ.
//
// The formulas are read from each call site (pod.cuh and batch_pod.cuh share one, the three prefill.cuh
// sites another); the names they use (NUM_MMA_Q_P, kFixedSmem, ...) are the call sites' own locals,
// reached by pasting the NUM_MMA_KV argument's token: PODCHECK_FI_KEEP_NUM_MMA_KV_P etc.
#pragma once

#include <flashinfer/utils.cuh>

#include <cstddef>
#include <cstdint>
#include <string>

namespace podcheck_fi {

inline constexpr int kSmemPerSm = 233472;          // cudaDevAttrMaxSharedMemoryPerMultiprocessor
inline constexpr int kSmemPerBlockOptin = 232448;  // cudaDevAttrMaxSharedMemoryPerBlockOptin

// DISPATCH_NUM_MMA_KV's ladder: the largest of 8, 4, 2, 1 not above v (0: FlashInfer's error branch).
constexpr std::uint32_t ladder(std::uint32_t v) { return v >= 8 ? 8 : v >= 4 ? 4 : v >= 2 ? 2 : v >= 1 ? 1 : 0; }

// pod.cuh / batch_pod.cuh: the same integer types as the call sites (int vs size_t, uint32 truncation).
constexpr std::uint32_t pod_site(std::uint32_t head_dim_qk, std::size_t q_bytes, std::uint32_t num_mma_q,
                                 std::uint32_t num_warps_q, std::uint32_t num_warps_kv, std::uint32_t reg_limit) {
  const int ctas = kSmemPerSm > (16 * head_dim_qk * q_bytes * 16) ? 2 : 1;
  const int per_cta = kSmemPerSm / ctas;
  const std::uint32_t smem_limit =
      (per_cta / (16 * head_dim_qk * q_bytes) - num_mma_q * num_warps_q) / (2 * num_warps_kv);
  return ladder(smem_limit < reg_limit ? smem_limit : reg_limit);
}

// prefill.cuh (single prefill, batch prefill ragged and paged).
constexpr std::uint32_t prefill_site(std::uint32_t fixed_smem, std::uint32_t kv_smem_per_step,
                                     std::uint32_t min_valid_steps, std::uint32_t reg_limit) {
  const int ctas = kSmemPerSm >= 2 * static_cast<int>(fixed_smem + min_valid_steps * kv_smem_per_step) ? 2 : 1;
  const int per_cta = kSmemPerSm / ctas < kSmemPerBlockOptin ? kSmemPerSm / ctas : kSmemPerBlockOptin;
  const int smem_limit = (per_cta - static_cast<int>(fixed_smem)) / static_cast<int>(kv_smem_per_step);
  if (smem_limit < 1) return 0;
  return ladder(static_cast<std::uint32_t>(smem_limit) < reg_limit ? static_cast<std::uint32_t>(smem_limit)
                                                                    : reg_limit);
}

inline std::string not_compiled(std::uint32_t wanted, std::uint32_t compiled) {
  return "podcheck FlashInfer port: FlashInfer's dispatch chose NUM_MMA_KV=" + std::to_string(wanted) +
         " but this build compiled only NUM_MMA_KV=" + std::to_string(compiled) +
         " (the value for 228 KB of shared memory per SM; kernels/ports/flashinfer/fi_dispatch.cuh)";
}

}  // namespace podcheck_fi

#define PODCHECK_FI_KEEP_NUM_MMA_KV_P \
  podcheck_fi::pod_site(HEAD_DIM_QK, sizeof(DTypeQ_P), NUM_MMA_Q_P, NUM_WARPS_Q_P, NUM_WARPS_KV_P, max_num_mma_kv_reg_p)
#define PODCHECK_FI_KEEP_NUM_MMA_KV_D \
  podcheck_fi::pod_site(HEAD_DIM_QK, sizeof(DTypeQ_D), NUM_MMA_Q_D, NUM_WARPS_Q_D, NUM_WARPS_KV_D, max_num_mma_kv_reg_d)
#define PODCHECK_FI_KEEP_NUM_MMA_KV \
  podcheck_fi::prefill_site(kFixedSmem, kKVSmemPerMmaKV, kMinValidMmaKV, max_num_mma_kv_reg)

#undef DISPATCH_NUM_MMA_KV
#define DISPATCH_NUM_MMA_KV(max_mma_kv, NUM_MMA_KV, ...)                                       \
  {                                                                                            \
    constexpr std::uint32_t podcheck_fi_kept_ = PODCHECK_FI_KEEP_##NUM_MMA_KV;                 \
    const std::uint32_t podcheck_fi_wanted_ = podcheck_fi::ladder(max_mma_kv);                 \
    if (podcheck_fi_wanted_ != podcheck_fi_kept_) {                                            \
      FLASHINFER_ERROR(podcheck_fi::not_compiled(podcheck_fi_wanted_, podcheck_fi_kept_));     \
    } else if constexpr (podcheck_fi_kept_ == 0) {                                             \
      FLASHINFER_ERROR("Unsupported max_mma_kv: 0");                                           \
    } else {                                                                                   \
      constexpr size_t NUM_MMA_KV = podcheck_fi_kept_;                                         \
      __VA_ARGS__                                                                              \
    }                                                                                          \
  }

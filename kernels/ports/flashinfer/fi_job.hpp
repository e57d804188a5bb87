// One problem as FlashInfer's wrappers would hand it to their kernels: what fi_port.cu derives from a
// pod_problem (scales folded, dropped options already dropped), and the table of compiled launchers.
// Plain C++ (CUDA types as void*), shared by fi_port.cu and the generated instance files.
#pragma once

#include "kernels/include/podcheck_kernel_abi.h"

#include <cstdint>
#include <string>
#include <vector>

namespace podcheck_fi {

// One side (prefill or decode) after the wrapper's rules: sm_scale final, options POD drops set to off.
struct SideJob {
  bool present = false;
  int num_requests = 0;
  std::int64_t rows = 0;
  const std::int32_t* qo_indptr = nullptr;       // device
  const std::int32_t* qo_indptr_host = nullptr;
  const void* q = nullptr;
  std::int64_t q_stride_row = 0, q_stride_head = 0;
  // KV through a page table (a dense single-request prefill: one page, page stride 0)
  const void* k = nullptr;
  const void* v = nullptr;
  std::int64_t k_stride_page = 0, k_stride_slot = 0, k_stride_head = 0;
  std::int64_t v_stride_page = 0, v_stride_slot = 0, v_stride_head = 0;
  int page_size = 1;
  const std::int32_t* kv_indptr = nullptr;       // device
  const std::int32_t* kv_indices = nullptr;
  const std::int32_t* last_page_len = nullptr;
  const std::int32_t* kv_indptr_host = nullptr;
  const std::int32_t* last_page_len_host = nullptr;
  std::int64_t kv_len_dense = 0;                 // single POD / single prefill: the one request's KV length
  // parameters as the kernel receives them
  int mask_mode = POD_MASK_NONE;
  const std::uint8_t* custom_mask = nullptr;     // device
  std::int32_t* mask_indptr = nullptr;           // device, int32 byte offsets (converted by fi_port.cu)
  int window_left = -1;
  float sm_scale = 0;                            // q_scale * k_scale folded in where the wrapper folds them
  float logits_soft_cap = 0;
  float rope_rcp_scale = 1, rope_rcp_theta = 1e-4f;
  const float* alibi_slopes = nullptr;
  float v_scale_after = 1;                       // the wrapper's `out *= v_scale` after the kernel
  void* o = nullptr;
  float* lse = nullptr;
};

// Which FlashInfer entry point runs the problem.
enum class Family { pod, batch_pod, single_prefill, batch_prefill };

struct Job {
  Family family = Family::pod;
  int num_qo_heads = 0, num_kv_heads = 0, head_dim = 0;
  SideJob prefill, decode;  // batch_prefill / single_prefill use `prefill` (a one-sided decode is put there too)
  bool one_sided_decode = false;  // batch_prefill running a decode batch (BatchDecode with tensor cores)
  bool enable_pdl = true;
  pod_run_stats* stats = nullptr;
};

// A compiled instantiation: launches job on stream (a cudaStream_t). Returns a CUDA error code (int),
// throws std::exception for FlashInfer's host-side errors.
using LaunchFn = int (*)(const Job& job, void* stream);

void register_launcher(const char* key, LaunchFn fn);
LaunchFn find_launcher(const std::string& key);
std::vector<std::string> launcher_keys();

// Planning and workspaces (fi_port.cu), allocated once per process as FlashInfer's wrappers cache theirs.
enum class Slot { pod_decode, batch_pod_prefill, batch_pod_decode, one_sided };

// A planned side: PrefillPlanInfo as its 15-entry vector, and the buffers the plan lives in.
struct Planned {
  std::vector<std::int64_t> info;
  void* int_buffer = nullptr;
  void* float_buffer = nullptr;
};
Planned plan_side(Slot slot, const SideJob& s, const Job& job, int kv_dtype_bytes, std::int64_t colocated,
                  void* stream);
void* pod_tmp_buffer();        // the 32 MiB "pod_with_kv_cache_tmp" of pod.py
void* prefill_tmp_buffer();    // the 32 MiB "single_prefill_with_kv_cache_tmp" of prefill.py
int* sm_aware_sched_buffer();  // BatchPOD's num_SMs + 2 ints

}  // namespace podcheck_fi

// The four FlashInfer entry points the port calls, each set up the way FlashInfer's own binding sets it
// up (csrc/pod.cu, csrc/batch_pod.cu, csrc/batch_prefill.cu, csrc/single_prefill.cu at fb28d7242b35):
// the same params fields, the same attention variant, the same plan (scheduler.cuh's PrefillPlan, called
// by fi_port.cu exactly as the Python wrappers' plan() calls it), the same tmp buffers.
// Included only by the generated instance files (one per compiled combination, see CMakeLists.txt). Each
// family's launcher has its own name: two families instantiated with the same template arguments must not
// share a symbol (the linker would keep one of them for both).
#pragma once

#include "kernels/ports/flashinfer/fi_dispatch.cuh"  // first: replaces DISPATCH_NUM_MMA_KV
#include "kernels/ports/flashinfer/fi_job.hpp"

#include <flashinfer/attention/default_decode_params.cuh>
#include <flashinfer/attention/default_prefill_params.cuh>
#include <flashinfer/attention/mask.cuh>
#include <flashinfer/attention/scheduler.cuh>
#include <flashinfer/attention/variants.cuh>
#include <flashinfer/page.cuh>
#include <flashinfer/pos_enc.cuh>

#if defined(PODCHECK_FI_FAMILY_POD)
#include <flashinfer/attention/pod.cuh>
#elif defined(PODCHECK_FI_FAMILY_BATCH_POD)
#include <flashinfer/attention/batch_pod.cuh>  // cannot share a unit with pod.cuh (both define Operation)
#else
#include <flashinfer/attention/prefill.cuh>
#endif

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <vector>

namespace podcheck_fi {

using flashinfer::MaskMode;
using flashinfer::PosEncodingMode;

template <class T>
T* mut(const void* p) {
  return static_cast<T*>(const_cast<void*>(p));
}

// paged_kv_t from the ABI's element strides (K and V strides identical: checked by fi_port.cu, as
// csrc/pod.cu and csrc/batch_pod.cu check them). Built with the constructor the bindings use.
template <class DKV>
flashinfer::paged_kv_t<DKV, std::int32_t> paged(const SideJob& s, const Job& job) {
  const std::int64_t strides[3] = {s.k_stride_page, s.k_stride_slot, s.k_stride_head};  // NHD order
  return flashinfer::paged_kv_t<DKV, std::int32_t>(
      job.num_kv_heads, s.page_size, job.head_dim, s.num_requests, flashinfer::QKVLayout::kNHD, mut<DKV>(s.k),
      mut<DKV>(s.v), strides, const_cast<std::int32_t*>(s.kv_indices), const_cast<std::int32_t*>(s.kv_indptr),
      const_cast<std::int32_t*>(s.last_page_len));
}

// BatchPrefillPagedParams from a planned side, field by field as csrc/batch_pod.cu / csrc/pod.cu fill them.
template <class Params>
void fill_paged(Params& params, const SideJob& s, const Job& job, const flashinfer::PrefillPlanInfo& plan,
                void* int_buffer, void* float_buffer, typename Params::DTypeO*& tmp_v, float*& tmp_s) {
  using DQ = typename Params::DTypeQ;
  using DKV = typename Params::DTypeKV;
  using DO = typename Params::DTypeO;
  params.q = mut<DQ>(s.q);
  params.paged_kv = paged<DKV>(s, job);
  params.q_indptr = const_cast<std::int32_t*>(s.qo_indptr);
  params.o = static_cast<DO*>(s.o);
  params.lse = s.lse;
  params.num_qo_heads = job.num_qo_heads;
  params.group_size = flashinfer::uint_fastdiv(job.num_qo_heads / job.num_kv_heads);
  params.q_stride_n = static_cast<std::int32_t>(s.q_stride_row);
  params.q_stride_h = static_cast<std::int32_t>(s.q_stride_head);
  params.window_left = s.window_left;
  params.maybe_custom_mask = const_cast<std::uint8_t*>(s.custom_mask);
  params.maybe_mask_indptr = s.mask_indptr;
  params.maybe_alibi_slopes = const_cast<float*>(s.alibi_slopes);
  params.logits_soft_cap = s.logits_soft_cap;
  params.sm_scale = s.sm_scale;
  params.rope_rcp_scale = s.rope_rcp_scale;
  params.rope_rcp_theta = s.rope_rcp_theta;
  using flashinfer::GetPtrFromBaseOffset;
  params.request_indices = GetPtrFromBaseOffset<std::int32_t>(int_buffer, plan.request_indices_offset);
  params.qo_tile_indices = GetPtrFromBaseOffset<std::int32_t>(int_buffer, plan.qo_tile_indices_offset);
  params.kv_tile_indices = GetPtrFromBaseOffset<std::int32_t>(int_buffer, plan.kv_tile_indices_offset);
  params.o_indptr = GetPtrFromBaseOffset<std::int32_t>(int_buffer, plan.o_indptr_offset);
  params.kv_chunk_size_ptr = GetPtrFromBaseOffset<std::int32_t>(int_buffer, plan.kv_chunk_size_ptr_offset);
  tmp_v = nullptr;
  tmp_s = nullptr;
  if (plan.split_kv) {
    params.merge_indptr = GetPtrFromBaseOffset<std::int32_t>(int_buffer, plan.merge_indptr_offset);
    tmp_v = GetPtrFromBaseOffset<DO>(float_buffer, plan.v_offset);
    tmp_s = GetPtrFromBaseOffset<float>(float_buffer, plan.s_offset);
  }
  params.padded_batch_size = plan.padded_batch_size;
  params.max_total_num_rows = plan.total_num_rows;
}

inline flashinfer::PrefillPlanInfo plan_info(const Planned& p) {
  flashinfer::PrefillPlanInfo info;
  info.FromVector(p.info);
  return info;
}

inline void note_plan(const Job& job, const flashinfer::PrefillPlanInfo& info, bool prefill_side) {
  if (!job.stats) return;
  pod_run_stats& st = *job.stats;
  if (prefill_side) {
    st.tile_q_prefill = static_cast<std::int32_t>(info.cta_tile_q);
    st.items_prefill = static_cast<std::int32_t>(info.padded_batch_size) * job.num_kv_heads;
    st.max_splits_prefill = info.split_kv ? 2 : 1;  // split or not; chunk counts live on the device
  } else {
    st.tile_q_decode = 16;  // the tile the POD kernels run the decode with (csrc/pod.cu: CTA_TILE_Q = 16)
    st.items_decode = static_cast<std::int32_t>(info.padded_batch_size) * job.num_kv_heads;
    st.max_splits_decode = info.split_kv ? 2 : 1;
  }
  st.merge_launched |= info.split_kv ? 1 : 0;
}

// SinglePrefillParams of a dense prefill side, filled as single_prefill_with_kv_cache and the POD binding fill
// them (csrc/single_prefill.cu, csrc/pod.cu); each caller adds what only it sets.
template <class DQ, class DKV>
flashinfer::SinglePrefillParams<DQ, DKV, DQ> single_prefill_params(const Job& job, const SideJob& p) {
  flashinfer::SinglePrefillParams<DQ, DKV, DQ> pp;
  pp.q = mut<DQ>(p.q);
  pp.k = mut<DKV>(p.k);
  pp.v = mut<DKV>(p.v);
  pp.o = static_cast<DQ*>(p.o);
  pp.lse = p.lse;
  pp.num_qo_heads = job.num_qo_heads;
  pp.num_kv_heads = job.num_kv_heads;
  pp.group_size = flashinfer::uint_fastdiv(job.num_qo_heads / job.num_kv_heads);
  pp.qo_len = static_cast<std::uint32_t>(p.rows);
  pp.kv_len = static_cast<std::uint32_t>(p.kv_len_dense);
  pp.q_stride_n = static_cast<std::uint32_t>(p.q_stride_row);
  pp.q_stride_h = static_cast<std::uint32_t>(p.q_stride_head);
  pp.k_stride_n = static_cast<std::uint32_t>(p.k_stride_slot);
  pp.k_stride_h = static_cast<std::uint32_t>(p.k_stride_head);
  pp.v_stride_n = static_cast<std::uint32_t>(p.v_stride_slot);
  pp.v_stride_h = static_cast<std::uint32_t>(p.v_stride_head);
  pp.window_left = p.window_left;
  pp.maybe_custom_mask = const_cast<std::uint8_t*>(p.custom_mask);
  pp.maybe_alibi_slopes = const_cast<float*>(p.alibi_slopes);
  pp.logits_soft_cap = p.logits_soft_cap;
  pp.sm_scale = p.sm_scale;
  pp.rope_rcp_scale = p.rope_rcp_scale;
  pp.rope_rcp_theta = p.rope_rcp_theta;
  return pp;
}

#if defined(PODCHECK_FI_FAMILY_POD)
// PODWithPagedKVCacheWrapper.run: prefill = SinglePrefillParams (csrc/pod.cu), decode = the batch-prefill
// params planned by plan() (qo_indptr = arange, causal False, the plan's window).
template <class DQ, class DKV, int D, MaskMode MASK_P, bool WIN_P, bool WIN_D, PosEncodingMode, bool>
int launch_pod(const Job& job, void* stream) {
  using PrefillParams = flashinfer::SinglePrefillParams<DQ, DKV, DQ>;
  using DecodeParams = flashinfer::BatchPrefillPagedParams<DQ, DKV, DQ, std::int32_t>;
  const SideJob& p = job.prefill;
  const SideJob& d = job.decode;
  const Planned pl = plan_side(Slot::pod_decode, d, job, sizeof(DKV), 0, stream);
  const flashinfer::PrefillPlanInfo info = plan_info(pl);
  note_plan(job, info, false);

  PrefillParams pp = single_prefill_params<DQ, DKV>(job, p);
  pp.partition_kv = false;

  DecodeParams dp;
  DQ* tmp_v = nullptr;
  float* tmp_s = nullptr;
  fill_paged(dp, d, job, info, pl.int_buffer, pl.float_buffer, tmp_v, tmp_s);
  dp.maybe_custom_mask = nullptr;  // pod.py passes no decode mask
  dp.maybe_mask_indptr = nullptr;
  if (job.stats) job.stats->tile_q_prefill = 0;  // chosen inside PODWithKVCacheTensorDispatched

  using VariantP = flashinfer::DefaultAttention<MASK_P == MaskMode::kCustom, WIN_P, false, false>;
  using VariantD = flashinfer::DefaultAttention<false, WIN_D, false, false>;
  return flashinfer::PODWithKVCacheTensorDispatched<D, D, PosEncodingMode::kNone, false, MASK_P, 16, MaskMode::kNone,
                                                    VariantP, VariantD>(
      pp, static_cast<DQ*>(pod_tmp_buffer()), dp, tmp_v, tmp_s, job.enable_pdl, static_cast<cudaStream_t>(stream));
}

#elif defined(PODCHECK_FI_FAMILY_BATCH_POD)
// BatchPODWithPagedKVCacheWrapper: decode planned first, num_colocated_ctas = its padded batch size
// unless the prefill has more than 1536 rows, prefill planned with it; CTA_TILE_Q of the prefill from
// its plan (16/64/128 instantiated, as batch_pod_kernel_inst.jinja), decode tile 16.
template <class DQ, class DKV, int D, MaskMode MASK_P, bool WIN, bool, PosEncodingMode, bool>
int launch_batch_pod(const Job& job, void* stream) {
  using Params = flashinfer::BatchPrefillPagedParams<DQ, DKV, DQ, std::int32_t>;
  const SideJob& p = job.prefill;
  const SideJob& d = job.decode;
  const Planned pd = plan_side(Slot::batch_pod_decode, d, job, sizeof(DKV), 0, stream);
  const flashinfer::PrefillPlanInfo info_d = plan_info(pd);
  const std::int64_t total_rows_p = p.qo_indptr_host[p.num_requests];
  const std::int64_t colocated = total_rows_p > 1536 ? 0 : info_d.padded_batch_size;
  const Planned pp = plan_side(Slot::batch_pod_prefill, p, job, sizeof(DKV), colocated, stream);
  const flashinfer::PrefillPlanInfo info_p = plan_info(pp);
  note_plan(job, info_d, false);
  note_plan(job, info_p, true);

  Params prm_p, prm_d;
  DQ *tmp_v_p, *tmp_v_d;
  float *tmp_s_p, *tmp_s_d;
  fill_paged(prm_p, p, job, info_p, pp.int_buffer, pp.float_buffer, tmp_v_p, tmp_s_p);
  fill_paged(prm_d, d, job, info_d, pd.int_buffer, pd.float_buffer, tmp_v_d, tmp_s_d);
  prm_p.maybe_mask_indptr = nullptr;  // pod.py passes mask_indptr None (a custom mask is refused earlier)
  prm_d.maybe_custom_mask = nullptr;
  prm_d.maybe_mask_indptr = nullptr;

  using VariantP = flashinfer::DefaultAttention<MASK_P == MaskMode::kCustom, WIN, false, false>;
  using VariantD = flashinfer::DefaultAttention<false, WIN, false, false>;
  auto go = [&](auto tile) {
    constexpr std::uint32_t TILE = decltype(tile)::value;
    return flashinfer::BatchPODWithKVCacheTensorDispatched<D, D, PosEncodingMode::kNone, false, TILE, MASK_P, 16,
                                                           MaskMode::kNone, VariantP, VariantD>(
        prm_p, tmp_v_p, tmp_s_p, prm_d, tmp_v_d, tmp_s_d, job.enable_pdl, static_cast<cudaStream_t>(stream),
        sm_aware_sched_buffer());
  };
  switch (info_p.cta_tile_q) {
    case 16: return go(std::integral_constant<std::uint32_t, 16>{});
    case 64: return go(std::integral_constant<std::uint32_t, 64>{});
    case 128: return go(std::integral_constant<std::uint32_t, 128>{});
    default: FLASHINFER_ERROR("Unsupported cta_tile_q: " + std::to_string(info_p.cta_tile_q));
  }
}

#elif defined(PODCHECK_FI_FAMILY_BATCH_PREFILL)
// BatchPrefillWithPagedKVCacheWrapper (backend fa2), and BatchDecodeWithPagedKVCacheWrapper with
// use_tensor_cores=True (the same kernel, qo_indptr = arange, mask NON_CAUSAL): plan with causal False,
// the plan's window, then BatchPrefillWithPagedKVCacheDispatched<CTA_TILE_Q from the plan>.
template <class DQ, class DKV, int D, MaskMode MASK, bool WIN, bool, PosEncodingMode POS, bool CAP>
int launch_batch_prefill(const Job& job, void* stream) {
  using Params = flashinfer::BatchPrefillPagedParams<DQ, DKV, DQ, std::int32_t>;
  const SideJob& s = job.prefill;
  const Planned pl = plan_side(Slot::one_sided, s, job, sizeof(DKV), 0, stream);
  const flashinfer::PrefillPlanInfo info = plan_info(pl);
  note_plan(job, info, !job.one_sided_decode);
  Params prm;
  DQ* tmp_v;
  float* tmp_s;
  fill_paged(prm, s, job, info, pl.int_buffer, pl.float_buffer, tmp_v, tmp_s);
  using Variant = flashinfer::DefaultAttention<MASK == MaskMode::kCustom, WIN, CAP, POS == PosEncodingMode::kALiBi>;
  auto go = [&](auto tile) {
    constexpr std::uint32_t TILE = decltype(tile)::value;
    return flashinfer::BatchPrefillWithPagedKVCacheDispatched<TILE, D, D, POS, false, MASK, Variant, Params>(
        prm, tmp_v, tmp_s, job.enable_pdl, static_cast<cudaStream_t>(stream));
  };
  switch (info.cta_tile_q) {
    case 16: return go(std::integral_constant<std::uint32_t, 16>{});
    case 64: return go(std::integral_constant<std::uint32_t, 64>{});
    case 128: return go(std::integral_constant<std::uint32_t, 128>{});
    default: FLASHINFER_ERROR("Unsupported cta_tile_q: " + std::to_string(info.cta_tile_q));
  }
}

#elif defined(PODCHECK_FI_FAMILY_SINGLE_PREFILL)
// single_prefill_with_kv_cache (backend fa2): SinglePrefillWithKVCacheDispatched with its 32 MiB tmp.
template <class DQ, class DKV, int D, MaskMode MASK, bool WIN, bool, PosEncodingMode POS, bool CAP>
int launch_single_prefill(const Job& job, void* stream) {
  using Params = flashinfer::SinglePrefillParams<DQ, DKV, DQ>;
  const SideJob& p = job.prefill;
  Params pp = single_prefill_params<DQ, DKV>(job, p);
  pp.head_dim = D;
  using Variant = flashinfer::DefaultAttention<MASK == MaskMode::kCustom, WIN, CAP, POS == PosEncodingMode::kALiBi>;
  return flashinfer::SinglePrefillWithKVCacheDispatched<D, D, POS, false, MASK, Variant>(
      pp, static_cast<DQ*>(prefill_tmp_buffer()), static_cast<cudaStream_t>(stream));
}
#endif

}  // namespace podcheck_fi

// Case -> pod_problem on the host (see case_problem.hpp).
#include "kernels/host/case_problem.hpp"

#include <cmath>
#include <stdexcept>

namespace podcheck::kernels {

pod_dtype to_pod_dtype(DType t) {
  switch (t) {
    case DType::float16: return POD_DTYPE_F16;
    case DType::bfloat16: return POD_DTYPE_BF16;
    case DType::float8_e4m3fn: return POD_DTYPE_E4M3;
    case DType::float8_e5m2: return POD_DTYPE_E5M2;
    case DType::float32: return POD_DTYPE_F32;
    default: throw std::invalid_argument("dtype '" + std::string(dtype_name(t)) + "' has no kernel ABI equivalent");
  }
}

namespace {

void pack_side(const Case& c, const Side& s, PackedSide& ps, pod_side& out) {
  const int Hkv = c.num_kv_heads, D = c.head_dim, H = c.num_qo_heads;
  ps.present = true;
  ps.qo_indptr = s.qo_indptr;
  ps.rows = s.num_rows();
  ps.q = &s.q;
  out = pod_side{};
  out.present = 1;
  out.num_requests = s.num_requests();
  out.q_stride_row = std::int64_t(H) * D;
  out.q_stride_head = D;
  out.o_stride_row = std::int64_t(H) * D;
  out.o_stride_head = D;
  out.lse_stride_row = H;

  const KvStorage& kv = s.kv;
  pod_kv& k = out.kv;
  if (!kv.paged) {
    // Dense single request: one page holding the whole sequence.
    if (s.num_requests() != 1) throw InvalidCase("dense KV needs exactly one request");
    const std::int64_t L = kv.layout == Layout::NHD ? kv.k.shape.at(0) : kv.k.shape.at(1);
    ps.kv_indptr = {0, L > 0 ? 1 : 0};
    ps.kv_indices = {0};
    ps.last_page_len = {static_cast<std::int32_t>(std::max<std::int64_t>(L, 1))};
    k.page_size = static_cast<std::int32_t>(std::max<std::int64_t>(L, 1));
    k.k_stride_page = k.v_stride_page = 0;
    if (kv.layout == Layout::NHD) {
      k.k_stride_slot = k.v_stride_slot = std::int64_t(Hkv) * D;
      k.k_stride_head = k.v_stride_head = D;
    } else {
      k.k_stride_slot = k.v_stride_slot = D;
      k.k_stride_head = k.v_stride_head = L * D;
    }
    ps.k = &kv.k;
    ps.v = &kv.v;
  } else {
    const PageTable& pt = kv.pages;
    const std::int64_t P = pt.page_size;
    ps.kv_indptr = pt.indptr;
    ps.kv_indices = pt.indices;
    ps.last_page_len = pt.last_page_len;
    k.page_size = pt.page_size;
    std::int64_t page, slot, head, voff = 0;
    if (kv.layout == Layout::NHD) {
      slot = std::int64_t(Hkv) * D;
      head = D;
      page = P * Hkv * D;
    } else {
      head = P * D;
      slot = D;
      page = P * Hkv * D;
    }
    if (kv.stacked()) {
      voff = page;  // dim 1 (K/V) sits just under the page dim in both layouts
      page *= 2;
      ps.k = ps.v = &*kv.kv_stacked;
    } else {
      ps.k = &kv.k;
      ps.v = &kv.v;
    }
    k.k_stride_page = k.v_stride_page = page;
    k.k_stride_slot = k.v_stride_slot = slot;
    k.k_stride_head = k.v_stride_head = head;
    ps.v_offset = voff;
  }
  if (ps.kv_indices.empty()) ps.kv_indices = {0};  // keep a valid (unused) device array

  const SideParams& p = s.params;
  out.mask_mode = p.mask_mode == MaskMode::causal ? POD_MASK_CAUSAL
                  : p.mask_mode == MaskMode::custom ? POD_MASK_CUSTOM : POD_MASK_NONE;
  if (p.mask_mode == MaskMode::custom) {
    ps.mask = &p.custom_mask;
    ps.mask_indptr = p.custom_mask_indptr;
  }
  out.window_left = p.window_left;
  out.sm_scale = static_cast<float>(p.sm_scale.value_or(1.0 / std::sqrt(double(D))));
  out.q_scale = static_cast<float>(p.q_scale);
  out.k_scale = static_cast<float>(p.k_scale);
  out.v_scale = static_cast<float>(p.v_scale);
  out.logits_soft_cap = static_cast<float>(p.logits_soft_cap);
  out.pos_encoding = p.pos_encoding == PosEncoding::rope_llama ? POD_POS_ROPE_LLAMA
                     : p.pos_encoding == PosEncoding::alibi   ? POD_POS_ALIBI : POD_POS_NONE;
  out.rope_scale = p.rope_scale;
  out.rope_theta = p.rope_theta;
  if (p.pos_encoding == PosEncoding::alibi) {
    const std::vector<double> sl = p.alibi_slopes.empty() ? default_alibi_slopes(c.num_qo_heads) : p.alibi_slopes;
    ps.alibi_slopes.assign(sl.begin(), sl.end());  // float, as the logits are formed in float
  }
}

void point_host(PackedSide& ps, pod_side& out) {
  out.qo_indptr_host = ps.qo_indptr.data();
  out.kv.indptr_host = ps.kv_indptr.data();
  out.kv.last_page_len_host = ps.last_page_len.data();
}

}  // namespace

void pack_case(const Case& c, PackedProblem& out) {
  out = PackedProblem{};
  pod_problem& p = out.problem;
  p.abi_version = POD_ABI_VERSION;
  p.num_qo_heads = c.num_qo_heads;
  p.num_kv_heads = c.num_kv_heads;
  p.head_dim = c.head_dim;
  try {
    p.dtype_q = to_pod_dtype(c.dtype_q);
    p.dtype_kv = to_pod_dtype(c.dtype_kv);
    p.dtype_o = to_pod_dtype(c.dtype_o);
  } catch (const std::invalid_argument& e) {
    out.unsupported = e.what();
  }
  p.lse_base_e = c.lse_base == LseBase::base_e ? 1 : 0;
  if (c.prefill) pack_side(c, *c.prefill, out.side[0], p.prefill);
  if (c.decode) pack_side(c, *c.decode, out.side[1], p.decode);
  for (int si = 0; si < 2; ++si)
    if (out.side[si].present) point_host(out.side[si], si == 0 ? p.prefill : p.decode);
}

}  // namespace podcheck::kernels

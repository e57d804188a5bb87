// The POD problem model: the shared language of every podcheck module.
//
// A Case is one POD invocation: a prefill side and a decode side, either of which may be absent (a
// standalone prefill or decode launch is a one-sided case). Each side is a batch of requests: query rows
// (ragged by qo_indptr) attending to a KV sequence reached through a dense tensor (NHD or HND; single
// request only) or a CSR page table. Semantics are FlashInfer's intended ones (SPEC.md); what a given
// kernel family really computes is expressed by a profile (reference/profile.hpp), not here.
#pragma once

#include "reference/dtype.hpp"
#include "reference/tensor.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace podcheck {

enum class Layout : std::uint8_t { NHD, HND };
enum class MaskMode : std::uint8_t { none, causal, custom };  // FlashInfer's NON_CAUSAL, CAUSAL, CUSTOM
enum class PosEncoding : std::uint8_t { none, rope_llama, alibi };
enum class LseBase : std::uint8_t { base2, base_e };
enum class SideKind : std::uint8_t { prefill, decode };

std::string_view layout_name(Layout);
Layout layout_from_name(std::string_view);  // "NHD" | "HND"
std::string_view mask_mode_name(MaskMode);  // "none" | "causal" | "custom"
MaskMode mask_mode_from_name(std::string_view);
std::string_view pos_encoding_name(PosEncoding);  // "NONE" | "ROPE_LLAMA" | "ALIBI" (FlashInfer's names)
PosEncoding pos_encoding_from_name(std::string_view);
std::string_view lse_base_name(LseBase);  // "2" | "e"
LseBase lse_base_from_name(std::string_view);
std::string_view side_name(SideKind);     // "prefill" | "decode"

// CSR page table of one side (SPEC §1.3). Request r owns pages indices[indptr[r] .. indptr[r+1]);
// its KV length is 0 when it owns no page, else (n_r - 1) * page_size + last_page_len[r].
struct PageTable {
  int page_size = 0;
  std::vector<std::int32_t> indptr;         // num_requests + 1, non-decreasing, indptr[0] == 0
  std::vector<std::int32_t> indices;        // physical page ids, each in [0, num_pages)
  std::vector<std::int32_t> last_page_len;  // num_requests, each in [1, page_size]
};

// Where a side's K and V live.
//  dense  (single request): NHD [kv_len, H_kv, D] or HND [H_kv, kv_len, D]; k and v separate tensors.
//  paged, separate: k, v are NHD [pages, page_size, H_kv, D] or HND [pages, H_kv, page_size, D].
//  paged, stacked : kv is one 5-D tensor NHD [pages, 2, page_size, H_kv, D] or HND [pages, 2, H_kv,
//                   page_size, D]; index 0 on dim 1 is K, 1 is V. k and v are then empty.
struct KvStorage {
  bool paged = false;
  Layout layout = Layout::NHD;
  Tensor k, v;
  std::optional<Tensor> kv_stacked;
  PageTable pages;  // paged only

  bool stacked() const { return kv_stacked.has_value(); }
  std::int64_t num_pages() const;
  // Element offset (in elements, into k/v or into kv_stacked) of (K or V, physical page, slot, kv head, 0)
  // for paged storage, or of (token, kv head, 0) for dense storage (page ignored, slot = token).
  std::int64_t offset(bool is_v, std::int64_t page, std::int64_t slot, std::int64_t kv_head) const;
  const Tensor& k_tensor() const { return stacked() ? *kv_stacked : k; }
  const Tensor& v_tensor() const { return stacked() ? *kv_stacked : v; }
};

// Per-side semantic parameters (SPEC §2, §4, §6).
struct SideParams {
  MaskMode mask_mode = MaskMode::none;
  // CUSTOM mode: packed bits, little bit order (element 8b+k is bit k of byte b), one segment per request,
  // each starting on a byte boundary (segment_packbits); bit i*kv_len_r + j = 1 means visible.
  std::vector<std::uint8_t> custom_mask;
  std::vector<std::int64_t> custom_mask_indptr;  // byte offsets, num_requests + 1
  int window_left = -1;                          // -1: no window; else visible iff j >= p_i - window_left
  std::optional<double> sm_scale;                // default 1/sqrt(head_dim)
  double logits_soft_cap = 0.0;                  // 0: off; else s = cap * tanh(s / cap)
  PosEncoding pos_encoding = PosEncoding::none;
  double rope_scale = 1.0;
  double rope_theta = 1e4;
  std::vector<double> alibi_slopes;  // per query head; empty: FlashInfer's default slopes
  double q_scale = 1.0, k_scale = 1.0, v_scale = 1.0;
};

struct Side {
  std::vector<std::int32_t> qo_indptr;  // num_requests + 1
  Tensor q;                             // [qo_indptr.back(), H_qo, D], dtype_q
  KvStorage kv;
  SideParams params;

  int num_requests() const { return qo_indptr.empty() ? 0 : static_cast<int>(qo_indptr.size()) - 1; }
  std::int64_t num_rows() const { return qo_indptr.empty() ? 0 : qo_indptr.back(); }
  std::int64_t qo_len(int r) const { return qo_indptr[r + 1] - qo_indptr[r]; }
  std::int64_t kv_len(int r) const;  // dense: from the tensor shape; paged: the kernel formula
  // Request owning a global query row (qo_indptr[r] <= row < qo_indptr[r + 1]; empty requests skipped).
  int request_of(std::int64_t row) const;
  // Physical (page, slot) of logical token t of request r; dense storage gives (0, t).
  std::pair<std::int64_t, std::int64_t> locate(int r, std::int64_t t) const;
};

struct Case {
  std::string id;  // canonical, readable name (fixtures/case_id.hpp); also HDF5 group name and --case filter
  int num_qo_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  DType dtype_q = DType::float16;
  DType dtype_kv = DType::float16;
  DType dtype_o = DType::float16;
  std::optional<Side> prefill;
  std::optional<Side> decode;
  LseBase lse_base = LseBase::base2;  // base of the LSE the kernel returns (FlashInfer: 2)
  Fp8Overflow fp8_overflow = Fp8Overflow::saturate;  // the conversion that made fp8 bytes
  std::uint64_t seed = 0;
  std::string distribution;  // input distribution name, e.g. "normal"

  int group_size() const { return num_kv_heads > 0 ? num_qo_heads / num_kv_heads : 0; }
  const Side* side(SideKind k) const { return k == SideKind::prefill ? (prefill ? &*prefill : nullptr)
                                                                     : (decode ? &*decode : nullptr); }
  Side* side(SideKind k) { return k == SideKind::prefill ? (prefill ? &*prefill : nullptr)
                                                         : (decode ? &*decode : nullptr); }
  // "single" (dense prefill + paged decode), "batch" (paged + paged), "prefill" or "decode" (one side).
  std::string kind() const;
};

// Thrown for a case the model refuses; the message names what is wrong (and where).
struct InvalidCase : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Checks shapes, dtypes, head ratios, page tables, masks and parameters. Throws InvalidCase.
void validate_case(const Case& c);

// sm_scale actually applied to q.k before soft cap / bias: (sm_scale or 1/sqrt(D)) * q_scale * k_scale.
double effective_logit_scale(const Case& c, const SideParams& p);
// FlashInfer's default ALiBi slopes for H query heads (SPEC §4.3).
std::vector<double> default_alibi_slopes(int num_qo_heads);
// The indptr of n requests of `step` rows (or pages) each: 0, step, 2 step, ..., n step.
inline std::vector<std::int32_t> uniform_indptr(std::int64_t n, std::int64_t step = 1) {
  std::vector<std::int32_t> v;
  for (std::int64_t i = 0; i <= n; ++i) v.push_back(static_cast<std::int32_t>(i * step));
  return v;
}

}  // namespace podcheck

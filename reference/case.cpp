// The case model: names, KV addressing (SPEC §1.2-1.3), validation and derived parameters (SPEC §2.1, §4.3).
#include "reference/case.hpp"

#include "reference/names.hpp"
#include "reference/outputs.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace podcheck {
namespace {

std::int64_t dim(const Tensor& t, std::size_t i) { return t.shape.size() > i ? t.shape[i] : 0; }

}  // namespace

namespace {

constexpr NameTable<Layout, 2> kLayouts{"KV layout", {{{Layout::NHD, "NHD"}, {Layout::HND, "HND"}}}};
constexpr NameTable<MaskMode, 3> kMaskModes{
    "mask mode", {{{MaskMode::none, "none"}, {MaskMode::causal, "causal"}, {MaskMode::custom, "custom"}}}};
constexpr NameTable<PosEncoding, 3> kPosEncodings{
    "positional encoding",
    {{{PosEncoding::none, "NONE"}, {PosEncoding::rope_llama, "ROPE_LLAMA"}, {PosEncoding::alibi, "ALIBI"}}}};
constexpr NameTable<LseBase, 2> kLseBases{"LSE base", {{{LseBase::base2, "2"}, {LseBase::base_e, "e"}}}};
constexpr NameTable<RunStatus, 4> kRunStatuses{"run status",
                                               {{{RunStatus::ran, "ran"},
                                                 {RunStatus::not_supported, "not-supported"},
                                                 {RunStatus::launch_failed, "launch-failed"},
                                                 {RunStatus::guards_overwritten, "guards-overwritten"}}}};
constexpr NameTable<SideKind, 2> kSides{"side", {{{SideKind::prefill, "prefill"}, {SideKind::decode, "decode"}}}};

}  // namespace

std::string_view layout_name(Layout l) { return kLayouts.name(l); }
Layout layout_from_name(std::string_view s) { return kLayouts.parse(s); }
std::string_view mask_mode_name(MaskMode m) { return kMaskModes.name(m); }
MaskMode mask_mode_from_name(std::string_view s) { return kMaskModes.parse(s); }
std::string_view pos_encoding_name(PosEncoding p) { return kPosEncodings.name(p); }
PosEncoding pos_encoding_from_name(std::string_view s) { return kPosEncodings.parse(s); }
std::string_view lse_base_name(LseBase b) { return kLseBases.name(b); }
LseBase lse_base_from_name(std::string_view s) { return kLseBases.parse(s); }
std::string_view side_name(SideKind k) { return kSides.name(k); }
std::string_view run_status_name(RunStatus s) { return kRunStatuses.name(s); }
RunStatus run_status_from_name(std::string_view s) { return kRunStatuses.parse(s); }

std::int64_t KvStorage::num_pages() const {
  if (!paged) return 0;
  return stacked() ? dim(*kv_stacked, 0) : dim(k, 0);
}

std::int64_t KvStorage::offset(bool is_v, std::int64_t page, std::int64_t slot, std::int64_t kv_head) const {
  if (!paged) {  // NHD [L, H, D] or HND [H, L, D]
    const std::int64_t D = dim(k, 2);
    if (layout == Layout::NHD) return (slot * dim(k, 1) + kv_head) * D;
    return (kv_head * dim(k, 1) + slot) * D;
  }
  if (stacked()) {  // NHD [P, 2, ps, H, D] or HND [P, 2, H, ps, D]
    const Tensor& t = *kv_stacked;
    const std::int64_t base = page * 2 + (is_v ? 1 : 0);
    if (layout == Layout::NHD) return ((base * dim(t, 2) + slot) * dim(t, 3) + kv_head) * dim(t, 4);
    return ((base * dim(t, 2) + kv_head) * dim(t, 3) + slot) * dim(t, 4);
  }
  // NHD [P, ps, H, D] or HND [P, H, ps, D]
  if (layout == Layout::NHD) return ((page * dim(k, 1) + slot) * dim(k, 2) + kv_head) * dim(k, 3);
  return ((page * dim(k, 1) + kv_head) * dim(k, 2) + slot) * dim(k, 3);
}

int Side::request_of(std::int64_t row) const {
  if (num_requests() == 0) return -1;
  const auto it = std::upper_bound(qo_indptr.begin(), qo_indptr.end(), row,
                                   [](std::int64_t v, std::int32_t e) { return v < static_cast<std::int64_t>(e); });
  return std::clamp(static_cast<int>(it - qo_indptr.begin()) - 1, 0, num_requests() - 1);
}

std::int64_t Side::kv_len(int r) const {
  if (!kv.paged) return kv.layout == Layout::NHD ? dim(kv.k, 0) : dim(kv.k, 1);
  const std::int64_t n = kv.pages.indptr[r + 1] - kv.pages.indptr[r];
  return n == 0 ? 0 : (n - 1) * kv.pages.page_size + kv.pages.last_page_len[r];
}

std::pair<std::int64_t, std::int64_t> Side::locate(int r, std::int64_t t) const {
  if (!kv.paged) return {0, t};
  const int ps = kv.pages.page_size;
  return {kv.pages.indices[kv.pages.indptr[r] + t / ps], t % ps};
}

std::string Case::kind() const {
  if (prefill && decode) return prefill->kv.paged ? "batch" : "single";
  if (prefill) return "prefill";
  if (decode) return "decode";
  return "empty";
}

double effective_logit_scale(const Case& c, const SideParams& p) {
  const double sm = p.sm_scale ? *p.sm_scale : 1.0 / std::sqrt(static_cast<double>(c.head_dim));
  return sm * p.q_scale * p.k_scale;
}

std::vector<double> default_alibi_slopes(int num_qo_heads) {
  std::vector<double> s;
  if (num_qo_heads <= 0) return s;
  int n = 1;
  while (n * 2 <= num_qo_heads) n *= 2;
  const double m0 = std::pow(2.0, -8.0 / n);
  for (int h = 0; h < n; ++h) s.push_back(std::pow(m0, h + 1));
  const double m1 = std::pow(2.0, -4.0 / n);
  for (int h = n; h < num_qo_heads; ++h) s.push_back(std::pow(m1, 2 * (h - n) + 1));
  return s;
}

// ------------------------------------------------------------------------------------------------ validation

namespace {

struct Checker {
  std::string where;  // "case 'id', prefill side"
  [[noreturn]] void fail(const std::string& what) const { throw InvalidCase(where + ": " + what); }
  void require(bool ok, const std::string& what) const {
    if (!ok) fail(what);
  }
};

std::string shape_of(std::initializer_list<std::int64_t> s) {
  Tensor t;
  t.shape.assign(s.begin(), s.end());
  return t.shape_string();
}

void check_tensor(const Checker& ck, const char* name, const Tensor& t, DType want,
                  std::initializer_list<std::int64_t> shape) {
  ck.require(t.dtype == want, std::string(name) + " has dtype " + std::string(dtype_name(t.dtype)) +
                                  ", expected " + std::string(dtype_name(want)));
  ck.require(t.shape == std::vector<std::int64_t>(shape),
             std::string(name) + " has shape " + t.shape_string() + ", expected " + shape_of(shape));
  ck.require(t.bytes.size() == static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype),
             std::string(name) + " holds " + std::to_string(t.bytes.size()) + " bytes, shape " + t.shape_string() +
                 " needs " + std::to_string(static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype)));
}

void check_indptr(const Checker& ck, const char* name, const std::vector<std::int32_t>& p, std::size_t want_size) {
  ck.require(p.size() == want_size, std::string(name) + " has " + std::to_string(p.size()) + " entries, expected " +
                                        std::to_string(want_size));
  ck.require(p.empty() || p[0] == 0, std::string(name) + "[0] is " + std::to_string(p.empty() ? 0 : p[0]) +
                                         ", must be 0");
  for (std::size_t i = 1; i < p.size(); ++i)
    ck.require(p[i] >= p[i - 1], std::string(name) + " is not non-decreasing: [" + std::to_string(i - 1) + "]=" +
                                     std::to_string(p[i - 1]) + " > [" + std::to_string(i) + "]=" +
                                     std::to_string(p[i]));
}

void check_side(const Case& c, SideKind kind, const Side& s) {
  Checker ck{"case '" + c.id + "', " + std::string(side_name(kind)) + " side"};
  const int H = c.num_qo_heads, Hkv = c.num_kv_heads, D = c.head_dim;
  ck.require(s.qo_indptr.size() >= 2, "qo_indptr needs at least 2 entries (one request), has " +
                                          std::to_string(s.qo_indptr.size()));
  check_indptr(ck, "qo_indptr", s.qo_indptr, s.qo_indptr.size());
  const int R = s.num_requests();
  check_tensor(ck, "q", s.q, c.dtype_q, {s.num_rows(), H, D});

  const KvStorage& kv = s.kv;
  if (!kv.paged) {
    ck.require(R == 1, "dense KV serves exactly one request, qo_indptr describes " + std::to_string(R));
    ck.require(!kv.stacked(), "dense KV cannot be a stacked 5-D tensor");
    ck.require(kv.k.shape.size() == 3, "dense k must be 3-D, has shape " + kv.k.shape_string());
    const std::int64_t L = kv.layout == Layout::NHD ? kv.k.shape[0] : kv.k.shape[1];
    if (kv.layout == Layout::NHD) {
      check_tensor(ck, "k", kv.k, c.dtype_kv, {L, Hkv, D});
      check_tensor(ck, "v", kv.v, c.dtype_kv, {L, Hkv, D});
    } else {
      check_tensor(ck, "k", kv.k, c.dtype_kv, {Hkv, L, D});
      check_tensor(ck, "v", kv.v, c.dtype_kv, {Hkv, L, D});
    }
  } else {
    const PageTable& pt = kv.pages;
    ck.require(pt.page_size > 0, "page_size is " + std::to_string(pt.page_size) + ", must be > 0");
    const std::int64_t P = kv.num_pages();
    const std::int64_t ps = pt.page_size;
    if (kv.stacked()) {
      ck.require(kv.k.bytes.empty() && kv.v.bytes.empty(),
                 "stacked KV given together with separate k/v tensors");
      if (kv.layout == Layout::NHD)
        check_tensor(ck, "kv", *kv.kv_stacked, c.dtype_kv, {P, 2, ps, Hkv, D});
      else
        check_tensor(ck, "kv", *kv.kv_stacked, c.dtype_kv, {P, 2, Hkv, ps, D});
    } else {
      ck.require(kv.k.shape.size() == 4, "paged k must be 4-D, has shape " + kv.k.shape_string());
      if (kv.layout == Layout::NHD) {
        check_tensor(ck, "k", kv.k, c.dtype_kv, {P, ps, Hkv, D});
        check_tensor(ck, "v", kv.v, c.dtype_kv, {P, ps, Hkv, D});
      } else {
        check_tensor(ck, "k", kv.k, c.dtype_kv, {P, Hkv, ps, D});
        check_tensor(ck, "v", kv.v, c.dtype_kv, {P, Hkv, ps, D});
      }
    }
    check_indptr(ck, "kv_indptr", pt.indptr, static_cast<std::size_t>(R) + 1);
    ck.require(static_cast<std::int64_t>(pt.indices.size()) == pt.indptr.back(),
               "kv_indices has " + std::to_string(pt.indices.size()) + " entries, kv_indptr[-1] is " +
                   std::to_string(pt.indptr.back()));
    for (std::size_t i = 0; i < pt.indices.size(); ++i)
      ck.require(pt.indices[i] >= 0 && pt.indices[i] < P,
                 "page index kv_indices[" + std::to_string(i) + "] = " + std::to_string(pt.indices[i]) +
                     " out of range [0, " + std::to_string(P) + ")");
    ck.require(pt.last_page_len.size() == static_cast<std::size_t>(R),
               "last_page_len has " + std::to_string(pt.last_page_len.size()) + " entries, expected " +
                   std::to_string(R));
    for (int r = 0; r < R; ++r) {
      const bool has_pages = pt.indptr[r + 1] > pt.indptr[r];
      const int lo = has_pages ? 1 : 0;
      ck.require(pt.last_page_len[r] >= lo && pt.last_page_len[r] <= pt.page_size,
                 "last_page_len[" + std::to_string(r) + "] = " + std::to_string(pt.last_page_len[r]) +
                     " outside [" + std::to_string(lo) + ", page_size=" + std::to_string(pt.page_size) + "]");
    }
  }

  const SideParams& p = s.params;
  if (p.mask_mode == MaskMode::custom) {
    ck.require(p.custom_mask_indptr.size() == static_cast<std::size_t>(R) + 1,
               "custom_mask_indptr has " + std::to_string(p.custom_mask_indptr.size()) + " entries, expected " +
                   std::to_string(R + 1));
    ck.require(p.custom_mask_indptr[0] == 0, "custom_mask_indptr[0] must be 0");
    for (int r = 0; r < R; ++r) {
      const std::int64_t bits = s.qo_len(r) * s.kv_len(r);
      const std::int64_t want = (bits + 7) / 8;
      const std::int64_t got = p.custom_mask_indptr[r + 1] - p.custom_mask_indptr[r];
      ck.require(got == want, "custom mask of request " + std::to_string(r) + " has " + std::to_string(got) +
                                  " bytes, expected " + std::to_string(want) + " (qo_len " +
                                  std::to_string(s.qo_len(r)) + " x kv_len " + std::to_string(s.kv_len(r)) +
                                  " bits)");
    }
    ck.require(static_cast<std::int64_t>(p.custom_mask.size()) == p.custom_mask_indptr.back(),
               "custom_mask has " + std::to_string(p.custom_mask.size()) + " bytes, custom_mask_indptr[-1] is " +
                   std::to_string(p.custom_mask_indptr.back()));
  } else {
    ck.require(p.custom_mask.empty() && p.custom_mask_indptr.empty(),
               "custom mask bits given but mask mode is '" + std::string(mask_mode_name(p.mask_mode)) + "'");
  }
  ck.require(p.window_left >= -1, "window_left is " + std::to_string(p.window_left) + ", must be >= -1");
  if (p.sm_scale)
    ck.require(std::isfinite(*p.sm_scale) && *p.sm_scale > 0,
               "sm_scale is " + std::to_string(*p.sm_scale) + ", must be finite and > 0");
  ck.require(std::isfinite(p.logits_soft_cap) && p.logits_soft_cap >= 0,
             "logits_soft_cap is " + std::to_string(p.logits_soft_cap) + ", must be >= 0 (0: off)");
  for (double v : {p.q_scale, p.k_scale, p.v_scale})
    ck.require(std::isfinite(v), "q/k/v scales must be finite");
  if (p.pos_encoding == PosEncoding::rope_llama) {
    ck.require(D % 2 == 0, "ROPE_LLAMA needs an even head_dim, got " + std::to_string(D));
    ck.require(p.rope_scale > 0 && std::isfinite(p.rope_scale), "rope_scale must be finite and > 0");
    ck.require(p.rope_theta > 0 && std::isfinite(p.rope_theta), "rope_theta must be finite and > 0");
  }
  ck.require(p.alibi_slopes.empty() || static_cast<int>(p.alibi_slopes.size()) == H,
             "alibi_slopes has " + std::to_string(p.alibi_slopes.size()) + " entries, expected num_qo_heads=" +
                 std::to_string(H) + " (or none for the defaults)");
}

}  // namespace

void validate_case(const Case& c) {
  Checker ck{"case '" + c.id + "'"};
  ck.require(c.head_dim > 0, "head_dim is " + std::to_string(c.head_dim) + ", must be > 0");
  ck.require(c.num_qo_heads > 0, "num_qo_heads is " + std::to_string(c.num_qo_heads) + ", must be > 0");
  ck.require(c.num_kv_heads > 0, "num_kv_heads is " + std::to_string(c.num_kv_heads) + ", must be > 0");
  ck.require(c.num_qo_heads % c.num_kv_heads == 0,
             "num_qo_heads (" + std::to_string(c.num_qo_heads) + ") is not a multiple of num_kv_heads (" +
                 std::to_string(c.num_kv_heads) + ")");
  auto dtype_ok = [](DType t, std::initializer_list<DType> allowed) {
    for (DType a : allowed)
      if (a == t) return true;
    return false;
  };
  ck.require(dtype_ok(c.dtype_q, {DType::float16, DType::bfloat16, DType::float32}),
             "dtype_q " + std::string(dtype_name(c.dtype_q)) + " not allowed for q (float16, bfloat16, float32)");
  ck.require(dtype_ok(c.dtype_kv, {DType::float16, DType::bfloat16, DType::float8_e4m3fn, DType::float8_e5m2,
                                   DType::float32}),
             "dtype_kv " + std::string(dtype_name(c.dtype_kv)) +
                 " not allowed for k/v (float16, bfloat16, float8_e4m3fn, float8_e5m2, float32)");
  ck.require(dtype_ok(c.dtype_o, {DType::float16, DType::bfloat16, DType::float32}),
             "dtype_o " + std::string(dtype_name(c.dtype_o)) + " not allowed for the output (float16, bfloat16, "
             "float32)");
  ck.require(c.prefill || c.decode, "has neither a prefill nor a decode side");
  if (c.prefill) check_side(c, SideKind::prefill, *c.prefill);
  if (c.decode) check_side(c, SideKind::decode, *c.decode);
}

}  // namespace podcheck

// The case model: names, KV addressing, the kernel's kv_len formula, validation messages, default ALiBi
// slopes, effective logit scale and profiles.
#include "reference/case.hpp"
#include "reference/profile.hpp"
#include "reference/tests/random_case.hpp"
#include "testing/catch.hpp"

#include <cmath>
#include <functional>
#include <string>

using namespace podcheck;

namespace {

CaseRecipe pod_spec() {
  CaseRecipe cs;
  cs.num_qo_heads = 4;
  cs.num_kv_heads = 2;
  cs.head_dim = 8;
  SideRecipe p;
  p.paged = false;
  p.qo_lens = {5};
  p.kv_lens = {7};
  p.params.mask_mode = MaskMode::causal;
  SideRecipe d;
  d.page_size = 4;
  d.qo_lens = {1, 1, 1};
  d.kv_lens = {9, 4, 1};
  cs.prefill = p;
  cs.decode = d;
  return cs;
}

// Message of the InvalidCase thrown by validate_case after `edit`, or "" when none is thrown.
std::string refusal(const std::function<void(Case&)>& edit) {
  Case c = build_case(pod_spec());
  edit(c);
  try {
    validate_case(c);
  } catch (const InvalidCase& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("names round-trip and unknown names are refused", "[reference][case]") {
  for (Layout l : {Layout::NHD, Layout::HND}) CHECK(layout_from_name(layout_name(l)) == l);
  for (MaskMode m : {MaskMode::none, MaskMode::causal, MaskMode::custom}) CHECK(mask_mode_from_name(mask_mode_name(m)) == m);
  for (PosEncoding p : {PosEncoding::none, PosEncoding::rope_llama, PosEncoding::alibi})
    CHECK(pos_encoding_from_name(pos_encoding_name(p)) == p);
  CHECK(pos_encoding_name(PosEncoding::rope_llama) == "ROPE_LLAMA");
  for (Profile p : {Profile::intended, Profile::flashinfer, Profile::flashinfer_pod})
    CHECK(profile_from_name(profile_name(p)) == p);
  CHECK_THROWS_AS(layout_from_name("NDH"), std::invalid_argument);
  CHECK_THROWS_AS(profile_from_name("pod"), std::invalid_argument);
  CHECK(build_case(pod_spec()).kind() == "single");
}

TEST_CASE("paged kv_len uses the kernel formula and locate follows the page table", "[reference][case]") {
  Case c = build_case(pod_spec());
  REQUIRE_NOTHROW(validate_case(c));
  const Side& d = *c.decode;
  CHECK(d.kv_len(0) == 9);  // pages 3, last_page_len 1: (3-1)*4 + 1
  CHECK(d.kv_len(1) == 4);
  CHECK(d.kv_len(2) == 1);
  CHECK(c.prefill->kv_len(0) == 7);
  // Request 0, token 5 -> its second page, slot 1.
  CHECK(d.locate(0, 5) == std::pair<std::int64_t, std::int64_t>{d.kv.pages.indices[1], 1});
  CHECK(d.locate(1, 3) == std::pair<std::int64_t, std::int64_t>{d.kv.pages.indices[3], 3});
  // A request with no page has length 0 whatever last_page_len says.
  Side e = d;
  e.kv.pages.indptr = {0, 3, 4, 4};
  e.kv.pages.indices.resize(4);
  e.kv.pages.last_page_len = {1, 4, 3};
  CHECK(e.kv_len(2) == 0);
}

TEST_CASE("KvStorage::offset addresses every layout", "[reference][case]") {
  // Element offsets written out from the layouts' definitions (SPEC §1.2).
  KvStorage s;
  s.paged = true;
  s.pages.page_size = 4;
  s.k = Tensor::zeros(DType::float16, {6, 4, 3, 8});  // NHD [P, ps, H, D]
  s.v = s.k;
  CHECK(s.offset(false, 2, 1, 2) == ((2 * 4 + 1) * 3 + 2) * 8);
  s.layout = Layout::HND;
  s.k = Tensor::zeros(DType::float16, {6, 3, 4, 8});  // HND [P, H, ps, D]
  CHECK(s.offset(true, 2, 1, 2) == ((2 * 3 + 2) * 4 + 1) * 8);
  s.k = Tensor{};
  s.v = Tensor{};
  s.kv_stacked = Tensor::zeros(DType::float16, {6, 2, 3, 4, 8});  // HND [P, 2, H, ps, D]
  CHECK(s.offset(true, 2, 1, 2) == (((2 * 2 + 1) * 3 + 2) * 4 + 1) * 8);
  s.layout = Layout::NHD;
  s.kv_stacked = Tensor::zeros(DType::float16, {6, 2, 4, 3, 8});  // NHD [P, 2, ps, H, D]
  CHECK(s.offset(false, 2, 1, 2) == (((2 * 2 + 0) * 4 + 1) * 3 + 2) * 8);
  CHECK(s.num_pages() == 6);
  KvStorage dense;
  dense.k = Tensor::zeros(DType::float16, {7, 3, 8});  // NHD [L, H, D]
  CHECK(dense.offset(false, 0, 5, 1) == (5 * 3 + 1) * 8);
  dense.layout = Layout::HND;
  dense.k = Tensor::zeros(DType::float16, {3, 7, 8});  // HND [H, L, D]
  CHECK(dense.offset(false, 0, 5, 1) == (1 * 7 + 5) * 8);
}

TEST_CASE("validate_case refuses malformed cases with a clear message", "[reference][case]") {
  CHECK(refusal([](Case&) {}).empty());
  CHECK(has(refusal([](Case& c) { c.num_qo_heads = 3; }), "num_qo_heads (3) is not a multiple of num_kv_heads (2)"));
  CHECK(has(refusal([](Case& c) { c.head_dim = 0; }), "head_dim is 0, must be > 0"));
  CHECK(has(refusal([](Case& c) { c.decode->kv.pages.indices[2] = 99; }), "page index kv_indices[2] = 99 out of range"));
  CHECK(has(refusal([](Case& c) { c.decode->kv.pages.indices[0] = -1; }), "out of range"));
  CHECK(has(refusal([](Case& c) { c.decode->kv.pages.last_page_len[1] = 5; }), "last_page_len[1] = 5 outside [1, page_size=4]"));
  CHECK(has(refusal([](Case& c) { c.decode->kv.pages.last_page_len[0] = 0; }), "last_page_len[0] = 0 outside"));
  CHECK(has(refusal([](Case& c) { c.decode->kv.pages.indptr = {0, 3, 2, 5}; }), "kv_indptr is not non-decreasing"));
  CHECK(has(refusal([](Case& c) { c.decode->kv.pages.indptr = {1, 3, 4, 5}; }), "kv_indptr[0] is 1, must be 0"));
  CHECK(has(refusal([](Case& c) { c.decode->kv.pages.indptr = {0, 3, 5}; }), "kv_indptr has 3 entries, expected 4"));
  CHECK(has(refusal([](Case& c) { c.decode->qo_indptr = {0, 2, 1, 3}; }), "qo_indptr is not non-decreasing"));
  CHECK(has(refusal([](Case& c) { c.decode->kv.pages.indices.pop_back(); }), "kv_indices has 4 entries, kv_indptr[-1] is 5"));
  CHECK(has(refusal([](Case& c) { c.prefill->q.shape[2] = 4; }), "q has shape [5, 4, 4], expected [5, 4, 8]"));
  CHECK(has(refusal([](Case& c) { c.prefill->kv.v.shape[0] = 6; }), "v has shape [6, 2, 8], expected [7, 2, 8]"));
  CHECK(has(refusal([](Case& c) { c.decode->kv.k.shape[2] = 1; }), "k has shape"));
  CHECK(has(refusal([](Case& c) { c.dtype_q = DType::float8_e4m3fn; }), "dtype_q float8_e4m3fn not allowed for q"));
  CHECK(has(refusal([](Case& c) { c.dtype_kv = DType::int32; }), "dtype_kv int32 not allowed for k/v"));
  CHECK(has(refusal([](Case& c) { c.prefill->q.dtype = DType::bfloat16; }), "q has dtype bfloat16, expected float16"));
  CHECK(has(refusal([](Case& c) { c.prefill->params.window_left = -2; }), "window_left is -2"));
  CHECK(has(refusal([](Case& c) { c.prefill->params.logits_soft_cap = -1; }), "logits_soft_cap"));
  CHECK(has(refusal([](Case& c) { c.prefill->params.alibi_slopes = {1, 2}; }), "alibi_slopes has 2 entries"));
  CHECK(has(refusal([](Case& c) { c.prefill.reset(); c.decode.reset(); }), "neither a prefill nor a decode side"));
  CHECK(has(refusal([](Case& c) { c.prefill->qo_indptr = {0, 2, 5}; }), "dense KV serves exactly one request"));
  CHECK(has(refusal([](Case& c) { c.prefill->params.custom_mask = {1}; }), "custom mask bits given but mask mode is 'causal'"));
  // Custom mask of the wrong size: request 0 of the prefill needs ceil(5*7/8) = 5 bytes.
  CHECK(has(refusal([](Case& c) {
              c.prefill->params.mask_mode = MaskMode::custom;
              c.prefill->params.custom_mask.assign(4, 0xFF);
              c.prefill->params.custom_mask_indptr = {0, 4};
            }),
            "custom mask of request 0 has 4 bytes, expected 5"));
  // The message names the case and the side.
  CHECK(has(refusal([](Case& c) { c.decode->kv.pages.indices[2] = 99; }), "case 'recipe_seed0', decode side"));
  // A causal row that sees nothing (kv_len < qo_len) is valid: it is an empty row, not an error.
  CHECK(refusal([](Case& c) { c.prefill->kv.k.shape[0] = 2; c.prefill->kv.k.bytes.resize(2 * 2 * 8 * 2);
                               c.prefill->kv.v = c.prefill->kv.k; }).empty());
}

TEST_CASE("default ALiBi slopes and effective logit scale", "[reference][case]") {
  // SPEC §4.3, written out: 8 heads -> 2^(-1), 2^(-2), ... 2^(-8).
  auto s8 = default_alibi_slopes(8);
  REQUIRE(s8.size() == 8);
  for (int h = 0; h < 8; ++h) CHECK(s8[h] == std::ldexp(1.0, -(h + 1)));
  // 6 heads: n = 4 -> 2^(-2), 2^(-4), 2^(-6), 2^(-8), then (2^(-1))^1, (2^(-1))^3.
  auto s6 = default_alibi_slopes(6);
  REQUIRE(s6.size() == 6);
  const double want6[] = {0.25, 1.0 / 16, 1.0 / 64, 1.0 / 256, 0.5, 0.125};
  for (int h = 0; h < 6; ++h) CHECK(std::fabs(s6[h] - want6[h]) < 1e-15);
  Case c = build_case(pod_spec());
  SideParams p;
  CHECK(effective_logit_scale(c, p) == 1.0 / std::sqrt(8.0));
  p.sm_scale = 0.5;
  p.q_scale = 2.0;
  p.k_scale = 3.0;
  CHECK(effective_logit_scale(c, p) == 3.0);
}

TEST_CASE("profiles change only what the kernel family ignores", "[reference][case]") {
  CaseRecipe cs = pod_spec();
  cs.prefill->params.pos_encoding = PosEncoding::rope_llama;
  cs.prefill->params.k_scale = 2.0;
  cs.prefill->params.logits_soft_cap = 30;
  cs.decode->params.mask_mode = MaskMode::causal;
  cs.decode->params.k_scale = 2.0;
  Case c = build_case(cs);
  auto intended = apply_profile(Profile::intended, c);
  CHECK(intended.notes.empty());
  CHECK(intended.semantics == Semantics{});
  CHECK(intended.kase.prefill->params.pos_encoding == PosEncoding::rope_llama);
  auto fi = apply_profile(Profile::flashinfer, c);
  CHECK(fi.semantics.alibi_softcap_double_sm_scale);
  auto pod = apply_profile(Profile::flashinfer_pod, c);
  CHECK(pod.kase.prefill->params.pos_encoding == PosEncoding::none);
  CHECK(pod.kase.prefill->params.logits_soft_cap == 0.0);
  CHECK(pod.kase.prefill->params.k_scale == 1.0);
  CHECK(pod.kase.prefill->params.mask_mode == MaskMode::causal);
  CHECK(pod.kase.decode->params.mask_mode == MaskMode::none);
  CHECK(pod.kase.decode->params.k_scale == 2.0);  // decode keeps its scales (SPEC §6.2)
  CHECK(pod.kase.lse_base == LseBase::base2);
  CHECK(pod.notes.size() == 4);
  CHECK_NOTHROW(validate_case(pod.kase));
}

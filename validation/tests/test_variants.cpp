// Diagnosis variants as case rewrites (validation/variants.hpp), each against a truth computed another way:
// an MHA case with the KV heads laid out as h % H_kv, a case whose KV is cut to the rows' top-left keys,
// analytic means over the pages or keys a row should read, the softmax's shift invariance, and one row
// computed by hand.
#include "testing/catch.hpp"

#include "reference/reference.hpp"
#include "fixtures/case_builder.hpp"
#include "validation/variants.hpp"

#include <cmath>
#include <string>

using namespace podcheck;
using namespace podcheck::validation;

namespace {

const Variant& find_variant(const std::vector<Variant>& vs, const std::string& prefix) {
  for (const auto& v : vs)
    if (v.name.rfind(prefix, 0) == 0) return v;
  FAIL("no variant named '" << prefix << "...'");
  return vs.front();
}

bool has_variant(const std::vector<Variant>& vs, const std::string& prefix) {
  for (const auto& v : vs)
    if (v.name.rfind(prefix, 0) == 0) return true;
  return false;
}

CaseRecipe dense_prefill(std::int64_t Q, std::int64_t L, MaskMode mode, int heads = 4, int kv_heads = 2) {
  CaseRecipe cs;
  cs.num_qo_heads = heads;
  cs.num_kv_heads = kv_heads;
  cs.head_dim = 8;
  cs.dtype_q = cs.dtype_kv = DType::float32;
  cs.dtype_o = cs.dtype_q;
  SideRecipe ss;
  ss.paged = false;
  ss.qo_lens = {Q};
  ss.kv_lens = {L};
  ss.params.mask_mode = mode;
  cs.prefill = ss;
  cs.seed = 5;
  return cs;
}

// Keys [0, n) of a dense NHD side's K and V (the rest dropped).
Side first_keys(const Side& s, std::int64_t n) {
  Side out = s;
  for (Tensor* t : {&out.kv.k, &out.kv.v}) {
    const std::int64_t row = t->shape[1] * t->shape[2];
    t->shape[0] = n;
    t->bytes.resize(static_cast<std::size_t>(n * row) * dtype_size(t->dtype));
  }
  return out;
}

}  // namespace

TEST_CASE("variant GQA h % H_kv equals an MHA case whose kv head h is the GQA case's kv head h % H_kv",
          "[validation][variants]") {
  for (PosEncoding pe : {PosEncoding::none, PosEncoding::alibi}) {
    CaseRecipe cs = dense_prefill(5, 9, MaskMode::causal, 8, 2);
    cs.prefill->params.pos_encoding = pe;
    const Case c = build_case(cs);
    // MHA: 8 kv heads, kv head h = the GQA case's kv head h % 2 (NHD [L, H_kv, D]).
    Case m = c;
    m.num_kv_heads = 8;
    for (auto [src, dst] : {std::pair{&c.prefill->kv.k, &m.prefill->kv.k}, std::pair{&c.prefill->kv.v, &m.prefill->kv.v}}) {
      const std::int64_t L = src->shape[0], D = src->shape[2];
      *dst = Tensor::zeros(src->dtype, {L, 8, D});
      for (std::int64_t j = 0; j < L; ++j)
        for (int h = 0; h < 8; ++h)
          for (std::int64_t d = 0; d < D; ++d) dst->set((j * 8 + h) * D + d, src->get((j * 2 + h % 2) * D + d));
    }
    const auto vs = semantic_variants(c, Semantics{});
    const SideResult got = variant_reference(find_variant(vs, "GQA mapping h % H_kv"), SideKind::prefill);
    const SideResult want = reference_fast_side(m, SideKind::prefill);
    CAPTURE(pos_encoding_name(pe));
    CHECK(max_rel_diff(got, want) <= kFastVsNaiveBound);
    CHECK(max_rel_diff(reference_fast_side(c, SideKind::prefill), want) > 1e-3);  // the mapping does matter
  }
}

TEST_CASE("variant causal top-left equals bottom-right causal over the first Q keys", "[validation][variants]") {
  const Case c = build_case(dense_prefill(6, 15, MaskMode::causal));
  // Top-left: row i sees keys 0..i. Bottom-right over the first Q = 6 keys: row i sees keys 0..i + 6 - 6.
  Case cut = c;
  cut.prefill = first_keys(*c.prefill, 6);
  const auto vs = semantic_variants(c, Semantics{});
  const SideResult got = variant_reference(find_variant(vs, "causal mask aligned top-left"), SideKind::prefill);
  CHECK(max_rel_diff(got, reference_fast_side(cut, SideKind::prefill)) <= kFastVsNaiveBound);
  // With Q == L top-left and bottom-right agree: no such variant is offered.
  CHECK(!has_variant(semantic_variants(build_case(dense_prefill(6, 6, MaskMode::causal)), Semantics{}),
                     "causal mask aligned top-left"));
}

TEST_CASE("variant page table ignored reads pages indptr[r], indptr[r] + 1, ... of the pool", "[validation][variants]") {
  // V of pool page p is p everywhere and all keys are equal: the output is the token-weighted mean of the
  // page ids a request reads.
  CaseRecipe cs;
  cs.num_qo_heads = 2;
  cs.num_kv_heads = 1;
  cs.head_dim = 4;
  cs.dtype_q = cs.dtype_kv = DType::float32;
  cs.dtype_o = cs.dtype_q;
  SideRecipe ss;
  ss.page_size = 3;
  ss.qo_lens = {1, 1, 1};
  ss.kv_lens = {7, 2, 6};  // pages 3, 1, 2; request 0 ends with 1 token in its last page
  ss.spare_pages = 3;
  cs.decode = ss;
  Case c = build_case(cs);
  Side& d = *c.decode;
  const std::int64_t P = d.kv.num_pages();
  for (std::int64_t p = 0; p < P; ++p)
    for (std::int64_t slot = 0; slot < 3; ++slot)
      for (std::int64_t e = 0; e < 4; ++e) {
        d.kv.k.set(((p * 3) + slot) * 4 + e, 0.5);
        d.kv.v.set(((p * 3) + slot) * 4 + e, static_cast<double>(p));
      }
  REQUIRE(d.kv.pages.indices != std::vector<std::int32_t>({0, 1, 2, 3, 4, 5}));  // the builder shuffles them
  const auto vs = semantic_variants(c, Semantics{});
  const SideResult got = variant_reference(find_variant(vs, "page table ignored"), SideKind::decode);
  // Request 0 reads pages 0, 1 (3 tokens each) and 2 (1 token); request 1 page 3 (2 tokens); request 2 pages 4, 5.
  const double want[3] = {(0 * 3 + 1 * 3 + 2 * 1) / 7.0, 3.0, (4 * 3 + 5 * 3) / 6.0};
  for (int r = 0; r < 3; ++r)
    for (int h = 0; h < 2; ++h) {
      CAPTURE(r, h);
      CHECK(std::abs(got.o(r, h, 0) - want[r]) < 1e-14);
    }
  // With the real page table the answer differs.
  const SideResult base = reference_fast_side(c, SideKind::decode);
  CHECK(std::abs(base.o(0, 0, 0) - want[0]) > 0.1);
}

TEST_CASE("variants window_left +- 1 average over one key more or less", "[validation][variants]") {
  // Equal keys: a row's output is the mean of the V rows it sees; non-causal with window 3, row i (position
  // i + L - Q) sees keys [pos - w, L).
  CaseRecipe cs = dense_prefill(4, 12, MaskMode::none, 2, 1);
  cs.prefill->params.window_left = 3;
  Case c = build_case(cs);
  Side& s = *c.prefill;
  for (std::int64_t j = 0; j < 12; ++j)
    for (std::int64_t e = 0; e < 8; ++e) s.kv.k.set(j * 8 + e, 0.25);
  const auto vs = semantic_variants(c, Semantics{});
  for (int shift : {1, -1}) {
    const SideResult got =
        variant_reference(find_variant(vs, shift > 0 ? "window_left + 1" : "window_left - 1"), SideKind::prefill);
    for (std::int64_t i = 0; i < 4; ++i) {
      const std::int64_t lo = std::max<std::int64_t>(0, i + 8 - (3 + shift));
      double mean = 0;
      for (std::int64_t j = lo; j < 12; ++j) mean += s.kv.v.get(j * 8 + 2);
      mean /= static_cast<double>(12 - lo);
      CAPTURE(shift, i);
      CHECK(std::abs(got.o(i, 1, 2) - mean) < 1e-13);
    }
  }
  // window_left 0 has no "- 1" (it would mean no window at all).
  cs.prefill->params.window_left = 0;
  CHECK(!has_variant(semantic_variants(build_case(cs), Semantics{}), "window_left - 1"));
}

TEST_CASE("variant ALiBi at true positions: LSE shifted by slope*(L - Q) without a cap, one capped row by hand",
          "[validation][variants]") {
  SECTION("no soft cap: softmax is shift invariant, only the LSE moves") {
    CaseRecipe cs = dense_prefill(5, 13, MaskMode::causal);
    cs.prefill->params.pos_encoding = PosEncoding::alibi;
    const Case c = build_case(cs);
    const SideResult base = reference_fast_side(c, SideKind::prefill);
    const auto vs = semantic_variants(c, Semantics{});
    const SideResult got = variant_reference(find_variant(vs, "ALiBi at true positions"), SideKind::prefill);
    const auto slopes = default_alibi_slopes(4);
    REQUIRE(got.rows == 5);
    for (std::int64_t i = 0; i < 5; ++i)
      for (int h = 0; h < 4; ++h) {
        CAPTURE(i, h);
        // bias slope * (j - p_i) = slope * (j - i) - slope * (L - Q): the logits move by -slope * 8.
        CHECK(std::abs(got.lse[i * 4 + h] - (base.lse[i * 4 + h] - slopes[h] * 8 / std::log(2.0))) < 1e-12);
        for (int d = 0; d < 8; ++d) CHECK(std::abs(got.o(i, h, d) - base.o(i, h, d)) < 1e-13);
      }
  }
  SECTION("soft cap: one row of one head computed here") {
    CaseRecipe cs = dense_prefill(2, 4, MaskMode::none, 1, 1);
    cs.prefill->params.pos_encoding = PosEncoding::alibi;
    cs.prefill->params.alibi_slopes = {0.75};
    cs.prefill->params.logits_soft_cap = 2.0;
    const Case c = build_case(cs);
    const Side& s = *c.prefill;
    const auto vs = semantic_variants(c, Semantics{});
    const SideResult got = variant_reference(find_variant(vs, "ALiBi at true positions"), SideKind::prefill);
    for (std::int64_t i = 0; i < 2; ++i) {
      const double pos = static_cast<double>(i + 4 - 2), sm = 1.0 / std::sqrt(8.0);
      double logit[4], mx = -1e300;
      for (int j = 0; j < 4; ++j) {
        double x = 0;
        for (int d = 0; d < 8; ++d) x += s.q.get(i * 8 + d) * s.kv.k.get(j * 8 + d);
        logit[j] = 2.0 * std::tanh((sm * x + 0.75 * (j - pos)) / 2.0);
        mx = std::max(mx, logit[j]);
      }
      double z = 0, o3 = 0;
      for (int j = 0; j < 4; ++j) {
        z += std::exp(logit[j] - mx);
        o3 += std::exp(logit[j] - mx) * s.kv.v.get(j * 8 + 3);
      }
      CAPTURE(i);
      CHECK(std::abs(got.o(i, 0, 3) - o3 / z) < 1e-13);
      CHECK(std::abs(got.lse[i] - (mx + std::log(z)) / std::log(2.0)) < 1e-13);
    }
  }
  SECTION("not offered when a request has fewer keys than query rows") {
    CaseRecipe cs = dense_prefill(6, 4, MaskMode::none);
    cs.prefill->params.pos_encoding = PosEncoding::alibi;
    CHECK(!has_variant(semantic_variants(build_case(cs), Semantics{}), "ALiBi at true positions"));
  }
}

TEST_CASE("variant LSE base flips the case's base: ln 2 times the base-2 LSE", "[validation][variants]") {
  const Case c = build_case(dense_prefill(3, 7, MaskMode::causal));
  const SideResult base = reference_fast_side(c, SideKind::prefill);
  const SideResult got =
      variant_reference(find_variant(semantic_variants(c, Semantics{}), "LSE in base e"), SideKind::prefill);
  for (std::size_t n = 0; n < base.lse.size(); ++n) CHECK(std::abs(got.lse[n] - base.lse[n] * std::log(2.0)) < 1e-13);
  CHECK(max_rel_diff(SideResult{base.rows, base.heads, base.head_dim, got.out, base.lse}, base) == 0.0);
}

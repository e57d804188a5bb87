// Cases with known answers, and invariances the reference must respect: equal keys give the mean of the
// visible V rows, a single visible key gives its V row and LSE = logit / ln 2, storage (layout, paging,
// page order, stacked tensors) changes nothing, GQA equals MHA with repeated KV heads, fully masked rows give
// 0 / -inf, and invalid cases are refused. Also longer cases that take the fast path's shared-KV branch.
#include "reference/naive.hpp"
#include "reference/reference.hpp"
#include "reference/tests/random_case.hpp"
#include "testing/catch.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace podcheck;

namespace {

constexpr double kSame = 1e-13;  // two storages of the same data: only summation order may differ

// Copy of side s with the same logical KV stored differently (pages shuffled with `seed`).
Side restore(const Case& c, const Side& s, bool paged, Layout layout, bool stacked, int page_size, unsigned seed,
             int repeat_kv = 1) {
  const int Hkv = c.num_kv_heads * repeat_kv, D = c.head_dim;
  CaseRecipe cs;
  cs.num_qo_heads = c.num_qo_heads;
  cs.num_kv_heads = Hkv;
  cs.head_dim = D;
  cs.dtype_q = c.dtype_q;
  cs.dtype_kv = c.dtype_kv;
  SideRecipe ss;
  ss.paged = paged;
  ss.layout = layout;
  ss.stacked = stacked;
  ss.page_size = page_size;
  ss.qo_lens.clear();
  ss.kv_lens.clear();
  for (int r = 0; r < s.num_requests(); ++r) {
    ss.qo_lens.push_back(s.qo_len(r));
    ss.kv_lens.push_back(s.kv_len(r));
  }
  ss.params = s.params;
  ss.params.mask_mode = MaskMode::none;  // filled below from s
  cs.prefill = ss;
  cs.seed = seed;
  Case t = build_case(cs);
  Side out = *t.prefill;
  out.q = s.q;
  out.params = s.params;
  for (int r = 0; r < s.num_requests(); ++r)
    for (std::int64_t j = 0; j < s.kv_len(r); ++j) {
      const auto [pa, sa] = s.locate(r, j);
      const auto [pb, sb] = out.locate(r, j);
      for (int h = 0; h < Hkv; ++h)
        for (bool v : {false, true}) {
          const std::int64_t src = s.kv.offset(v, pa, sa, h / repeat_kv);
          const std::int64_t dst = out.kv.offset(v, pb, sb, h);
          Tensor& dt = stacked ? *out.kv.kv_stacked : (v ? out.kv.v : out.kv.k);
          const Tensor& st = v ? s.kv.v_tensor() : s.kv.k_tensor();
          for (int d = 0; d < D; ++d) dt.set_bits(dst + d, st.bits(src + d));
        }
    }
  return out;
}

Case base_case(MaskMode mode, int window, PosEncoding pe) {
  CaseRecipe cs;
  cs.num_qo_heads = 4;
  cs.num_kv_heads = 2;
  cs.head_dim = 16;
  cs.dtype_q = DType::bfloat16;
  cs.dtype_kv = DType::float16;
  SideRecipe ss;
  ss.paged = false;
  ss.qo_lens = {11};
  ss.kv_lens = {23};
  ss.params.mask_mode = mode;
  ss.params.window_left = window;
  ss.params.pos_encoding = pe;
  ss.params.logits_soft_cap = pe == PosEncoding::alibi ? 20.0 : 0.0;
  cs.prefill = ss;
  cs.seed = 42;
  return build_case(cs);
}

}  // namespace

TEST_CASE("storage does not matter: NHD == HND, dense == paged, page order, stacked", "[reference]") {
  for (PosEncoding pe : {PosEncoding::none, PosEncoding::rope_llama, PosEncoding::alibi}) {
    Case c = base_case(MaskMode::causal, 6, pe);
    const SideResult want = reference_fast_side(c, SideKind::prefill);
    const SideResult want_naive = reference_naive_side(c, SideKind::prefill);
    CHECK(max_rel_diff(want, want_naive) <= kFastVsNaiveBound);
    struct Variant {
      bool paged;
      Layout layout;
      bool stacked;
      int ps;
      unsigned seed;
    };
    for (Variant v : {Variant{false, Layout::HND, false, 1, 1}, Variant{true, Layout::NHD, false, 5, 2},
                      Variant{true, Layout::HND, false, 16, 3}, Variant{true, Layout::NHD, true, 1, 4},
                      Variant{true, Layout::HND, true, 5, 5}, Variant{true, Layout::HND, true, 5, 6}}) {
      Case d = c;
      d.prefill = restore(c, *c.prefill, v.paged, v.layout, v.stacked, v.ps, v.seed);
      CAPTURE(pos_encoding_name(pe), v.paged, layout_name(v.layout), v.stacked, v.ps, v.seed);
      CHECK(max_rel_diff(reference_fast_side(d, SideKind::prefill), want) <= kSame);
      CHECK(max_rel_diff(reference_naive_side(d, SideKind::prefill), want_naive) == 0.0);
    }
  }
}

TEST_CASE("permuting page ids changes nothing", "[reference]") {
  auto draw = podcheck::testing::random_case(7);
  CaseRecipe cs;
  cs.num_qo_heads = 2;
  cs.num_kv_heads = 1;
  cs.head_dim = 8;
  SideRecipe ss;
  ss.page_size = 3;
  ss.qo_lens = {1, 1, 1, 1};
  ss.kv_lens = {10, 1, 7, 12};
  ss.spare_pages = 5;
  cs.decode = ss;
  Case c = build_case(cs);
  const SideResult want = reference_fast_side(c, SideKind::decode);
  for (unsigned seed : {11u, 12u, 13u}) {
    Case d = c;
    d.decode = restore(c, *c.decode, true, Layout::NHD, false, 3, seed);
    CHECK(d.decode->kv.pages.indices != c.decode->kv.pages.indices);
    CHECK(max_rel_diff(reference_fast_side(d, SideKind::decode), want) == 0.0);
  }
}

TEST_CASE("GQA equals MHA with repeated KV heads", "[reference]") {
  Case c = base_case(MaskMode::none, -1, PosEncoding::rope_llama);
  Case m = c;
  m.num_kv_heads = c.num_qo_heads;
  m.prefill = restore(c, *c.prefill, false, Layout::NHD, false, 1, 0, c.group_size());
  CHECK(max_rel_diff(reference_fast_side(m, SideKind::prefill), reference_fast_side(c, SideKind::prefill)) <= kSame);
  CHECK(max_rel_diff(reference_naive_side(m, SideKind::prefill), reference_naive_side(c, SideKind::prefill)) == 0.0);
}

TEST_CASE("equal keys give the mean of the visible V rows", "[reference]") {
  for (MaskMode mode : {MaskMode::none, MaskMode::causal}) {
    Case c = base_case(mode, mode == MaskMode::causal ? 4 : -1, PosEncoding::none);
    Side& s = *c.prefill;
    const std::int64_t L = s.kv_len(0), Q = s.qo_len(0);
    // Every key of head h equals key 0 of head h.
    for (int h = 0; h < c.num_kv_heads; ++h)
      for (std::int64_t j = 1; j < L; ++j)
        for (int d = 0; d < c.head_dim; ++d)
          s.kv.k.set_bits(s.kv.offset(false, 0, j, h) + d, s.kv.k.bits(s.kv.offset(false, 0, 0, h) + d));
    const SideResult fast = reference_fast_side(c, SideKind::prefill);
    const SideResult naive = reference_naive_side(c, SideKind::prefill);
    double worst = 0.0;
    for (std::int64_t i = 0; i < Q; ++i) {
      const std::int64_t pos = i + L - Q;
      const std::int64_t lo = mode == MaskMode::causal ? std::max<std::int64_t>(0, pos - 4) : 0;
      const std::int64_t hi = mode == MaskMode::causal ? pos + 1 : L;
      for (int h = 0; h < c.num_qo_heads; ++h) {
        const int kvh = h / c.group_size();
        double x = 0.0;
        for (int d = 0; d < c.head_dim; ++d)
          x += s.q.get((i * c.num_qo_heads + h) * c.head_dim + d) * s.kv.k.get(s.kv.offset(false, 0, 0, kvh) + d);
        const double logit = x / std::sqrt(16.0);
        const double lse = (logit + std::log(static_cast<double>(hi - lo))) / std::log(2.0);
        for (const SideResult* r : {&fast, &naive}) {
          worst = std::max(worst, std::fabs(r->lse[i * c.num_qo_heads + h] - lse) / std::max(1.0, std::fabs(lse)));
          for (int d = 0; d < c.head_dim; ++d) {
            double mean = 0.0;
            for (std::int64_t j = lo; j < hi; ++j) mean += s.kv.v.get(s.kv.offset(true, 0, j, kvh) + d);
            mean /= static_cast<double>(hi - lo);
            worst = std::max(worst, std::fabs(r->o(i, h, d) - mean));
          }
        }
      }
    }
    CHECK(worst <= 1e-14);
  }
}

TEST_CASE("a single visible key gives its V row and LSE = logit / ln 2", "[reference]") {
  // Causal with window 0: row i sees exactly key p_i = i + L - Q.
  for (PosEncoding pe : {PosEncoding::none, PosEncoding::alibi}) {
    Case c = base_case(MaskMode::causal, 0, pe);
    c.prefill->params.logits_soft_cap = 0.0;
    const Side& s = *c.prefill;
    const std::int64_t L = s.kv_len(0), Q = s.qo_len(0);
    const auto slopes = default_alibi_slopes(c.num_qo_heads);
    for (const SideResult& r : {reference_fast_side(c, SideKind::prefill), reference_naive_side(c, SideKind::prefill)}) {
      double worst = 0.0;
      for (std::int64_t i = 0; i < Q; ++i) {
        const std::int64_t j = i + L - Q;
        for (int h = 0; h < c.num_qo_heads; ++h) {
          const int kvh = h / c.group_size();
          double x = 0.0;
          for (int d = 0; d < c.head_dim; ++d)
            x += s.q.get((i * c.num_qo_heads + h) * c.head_dim + d) * s.kv.k.get(s.kv.offset(false, 0, j, kvh) + d);
          double logit = x / 4.0;
          if (pe == PosEncoding::alibi) logit += slopes[h] * static_cast<double>(j - i);  // FlashInfer: local row i
          worst = std::max(worst, std::fabs(r.lse[i * c.num_qo_heads + h] - logit / std::log(2.0)));
          for (int d = 0; d < c.head_dim; ++d)
            worst = std::max(worst, std::fabs(r.o(i, h, d) - s.kv.v.get(s.kv.offset(true, 0, j, kvh) + d)));
        }
      }
      CHECK(worst <= 1e-14);
    }
  }
}

TEST_CASE("fully masked rows give 0 and -inf", "[reference]") {
  // Causal with kv_len < qo_len: rows with p_i < 0 see nothing (SPEC §2.3, §3.3).
  CaseRecipe cs;
  cs.num_qo_heads = 2;
  cs.num_kv_heads = 1;
  cs.head_dim = 8;
  SideRecipe ss;
  ss.page_size = 4;
  ss.qo_lens = {6, 3};
  ss.kv_lens = {2, 0};
  ss.params.mask_mode = MaskMode::causal;
  cs.prefill = ss;
  Case c = build_case(cs);
  for (const SideResult& r : {reference_fast_side(c, SideKind::prefill), reference_naive_side(c, SideKind::prefill)}) {
    for (std::int64_t row = 0; row < 9; ++row) {
      const bool empty = row < 4 || row >= 6;  // p_i = i - 4 for request 0; request 1 has no KV
      for (int h = 0; h < 2; ++h) {
        CAPTURE(row, h);
        CHECK(std::isinf(r.lse[row * 2 + h]) == empty);
        if (empty) {
          CHECK(r.lse[row * 2 + h] < 0);
          for (int d = 0; d < 8; ++d) CHECK(r.o(row, h, d) == 0.0);
        }
      }
    }
  }
}

TEST_CASE("longer cases through the shared-KV branch agree with naive", "[reference]") {
  // The fast path shares one KV buffer among blocks when a (request, kv head) has >= 2 blocks per thread:
  // 300 rows in blocks of 64 (group 2) are 5 blocks, enough for 2 threads.
  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(2);
  const MaskMode modes[] = {MaskMode::causal, MaskMode::custom, MaskMode::none, MaskMode::causal};
  const PosEncoding pes[] = {PosEncoding::rope_llama, PosEncoding::none, PosEncoding::alibi, PosEncoding::none};
  for (int t = 0; t < 4; ++t) {
    CaseRecipe cs;
    cs.num_qo_heads = 4;
    cs.num_kv_heads = 2;
    cs.head_dim = 8;
    cs.dtype_kv = t == 3 ? DType::float8_e4m3fn : DType::bfloat16;
    SideRecipe ss;
    ss.paged = t % 2 == 0;
    ss.page_size = 16;
    ss.layout = t == 2 ? Layout::HND : Layout::NHD;
    ss.qo_lens = {300};
    ss.kv_lens = {t == 3 ? 250 : 340};  // t == 3: kv_len < qo_len under causal
    ss.params.mask_mode = modes[t];
    ss.params.pos_encoding = pes[t];
    ss.params.window_left = t == 0 ? 40 : -1;
    ss.params.logits_soft_cap = t == 2 ? 10.0 : 0.0;
    ss.custom_empty_rows = true;
    cs.prefill = ss;
    cs.seed = 100 + t;
    Case c = build_case(cs);
    CAPTURE(t);
    CHECK(max_rel_diff(reference_fast_side(c, SideKind::prefill), reference_naive_side(c, SideKind::prefill)) <= kFastVsNaiveBound);
  }
  omp_set_num_threads(saved_threads);
}

TEST_CASE("the references refuse invalid cases", "[reference]") {
  Case c = base_case(MaskMode::causal, -1, PosEncoding::none);
  c.num_kv_heads = 3;
  CHECK_THROWS_AS(reference_fast(c), InvalidCase);
  CHECK_THROWS_AS(reference_naive(c), InvalidCase);
  Case d = base_case(MaskMode::causal, -1, PosEncoding::none);
  CHECK_THROWS_AS(reference_fast_side(d, SideKind::decode), InvalidCase);
}

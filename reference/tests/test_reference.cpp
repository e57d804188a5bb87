// The fast reference against the naive one (double) over random cases covering every feature, and the naive
// double reference against the same code in 50-digit arithmetic (Boost cpp_bin_float_50) on sampled rows.
#include "reference/naive.hpp"
#include "reference/reference.hpp"
#include "reference/tests/random_case.hpp"
#include "testing/catch.hpp"

#include <boost/multiprecision/cpp_bin_float.hpp>

#include <cstdio>

using namespace podcheck;
using podcheck::testing::random_case;

// The bounds are the reference's own (reference.hpp, the contract in reference/README.md), not kernel tolerances.

TEST_CASE("fast reference equals naive reference on 240 random cases", "[reference]") {
  // Every block kernel of the fast reference: the automatic choice, dgemm only, the streaming kernel only.
  const std::pair<FastPath, const char*> paths[] = {
      {FastPath::automatic, "automatic"}, {FastPath::blas, "dgemm only"}, {FastPath::stream, "streaming only"}};
  double worst[3] = {0.0, 0.0, 0.0};
  int sides = 0, rows = 0, empty_rows = 0;
  for (std::uint64_t seed = 1; seed <= 240; ++seed) {
    auto draw = random_case(seed);
    CAPTURE(seed, draw.summary);
    for (SideKind k : {SideKind::prefill, SideKind::decode}) {
      if (!draw.kase.side(k)) continue;
      const SideResult naive = reference_naive_side(draw.kase, k, draw.sem);
      for (int p = 0; p < 3; ++p) {
        CAPTURE(paths[p].second);
        set_fast_path(paths[p].first);
        const double d = max_rel_diff(reference_fast_side(draw.kase, k, draw.sem), naive);
        CHECK(d <= kFastVsNaiveBound);
        worst[p] = std::max(worst[p], d);
      }
      ++sides;
      rows += static_cast<int>(naive.rows * naive.heads);
      for (double l : naive.lse) empty_rows += std::isinf(l) ? 1 : 0;
    }
  }
  set_fast_path(FastPath::automatic);
  std::printf("fast vs naive: %d sides, %d (row, head) pairs (%d empty), max rel diff %.3g (automatic), %.3g (dgemm "
              "only), %.3g (streaming only)\n",
              sides, rows, empty_rows, worst[0], worst[1], worst[2]);
  CHECK(empty_rows > 0);  // the draw does exercise fully masked rows
}

TEST_CASE("naive double reference agrees with 50-digit arithmetic", "[reference][slow]") {
  using Mp = boost::multiprecision::cpp_bin_float_50;
  double worst = 0.0;
  int checked = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    auto draw = random_case(seed);
    CAPTURE(seed, draw.summary);
    for (SideKind k : {SideKind::prefill, SideKind::decode}) {
      const Side* s = draw.kase.side(k);
      if (!s || s->num_rows() == 0) continue;
      const int D = draw.kase.head_dim;
      for (int sample = 0; sample < 3; ++sample) {
        const std::int64_t row = (seed * 31 + sample * 17) % s->num_rows();
        const int h = static_cast<int>((seed + sample) % draw.kase.num_qo_heads);
        std::vector<double> od(D);
        double ld;
        reference_naive_row<double>(draw.kase, k, row, h, draw.sem, od.data(), ld);
        std::vector<Mp> om(D);
        Mp lm;
        reference_naive_row<Mp>(draw.kase, k, row, h, draw.sem, om.data(), lm);
        std::vector<double> omd(D);
        for (int d = 0; d < D; ++d) omd[d] = om[d].convert_to<double>();
        const double diff = row_rel_diff(od.data(), ld, omd.data(), lm.convert_to<double>(), D);
        CHECK(diff <= kDoubleVsMultiprecisionBound);
        worst = std::max(worst, diff);
        ++checked;
      }
    }
  }
  std::printf("naive double vs cpp_bin_float_50: %d sampled (row, head) pairs, max rel diff %.3g\n", checked, worst);
  CHECK(checked > 100);
}

TEST_CASE("min_bytes counts each visible key once, Q, and the float64 outputs", "[reference]") {
        CaseRecipe cs;
  cs.num_qo_heads = 4;
  cs.num_kv_heads = 2;
  cs.head_dim = 16;
  cs.dtype_q = cs.dtype_kv = DType::float16;
  SideRecipe dec;
  dec.qo_lens = {1, 1};
  dec.kv_lens = {10, 7};
  cs.decode = dec;
  // Prefill: 4 rows at positions 6..9 of 10 keys, causal, window 1: rows see [5,7), [6,8), [7,9), [8,10).
  SideRecipe pre;
  pre.qo_lens = {4};
  pre.kv_lens = {10};
  pre.params.mask_mode = MaskMode::causal;
  pre.params.window_left = 1;
  cs.prefill = pre;
  const Case c = build_case(cs);
  // keys * H_kv * D * (2 + 2 bytes) + rows * H * D * 2 bytes + rows * H * (D + 1) * 8 bytes
  CHECK(min_bytes(c, SideKind::decode) == 17 * 2 * 16 * 4 + 2 * 4 * 16 * 2 + 2 * 4 * 17 * 8);
  CHECK(min_bytes(c, SideKind::prefill) == 5 * 2 * 16 * 4 + 4 * 4 * 16 * 2 + 4 * 4 * 17 * 8);
}

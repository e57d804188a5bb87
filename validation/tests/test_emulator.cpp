// The kernel-precision emulator against independent truth: podcheck's exact RNE conversions (dtype.hpp),
// an analytic case (equal keys: softmax uniform, output = mean of V, exact in float for small integers),
// and the reference (the emulator's error is real rounding error: non-zero, and small).
#include "testing/catch.hpp"

#include "validation/emulator.hpp"
#include "validation/tests/helpers.hpp"

#include <cmath>
#include <random>

using namespace podcheck;
using namespace podcheck::validation;

TEST_CASE("float rounding to 16-bit matches podcheck's exact RNE encode", "[validation][emulator]") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  std::uniform_int_distribution<int> ex(-26, 15);
  for (DType t : {DType::float16, DType::bfloat16}) {
    for (int i = 0; i < 20000; ++i) {
      const float x = static_cast<float>(std::ldexp(mant(rng), ex(rng)) * (i % 2 ? -1 : 1));
      CAPTURE(dtype_name(t), x);
      REQUIRE(static_cast<double>(round_float_to(t, x)) == round_to(t, static_cast<double>(x)));
    }
  }
}

TEST_CASE("equal keys: emulated output is exactly the mean of V, LSE exactly log2(L) + logit", "[validation][emulator]") {
  // Prefill-only, one request of 1 row over L = 64 keys, K all equal, V small integers.
  Case c;
  c.id = "analytic";
  c.num_qo_heads = c.num_kv_heads = 1;
  c.head_dim = 16;
  const int L = 64, D = 16;
  Side s;
  s.qo_indptr = {0, 1};
  std::vector<double> q(D, 0.0), k(L * D, 0.0), v(L * D);
  for (int j = 0; j < L; ++j)
    for (int d = 0; d < D; ++d) v[j * D + d] = static_cast<double>((j * 7 + d * 3) % 9) - 4.0;
  s.q = Tensor::from_doubles(DType::float16, {1, 1, D}, q);
  s.kv.k = Tensor::from_doubles(DType::float16, {L, 1, D}, k);
  s.kv.v = Tensor::from_doubles(DType::float16, {L, 1, D}, v);
  c.prefill = s;
  const SideResult e = emulate_side(c, SideKind::prefill);
  for (int d = 0; d < D; ++d) {
    double mean = 0;
    for (int j = 0; j < L; ++j) mean += v[j * D + d];
    CHECK(e.out[d] == round_to(DType::float16, mean / L));
  }
  CHECK(e.lse[0] == std::log2(static_cast<double>(L)));
}

TEST_CASE("emulated error is real rounding error: non-zero, far below the output scale", "[validation][emulator]") {
  for (DType dt : {DType::float16, DType::bfloat16}) {
    testhelp::PodSpec spec;
    spec.dtype = dt;
    spec.kv_d = {40, 700, 1100};  // long enough for split-KV partials
    const Case c = testhelp::make_pod(spec);
    const PodResult ref = reference_fast(c);
    const PodResult emu = emulate(c);
    for (SideKind k : {SideKind::prefill, SideKind::decode}) {
      const SideResult& r = *ref.side(k);
      const SideResult& e = *emu.side(k);
      double err2 = 0, ref2 = 0;
      for (std::size_t i = 0; i < r.out.size(); ++i) {
        err2 += (e.out[i] - r.out[i]) * (e.out[i] - r.out[i]);
        ref2 += r.out[i] * r.out[i];
      }
      const double rel = std::sqrt(err2 / ref2);
      // At least half an output ULP of relative error on average (the final rounding alone), and no more
      // than 64 ULPs (an emulator bug such as a dropped rescale gives O(1)).
      const double u = dtype_ulp(dt, 1.0);
      CAPTURE(dtype_name(dt), side_name(k), rel);
      CHECK(rel > 0.05 * u);
      CHECK(rel < 64 * u);
    }
  }
}

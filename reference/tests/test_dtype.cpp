// dtype decode/encode checked over every bit pattern against an independent formula, the compiler's
// _Float16 and float conversions, and hand-picked round-to-nearest-even ties.
#include "reference/dtype.hpp"
#include "reference/tensor.hpp"
#include "testing/catch.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace podcheck;

namespace {

// (-1)^s 2^(e-bias) (1 + m/2^k) for normals, (-1)^s 2^(1-bias) (m/2^k) for subnormals, written with pow
// (not ldexp) so that it shares nothing with the library code.
double formula(std::uint32_t bits, int ebits, int mbits, int bias) {
  const std::uint32_t s = bits >> (ebits + mbits);
  const std::uint32_t e = (bits >> mbits) & ((1u << ebits) - 1u);
  const std::uint32_t m = bits & ((1u << mbits) - 1u);
  const double frac = static_cast<double>(m) / std::pow(2.0, mbits);
  const double mag = e == 0 ? std::pow(2.0, 1 - bias) * frac : std::pow(2.0, static_cast<int>(e) - bias) * (1.0 + frac);
  return s ? -mag : mag;
}

struct Fmt {
  DType t;
  int ebits, mbits, bias;
};

bool is_special(const Fmt& f, std::uint32_t b, bool* is_inf) {
  const std::uint32_t e = (b >> f.mbits) & ((1u << f.ebits) - 1u);
  const std::uint32_t m = b & ((1u << f.mbits) - 1u);
  *is_inf = false;
  if (f.t == DType::float8_e4m3fn) return e == 15 && m == 7;  // NaN only
  if (e == (1u << f.ebits) - 1u) {
    *is_inf = m == 0;
    return true;
  }
  return false;
}

void check_all_patterns(const Fmt& f) {
  const std::uint32_t n = 1u << (1 + f.ebits + f.mbits);
  std::uint32_t mismatches = 0, roundtrip_fail = 0, nan_count = 0, inf_count = 0;
  for (std::uint32_t b = 0; b < n; ++b) {
    const double d = decode_bits(f.t, b);
    bool inf = false;
    if (is_special(f, b, &inf)) {
      if (inf) {
        ++inf_count;
        if (!(std::isinf(d) && std::signbit(d) == bool(b >> (f.ebits + f.mbits)))) ++mismatches;
      } else {
        ++nan_count;
        if (!std::isnan(d)) ++mismatches;
      }
      continue;
    }
    const double want = formula(b, f.ebits, f.mbits, f.bias);
    if (!(d == want && std::signbit(d) == std::signbit(want))) ++mismatches;
    if (encode_bits(f.t, d, Fp8Overflow::saturate) != b) ++roundtrip_fail;
    if (encode_bits(f.t, d, Fp8Overflow::nan) != b) ++roundtrip_fail;
  }
  CAPTURE(dtype_name(f.t));
  CHECK(mismatches == 0);
  CHECK(roundtrip_fail == 0);
  if (f.t == DType::float8_e4m3fn) {
    CHECK(nan_count == 2);
    CHECK(inf_count == 0);
  } else {
    CHECK(inf_count == 2);
    CHECK(nan_count == 2 * ((1u << f.mbits) - 1u));
  }
}

}  // namespace

TEST_CASE("every float16/bfloat16/fp8 bit pattern decodes to the formula and round-trips", "[reference][dtype]") {
  check_all_patterns({DType::float16, 5, 10, 15});
  check_all_patterns({DType::bfloat16, 8, 7, 127});
  check_all_patterns({DType::float8_e4m3fn, 4, 3, 7});
  check_all_patterns({DType::float8_e5m2, 5, 2, 15});
}

TEST_CASE("bfloat16 is the top half of float32; float32 matches the compiler", "[reference][dtype]") {
  std::uint32_t bad = 0;
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const std::uint32_t fbits = b << 16;
    float f;
    std::memcpy(&f, &fbits, 4);
    const double d = decode_bits(DType::bfloat16, b);
    if (std::isnan(f) ? !std::isnan(d) : d != static_cast<double>(f)) ++bad;
    if (std::isnan(f) ? !std::isnan(decode_bits(DType::float32, fbits))
                      : decode_bits(DType::float32, fbits) != static_cast<double>(f))
      ++bad;
  }
  CHECK(bad == 0);
  // float32 encode agrees with the hardware double->float conversion (round to nearest even).
  std::uint64_t state = 12345;
  std::uint32_t enc_bad = 0;
  for (int i = 0; i < 200000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    double x;
    std::uint64_t raw = (state >> 1) & 0x7FFFFFFFFFFFFFFFull;
    // exponents limited to float32's range and a little beyond (overflow and subnormals)
    raw = (raw & 0x800FFFFFFFFFFFFFull) | (static_cast<std::uint64_t>(1023 - 160 + (state >> 40) % 300) << 52);
    std::memcpy(&x, &raw, 8);
    if (state & 1) x = -x;
    const float f = static_cast<float>(x);
    std::uint32_t fb;
    std::memcpy(&fb, &f, 4);
    if (encode_bits(DType::float32, x) != fb) ++enc_bad;
  }
  CHECK(enc_bad == 0);
}

#if defined(__FLT16_MAX__)
TEST_CASE("float16 agrees with the compiler's _Float16 on decode and on encode", "[reference][dtype]") {
  std::uint32_t bad = 0;
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto u = static_cast<std::uint16_t>(b);
    _Float16 h;
    std::memcpy(&h, &u, 2);
    const double want = static_cast<double>(h);
    const double d = decode_bits(DType::float16, b);
    if (std::isnan(want) ? !std::isnan(d) : d != want) ++bad;
  }
  CHECK(bad == 0);
  std::uint64_t state = 99;
  std::uint32_t enc_bad = 0;
  for (int i = 0; i < 200000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double x = std::ldexp(static_cast<double>(state >> 11) / 9007199254740992.0, int((state >> 3) % 50) - 30) *
                     ((state & 4) ? -1 : 1);
    const _Float16 h = static_cast<_Float16>(x);
    std::uint16_t u;
    std::memcpy(&u, &h, 2);
    if (encode_bits(DType::float16, x) != u) ++enc_bad;
  }
  CHECK(enc_bad == 0);
}
#endif

TEST_CASE("round-to-nearest-even ties and overflow conventions", "[reference][dtype]") {
  // float16: 1 + 2^-11 is halfway between 1 and 1+2^-10 -> even (1.0); 1 + 3*2^-11 -> 1 + 2^-9.
  CHECK(encode_bits(DType::float16, 1.0 + std::ldexp(1.0, -11)) == 0x3C00u);
  CHECK(encode_bits(DType::float16, 1.0 + 3 * std::ldexp(1.0, -11)) == 0x3C02u);
  CHECK(encode_bits(DType::float16, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30)) == 0x3C01u);
  CHECK(encode_bits(DType::float16, 65504.0) == 0x7BFFu);
  CHECK(encode_bits(DType::float16, 65519.99) == 0x7BFFu);
  CHECK(encode_bits(DType::float16, 65520.0) == 0x7C00u);  // tie at max + ulp/2 -> Inf
  CHECK(encode_bits(DType::float16, std::ldexp(1.0, -25)) == 0x0000u);  // tie with 0 -> 0
  CHECK(encode_bits(DType::float16, std::ldexp(3.0, -25)) == 0x0002u);  // 1.5 quanta -> 2
  CHECK(encode_bits(DType::float16, -0.0) == 0x8000u);
  // bfloat16: 1 + 2^-8 -> 1.0; 1 + 3*2^-8 -> 1 + 2^-6.
  CHECK(encode_bits(DType::bfloat16, 1.0 + std::ldexp(1.0, -8)) == 0x3F80u);
  CHECK(encode_bits(DType::bfloat16, 1.0 + 3 * std::ldexp(1.0, -8)) == 0x3F82u);
  // e4m3fn: max 448 (0x7E); 464 is the tie between 448 and the (NaN) 480 -> even 448; 470 overflows.
  CHECK(dtype_max_finite(DType::float8_e4m3fn) == 448.0);
  CHECK(encode_bits(DType::float8_e4m3fn, 464.0, Fp8Overflow::nan) == 0x7Eu);
  CHECK(encode_bits(DType::float8_e4m3fn, 470.0, Fp8Overflow::nan) == 0x7Fu);
  CHECK(encode_bits(DType::float8_e4m3fn, -470.0, Fp8Overflow::nan) == 0xFFu);
  CHECK(encode_bits(DType::float8_e4m3fn, 470.0, Fp8Overflow::saturate) == 0x7Eu);
  CHECK(encode_bits(DType::float8_e4m3fn, -1e9, Fp8Overflow::saturate) == 0xFEu);
  CHECK(encode_bits(DType::float8_e4m3fn, 1.0 + 1.0 / 16) == 0x38u);  // tie 1 vs 1.125 -> 1
  CHECK(encode_bits(DType::float8_e4m3fn, 1.0 + 3.0 / 16) == 0x3Au);  // tie 1.125 vs 1.25 -> 1.25
  CHECK(encode_bits(DType::float8_e4m3fn, std::ldexp(1.0, -10)) == 0x00u);  // half the smallest subnormal
  CHECK(encode_bits(DType::float8_e4m3fn, std::ldexp(3.0, -10)) == 0x02u);
  // e5m2: max 57344; 61440 is the tie with 65536 -> Inf (nan mode) or max (saturate).
  CHECK(dtype_max_finite(DType::float8_e5m2) == 57344.0);
  CHECK(encode_bits(DType::float8_e5m2, 61440.0, Fp8Overflow::nan) == 0x7Cu);
  CHECK(encode_bits(DType::float8_e5m2, 61439.0, Fp8Overflow::nan) == 0x7Bu);
  CHECK(encode_bits(DType::float8_e5m2, 61440.0, Fp8Overflow::saturate) == 0x7Bu);
  CHECK(encode_bits(DType::float8_e5m2, -std::numeric_limits<double>::infinity(), Fp8Overflow::nan) == 0xFCu);
  CHECK(std::isnan(decode_bits(DType::float8_e5m2, encode_bits(DType::float8_e5m2, std::nan("")))));
  CHECK(std::isnan(decode_bits(DType::float8_e4m3fn, encode_bits(DType::float8_e4m3fn, std::nan("")))));
}

namespace {
// Nearest-even rounding found by search, independent of the encoder's bit arithmetic: the non-negative
// finite values of the format in ascending order (decoded, which the test above checks against the formula),
// plus one virtual value past the largest (spacing of the top binade) that stands for overflow. A value is
// rounded to the nearer neighbour; at the exact midpoint to the one with even bits.
struct Grid {
  std::vector<double> value;
  std::vector<std::uint32_t> bits;  // bits.back() = largest finite bits + 1: the overflow marker
};
Grid make_grid(DType t, int total_bits) {
  std::vector<std::pair<double, std::uint32_t>> v;
  for (std::uint32_t b = 0; b < (1u << (total_bits - 1)); ++b) {
    const double d = decode_bits(t, b);
    if (std::isfinite(d)) v.push_back({d, b});
  }
  std::sort(v.begin(), v.end());
  Grid g;
  for (auto& [d, b] : v) {
    g.value.push_back(d);
    g.bits.push_back(b);
  }
  const std::size_t n = g.value.size();
  g.value.push_back(2 * g.value[n - 1] - g.value[n - 2]);
  g.bits.push_back(g.bits[n - 1] + 1);
  return g;
}
std::uint32_t expected_bits(DType t, const Grid& g, int total_bits, double x, Fp8Overflow ov) {
  const std::uint32_t sign = std::signbit(x) ? 1u << (total_bits - 1) : 0u;
  const double a = std::fabs(x);
  std::uint32_t b;
  if (a >= g.value.back()) {
    b = g.bits.back();
  } else {
    const std::size_t hi = std::upper_bound(g.value.begin(), g.value.end(), a) - g.value.begin();
    const std::size_t lo = hi - 1;
    const double mid = (g.value[lo] + g.value[hi]) / 2;  // exact: at most 12 significant bits apart
    b = a < mid ? g.bits[lo] : a > mid ? g.bits[hi] : (g.bits[lo] % 2 == 0 ? g.bits[lo] : g.bits[hi]);
  }
  if (b != g.bits.back()) return sign | b;
  // overflow conventions (dtype.hpp): fp8 saturate -> largest finite; else Inf, or NaN for e4m3fn
  if (is_float8(t) && ov == Fp8Overflow::saturate) return sign | (b - 1);
  if (t == DType::float8_e4m3fn) return sign | 0x7Fu;
  return sign | b;  // IEEE formats: largest finite + 1 is the Inf pattern
}
}  // namespace

TEST_CASE("encoding matches nearest-even search on every midpoint, neighbour and random double", "[reference][dtype]") {
  const std::pair<DType, int> formats[] = {{DType::float16, 16}, {DType::bfloat16, 16}, {DType::float8_e4m3fn, 8},
                                           {DType::float8_e5m2, 8}};
  for (const auto& [t, nbits] : formats) {
    CAPTURE(dtype_name(t));
    const Grid g = make_grid(t, nbits);
    std::vector<double> xs;
    for (std::size_t i = 0; i + 1 < g.value.size(); ++i) {
      const double mid = (g.value[i] + g.value[i + 1]) / 2;
      for (double p : {g.value[i], mid}) {
        xs.push_back(p);
        xs.push_back(std::nextafter(p, 0.0));
        xs.push_back(std::nextafter(p, 1e300));
      }
    }
    xs.push_back(g.value.back());
    xs.push_back(std::nextafter(g.value.back(), 0.0));
    xs.push_back(1e300);
    xs.push_back(std::numeric_limits<double>::infinity());
    xs.push_back(std::numeric_limits<double>::denorm_min());
    xs.push_back(std::numeric_limits<double>::min());
    std::uint64_t state = 99;
    for (int i = 0; i < 300000; ++i) {  // random significands, exponents from far below to above the range
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      std::uint64_t raw = (state >> 12) | (static_cast<std::uint64_t>(1023 - 150 + (state >> 52) % 170) << 52);
      double x;
      std::memcpy(&x, &raw, 8);
      xs.push_back(x);
    }
    std::size_t bad = 0, checked = 0;
    for (double x : xs)
      for (double sx : {x, -x})
        for (Fp8Overflow ov : {Fp8Overflow::saturate, Fp8Overflow::nan}) {
          ++checked;
          const std::uint32_t got = encode_bits(t, sx, ov), want = expected_bits(t, g, nbits, sx, ov);
          if (got != want && bad++ < 5) {
            CAPTURE(sx, got, want);
            CHECK(got == want);
          }
        }
    CHECK(bad == 0);
    CHECK(checked > 1000000);
  }
}

TEST_CASE("dtype_ulp and dtype_max_finite", "[reference][dtype]") {
  CHECK(dtype_max_finite(DType::float16) == 65504.0);
  CHECK(dtype_max_finite(DType::bfloat16) == 3.3895313892515355e38);
  CHECK(dtype_max_finite(DType::float32) == static_cast<double>(std::numeric_limits<float>::max()));
  CHECK(dtype_ulp(DType::float16, 1.0) == std::ldexp(1.0, -10));
  CHECK(dtype_ulp(DType::float16, 1.5) == std::ldexp(1.0, -10));
  CHECK(dtype_ulp(DType::float16, 0.0) == std::ldexp(1.0, -24));
  CHECK(dtype_ulp(DType::bfloat16, 3.0) == std::ldexp(1.0, -6));
  CHECK(dtype_ulp(DType::float8_e4m3fn, 448.0) == 32.0);
  CHECK(dtype_ulp(DType::float8_e5m2, 1.0) == 0.25);
  CHECK(dtype_ulp(DType::float32, 1.0) == static_cast<double>(std::numeric_limits<float>::epsilon()));
  // ulp is the gap to the next representable value, for every finite positive fp16 below the max.
  std::uint32_t bad = 0;
  for (std::uint32_t b = 0; b < 0x7BFFu; ++b) {
    const double x = decode_bits(DType::float16, b);
    if (decode_bits(DType::float16, b + 1) - x != dtype_ulp(DType::float16, x)) ++bad;
  }
  CHECK(bad == 0);
}

TEST_CASE("Tensor stores bits and decodes them exactly", "[reference][dtype]") {
  Tensor t = Tensor::from_doubles(DType::bfloat16, {2, 3}, {1, -2, 0.5, 3.0 + 1.0 / 256, 1e30, -0.0});
  CHECK(t.shape_string() == "[2, 3]");
  CHECK(t.bytes.size() == 12);
  CHECK(t.get(1) == -2.0);
  CHECK(t.get(3) == 3.0);  // tie 3 vs 3+1/64 -> even
  CHECK(t.bits(5) == 0x8000u);
  const double* table = decode_table(DType::float16);
  REQUIRE(table != nullptr);
  CHECK(table[0x3C00] == 1.0);
  CHECK(decode_table(DType::float32) == nullptr);
  Tensor i = Tensor::from_doubles(DType::int32, {2}, {-7, 123456});
  CHECK(i.get(0) == -7.0);
  CHECK(i.get(1) == 123456.0);
  CHECK_THROWS_AS(Tensor::from_doubles(DType::float16, {2}, {1.0}), std::invalid_argument);
  std::string msg;
  try {
    dtype_from_name("fp17");
  } catch (const std::invalid_argument& e) {
    msg = e.what();
  }
  CHECK(msg.find("unknown dtype 'fp17'") != std::string::npos);
}

// Exact decode and round-to-nearest-even encode of the storage dtypes (reference/dtype.hpp).
//
// Every binary float format here is described by (exponent bits, mantissa bits, bias) plus how its top
// exponent is used: IEEE (Inf and NaN), or e4m3fn's "fn" convention (no Inf; only all-ones is NaN).
// Encoding rounds to nearest even with integer arithmetic on the double's significand (encode_format); the
// tests check it against an independent scalbn/nearbyint formula on every tie and boundary of each format.
#include "reference/dtype.hpp"

#include "reference/names.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace podcheck {
namespace {

struct FloatFormat {
  int ebits;
  int mbits;
  int bias;
  bool ieee_top;             // top exponent reserved for Inf/NaN (false: e4m3fn, only all-ones mantissa is NaN)
  std::uint32_t nan_bits;    // canonical quiet NaN
  int max_exp;               // unbiased exponent of the largest finite value
  std::uint32_t max_mant;    // mantissa field of the largest finite value
};

constexpr FloatFormat kF16{5, 10, 15, true, 0x7E00u, 15, 0x3FFu};
constexpr FloatFormat kBF16{8, 7, 127, true, 0x7FC0u, 127, 0x7Fu};
constexpr FloatFormat kE4M3{4, 3, 7, false, 0x7Fu, 8, 0x6u};
constexpr FloatFormat kE5M2{5, 2, 15, true, 0x7Eu, 15, 0x3u};
constexpr FloatFormat kF32{8, 23, 127, true, 0x7FC00000u, 127, 0x7FFFFFu};

const FloatFormat* format_of(DType t) {
  switch (t) {
    case DType::float16: return &kF16;
    case DType::bfloat16: return &kBF16;
    case DType::float8_e4m3fn: return &kE4M3;
    case DType::float8_e5m2: return &kE5M2;
    case DType::float32: return &kF32;
    default: return nullptr;
  }
}

double max_finite_of(const FloatFormat& f) {
  return std::ldexp(1.0 + std::ldexp(static_cast<double>(f.max_mant), -f.mbits), f.max_exp);
}

double decode_format(const FloatFormat& f, std::uint32_t bits) {
  const std::uint32_t mmask = (1u << f.mbits) - 1u;
  const std::uint32_t emask = (1u << f.ebits) - 1u;
  const bool neg = (bits >> (f.ebits + f.mbits)) & 1u;
  const std::uint32_t e = (bits >> f.mbits) & emask;
  const std::uint32_t m = bits & mmask;
  double v;
  if (f.ieee_top && e == emask) {
    v = m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (!f.ieee_top && e == emask && m == mmask) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - f.bias - f.mbits);
  } else {
    v = std::ldexp(static_cast<double>(m | (1u << f.mbits)), static_cast<int>(e) - f.bias - f.mbits);
  }
  return neg ? -v : v;
}

// Round-to-nearest-even on the double's bits: |x| = M 2^(E-52) with the 53-bit significand M; the target's
// quantum at x's exponent (never below its subnormal exponent) is 2^qe; r = RNE(M 2^(E-52-qe)) by an integer
// shift with the remainder compared to half. No libm calls and no floating-point rounding mode involved:
// this runs once per generated input element, and the generator makes gigabytes of them.
std::uint32_t encode_format(const FloatFormat& f, double x, bool fp8, Fp8Overflow overflow) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  const bool neg = bits >> 63;
  const std::uint32_t sign = neg ? (1u << (f.ebits + f.mbits)) : 0u;
  const std::uint64_t abs_bits = bits & 0x7FFFFFFFFFFFFFFFull;
  const int raw_exp = static_cast<int>(abs_bits >> 52);
  auto overflowed = [&]() -> std::uint32_t {
    if (fp8 && overflow == Fp8Overflow::saturate)
      return sign | (static_cast<std::uint32_t>(f.max_exp + f.bias) << f.mbits) | f.max_mant;
    if (f.ieee_top) return sign | (((1u << f.ebits) - 1u) << f.mbits);
    return sign | f.nan_bits;  // e4m3fn: NaN keeps the sign (0x7F / 0xFF)
  };
  if (raw_exp == 0x7FF) return (abs_bits & 0xFFFFFFFFFFFFFull) ? f.nan_bits : overflowed();
  // zero, and double subnormals (< 2^-1022: far below half of any target's smallest subnormal)
  if (raw_exp == 0) return sign;
  const int e = raw_exp - 1023;
  const std::uint64_t m = (abs_bits & 0xFFFFFFFFFFFFFull) | (1ull << 52);
  const int emin = 1 - f.bias;
  int et = e > emin ? e : emin;                  // exponent of the target quantum's binade
  const int shift = et - f.mbits - (e - 52);     // >= 52 - mbits > 0
  if (shift > 54) return sign;                   // |x| < quantum / 4: rounds to zero
  std::uint64_t r = m >> shift;
  const std::uint64_t rem = m & ((1ull << shift) - 1ull), half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (r & 1ull))) ++r;
  const std::uint64_t hidden = 1ull << f.mbits;
  if (r < hidden) return sign | static_cast<std::uint32_t>(r);  // subnormal (or zero) in the target
  if (r == 2 * hidden) {                          // rounding carried into the next binade
    r = hidden;
    ++et;
  }
  const std::uint32_t mant = static_cast<std::uint32_t>(r - hidden);
  if (et > f.max_exp || (et == f.max_exp && mant > f.max_mant)) return overflowed();
  return sign | (static_cast<std::uint32_t>(et + f.bias) << f.mbits) | mant;
}

}  // namespace

namespace {

constexpr NameTable<DType, 8> kDTypes{"dtype",
                                      {{{DType::float16, "float16"},
                                        {DType::bfloat16, "bfloat16"},
                                        {DType::float8_e4m3fn, "float8_e4m3fn"},
                                        {DType::float8_e5m2, "float8_e5m2"},
                                        {DType::float32, "float32"},
                                        {DType::float64, "float64"},
                                        {DType::int32, "int32"},
                                        {DType::uint8, "uint8"}}}};
constexpr NameTable<Fp8Overflow, 2> kFp8Overflows{
    "fp8 overflow convention", {{{Fp8Overflow::saturate, "saturate"}, {Fp8Overflow::nan, "nan"}}}};

}  // namespace

std::string_view dtype_name(DType t) { return kDTypes.name(t); }
DType dtype_from_name(std::string_view name) { return kDTypes.parse(name); }

bool is_float8(DType t) { return t == DType::float8_e4m3fn || t == DType::float8_e5m2; }
bool is_16bit_float(DType t) { return t == DType::float16 || t == DType::bfloat16; }

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::float8_e4m3fn:
    case DType::float8_e5m2:
    case DType::uint8: return 1;
    case DType::float16:
    case DType::bfloat16: return 2;
    case DType::float32:
    case DType::int32: return 4;
    case DType::float64: return 8;
  }
  return 0;
}

std::string_view fp8_overflow_name(Fp8Overflow m) { return kFp8Overflows.name(m); }
Fp8Overflow fp8_overflow_from_name(std::string_view name) { return kFp8Overflows.parse(name); }

double decode_bits(DType t, std::uint32_t bits) {
  if (const FloatFormat* f = format_of(t)) {
    const int width = static_cast<int>(dtype_size(t)) * 8;
    if (width < 32) bits &= (1u << width) - 1u;
    return decode_format(*f, bits);
  }
  if (t == DType::int32) return static_cast<double>(static_cast<std::int32_t>(bits));
  if (t == DType::uint8) return static_cast<double>(bits & 0xFFu);
  throw std::invalid_argument("decode_bits: float64 has no 32-bit storage; use the double directly");
}

std::uint32_t encode_bits(DType t, double value, Fp8Overflow overflow) {
  if (const FloatFormat* f = format_of(t)) return encode_format(*f, value, is_float8(t), overflow);
  if (t == DType::int32) {
    if (!(value >= -2147483648.0 && value <= 2147483647.0) || value != std::floor(value))
      throw std::invalid_argument("encode_bits: " + std::to_string(value) + " is not an int32");
    return static_cast<std::uint32_t>(static_cast<std::int32_t>(value));
  }
  if (t == DType::uint8) {
    if (!(value >= 0.0 && value <= 255.0) || value != std::floor(value))
      throw std::invalid_argument("encode_bits: " + std::to_string(value) + " is not a uint8");
    return static_cast<std::uint32_t>(value);
  }
  throw std::invalid_argument("encode_bits: float64 has no 32-bit storage; use the double directly");
}

const double* decode_table(DType t) {
  static const std::vector<double> f16 = [] {
    std::vector<double> v(65536);
    for (std::uint32_t b = 0; b < 65536; ++b) v[b] = decode_format(kF16, b);
    return v;
  }();
  static const std::vector<double> bf16 = [] {
    std::vector<double> v(65536);
    for (std::uint32_t b = 0; b < 65536; ++b) v[b] = decode_format(kBF16, b);
    return v;
  }();
  static const std::vector<double> e4m3 = [] {
    std::vector<double> v(256);
    for (std::uint32_t b = 0; b < 256; ++b) v[b] = decode_format(kE4M3, b);
    return v;
  }();
  static const std::vector<double> e5m2 = [] {
    std::vector<double> v(256);
    for (std::uint32_t b = 0; b < 256; ++b) v[b] = decode_format(kE5M2, b);
    return v;
  }();
  switch (t) {
    case DType::float16: return f16.data();
    case DType::bfloat16: return bf16.data();
    case DType::float8_e4m3fn: return e4m3.data();
    case DType::float8_e5m2: return e5m2.data();
    default: return nullptr;
  }
}

double round_to(DType t, double value, Fp8Overflow overflow) {
  if (t == DType::float64) return value;
  return decode_bits(t, encode_bits(t, value, overflow));
}

double dtype_max_finite(DType t) {
  if (const FloatFormat* f = format_of(t)) return max_finite_of(*f);
  switch (t) {
    case DType::float64: return std::numeric_limits<double>::max();
    case DType::int32: return 2147483647.0;
    case DType::uint8: return 255.0;
    default: return 0.0;
  }
}

double dtype_ulp(DType t, double x) {
  const double a = std::fabs(x);
  int mbits, emin;
  if (const FloatFormat* f = format_of(t)) {
    mbits = f->mbits;
    emin = 1 - f->bias;
  } else if (t == DType::float64) {
    mbits = 52;
    emin = -1022;
  } else {
    return 1.0;  // integers
  }
  if (!std::isfinite(a)) return std::numeric_limits<double>::quiet_NaN();
  const int e = a == 0.0 ? emin : std::max(std::ilogb(a), emin);
  return std::ldexp(1.0, e - mbits);
}

}  // namespace podcheck

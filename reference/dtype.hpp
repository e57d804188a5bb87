// Storage dtypes of the POD problem model and their exact conversions to and from double.
//
// Decoding (storage bits -> double) is exact for every dtype: fp16, bf16, e4m3fn, e5m2 and fp32 are all
// subsets of binary64. Encoding (double -> storage bits) rounds to nearest, ties to even. FP8 encode
// offers both overflow conventions used in the ecosystem: saturating to the largest finite value
// (FlashInfer's __NV_SATFINITE quantizers) and NaN on overflow (PyTorch's .to(float8_e4m3fn)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace podcheck {

// Logical element types, named as the ecosystem (PyTorch, h5py attributes) names them.
enum class DType : std::uint8_t {
  float16,
  bfloat16,
  float8_e4m3fn,
  float8_e5m2,
  float32,
  float64,
  int32,
  uint8,
};

enum class Fp8Overflow : std::uint8_t {
  saturate,  // |x| beyond the largest finite value -> +-max finite
  nan,       // -> NaN (e4m3fn has no Inf); e5m2 -> +-Inf per IEEE, as PyTorch does
};

std::string_view dtype_name(DType t);
// Throws std::invalid_argument("unknown dtype 'xyz' (expected one of ...)").
DType dtype_from_name(std::string_view name);
bool is_float8(DType t);
bool is_16bit_float(DType t);
std::size_t dtype_size(DType t);  // bytes per element

std::string_view fp8_overflow_name(Fp8Overflow m);
Fp8Overflow fp8_overflow_from_name(std::string_view name);

// bits holds the element's storage bits in its low dtype_size(t)*8 bits (float64 is not accepted here;
// use the double directly). int32 and uint8 decode as integers.
double decode_bits(DType t, std::uint32_t bits);
std::uint32_t encode_bits(DType t, double value, Fp8Overflow overflow = Fp8Overflow::saturate);

// Decode table of an 8- or 16-bit float dtype (256 or 65536 doubles, indexed by the storage bits), built
// once from decode_bits; nullptr for other dtypes. For bulk decoding (the reference's gathers).
const double* decode_table(DType t);

// Round a double to the nearest value representable in t (encode then decode).
double round_to(DType t, double value, Fp8Overflow overflow = Fp8Overflow::saturate);

// Largest finite value and unit in the last place at x (spacing of representable values at |x|).
double dtype_max_finite(DType t);
double dtype_ulp(DType t, double x);

}  // namespace podcheck

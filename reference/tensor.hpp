// A tensor as the problem model holds it: logical dtype, row-major shape, raw storage bytes.
// Inputs keep their storage bits so that fixtures, traces and kernels see exactly the same bytes;
// the reference decodes them to double (exactly) before any arithmetic.
#pragma once

#include "reference/dtype.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace podcheck {

struct Tensor {
  DType dtype = DType::float32;
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> bytes;  // little-endian elements, row-major, numel()*dtype_size(dtype)

  static Tensor zeros(DType dtype, std::vector<std::int64_t> shape);
  // Encodes every value with round-to-nearest-even (fp8: with the given overflow convention).
  static Tensor from_doubles(DType dtype, std::vector<std::int64_t> shape, const std::vector<double>& v,
                             Fp8Overflow overflow = Fp8Overflow::saturate);

  std::int64_t numel() const;
  bool empty() const { return numel() == 0; }
  std::uint32_t bits(std::int64_t flat) const;  // not for float64
  void set_bits(std::int64_t flat, std::uint32_t bits);
  double get(std::int64_t flat) const;  // exact decode (float64, int32, uint8 included)
  void set(std::int64_t flat, double v, Fp8Overflow overflow = Fp8Overflow::saturate);
  std::vector<double> to_doubles() const;
  std::string shape_string() const;  // "[17, 32, 128]" (shape_text)
};

// "[17, 32, 128]": the one way shapes are written in messages.
std::string shape_text(const std::vector<std::int64_t>& shape);

}  // namespace podcheck

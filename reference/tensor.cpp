// Tensor storage: raw little-endian bytes plus exact element access (reference/tensor.hpp).
#include "reference/tensor.hpp"

#include <cstring>
#include <stdexcept>

namespace podcheck {

std::int64_t Tensor::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

Tensor Tensor::zeros(DType dtype, std::vector<std::int64_t> shape) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  for (std::int64_t d : t.shape)
    if (d < 0) throw std::invalid_argument("Tensor::zeros: negative dimension in " + t.shape_string());
  t.bytes.assign(static_cast<std::size_t>(t.numel()) * dtype_size(dtype), 0);
  return t;
}

Tensor Tensor::from_doubles(DType dtype, std::vector<std::int64_t> shape, const std::vector<double>& v,
                            Fp8Overflow overflow) {
  Tensor t = zeros(dtype, std::move(shape));
  if (static_cast<std::int64_t>(v.size()) != t.numel())
    throw std::invalid_argument("Tensor::from_doubles: " + std::to_string(v.size()) + " values for shape " +
                                t.shape_string());
  for (std::int64_t i = 0; i < t.numel(); ++i) t.set(i, v[static_cast<std::size_t>(i)], overflow);
  return t;
}

std::uint32_t Tensor::bits(std::int64_t flat) const {
  const std::size_t sz = dtype_size(dtype);
  if (sz > 4) throw std::invalid_argument("Tensor::bits: not available for float64");
  std::uint32_t b = 0;
  std::memcpy(&b, bytes.data() + static_cast<std::size_t>(flat) * sz, sz);  // little-endian host
  return b;
}

void Tensor::set_bits(std::int64_t flat, std::uint32_t b) {
  const std::size_t sz = dtype_size(dtype);
  if (sz > 4) throw std::invalid_argument("Tensor::set_bits: not available for float64");
  std::memcpy(bytes.data() + static_cast<std::size_t>(flat) * sz, &b, sz);
}

double Tensor::get(std::int64_t flat) const {
  if (dtype == DType::float64) {
    double d;
    std::memcpy(&d, bytes.data() + static_cast<std::size_t>(flat) * 8, 8);
    return d;
  }
  return decode_bits(dtype, bits(flat));
}

void Tensor::set(std::int64_t flat, double v, Fp8Overflow overflow) {
  if (dtype == DType::float64) {
    std::memcpy(bytes.data() + static_cast<std::size_t>(flat) * 8, &v, 8);
    return;
  }
  set_bits(flat, encode_bits(dtype, v, overflow));
}

std::vector<double> Tensor::to_doubles() const {
  std::vector<double> out(static_cast<std::size_t>(numel()));
  for (std::int64_t i = 0; i < numel(); ++i) out[static_cast<std::size_t>(i)] = get(i);
  return out;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string Tensor::shape_string() const { return shape_text(shape); }

}  // namespace podcheck

// One case on the GPU: inputs uploaded, outputs allocated with guard bands and poisoned with NaN (the bit
// patterns of reference/outputs.hpp), a pod_problem whose pointers are the device copies.
// After a run, download() returns the outputs and check_guards() proves nothing was written outside them.
#pragma once

#include "kernels/host/case_problem.hpp"
#include "reference/outputs.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace podcheck::kernels {

inline constexpr std::int64_t kGuardElems = 1024;  // poisoned elements before and after each output buffer

class DeviceCase {
 public:
  explicit DeviceCase(const Case& c);  // throws CudaError, InvalidCase
  ~DeviceCase();
  DeviceCase(const DeviceCase&) = delete;
  DeviceCase& operator=(const DeviceCase&) = delete;

  const pod_problem& problem() const { return packed_.problem; }
  pod_problem& problem() { return packed_.problem; }
  const std::string& unsupported() const { return packed_.unsupported; }
  void poison();  // re-poison outputs and guards (done once by the constructor)
  KernelOutputs download() const;
  // "" when every guard element still holds the poison pattern, else which buffer and how many changed.
  std::string check_guards() const;

 private:
  struct Buffer {
    void* base = nullptr;    // allocation start (guard before)
    std::int64_t elems = 0;  // payload elements
    int elem_bytes = 0;
    std::uint32_t poison = 0;
    std::string name;
    void* payload() const { return static_cast<char*>(base) + kGuardElems * elem_bytes; }
  };
  void* upload(const void* data, std::size_t bytes);
  Buffer make_output(const std::string& name, std::int64_t elems, int elem_bytes, std::uint32_t poison);
  std::vector<std::uint8_t> read_all(const Buffer& b) const;

  const Case& kase_;
  PackedProblem packed_;
  std::vector<void*> owned_;
  Buffer out_[2], lse_[2];
};

}  // namespace podcheck::kernels

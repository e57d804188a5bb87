// CUDA_CHECK(call): throws podcheck::kernels::CudaError("file:line: call: error string") when a CUDA
// runtime call fails. Every CUDA call in kernels/ goes through it; launches are followed by
// CUDA_CHECK(cudaGetLastError()).
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace podcheck::kernels {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* what, const char* file, int line) {
  throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " + cudaGetErrorName(e) +
                  " (" + cudaGetErrorString(e) + ")");
}

}  // namespace podcheck::kernels

#define CUDA_CHECK(call)                                                                   \
  do {                                                                                     \
    cudaError_t podcheck_cuda_err_ = (call);                                               \
    if (podcheck_cuda_err_ != cudaSuccess)                                                 \
      ::podcheck::kernels::throw_cuda_error(podcheck_cuda_err_, #call, __FILE__, __LINE__); \
  } while (0)

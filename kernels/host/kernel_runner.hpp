// Runs one case through a kernel that implements the C ABI: podcheck's own (linked in, "podcheck-cuda")
// or a port loaded with dlopen. Upload, poison, supports?, run, synchronize, guard check, download.
#pragma once

#include "kernels/include/podcheck_kernel_abi.h"
#include "reference/case.hpp"
#include "reference/outputs.hpp"

#include <string>

namespace podcheck::kernels {

class KernelHandle {
 public:
  static KernelHandle builtin();                    // podcheck-cuda
  static KernelHandle load(const std::string& path);  // dlopen + dlsym of the four entry points; throws
  KernelHandle(KernelHandle&&) noexcept;
  KernelHandle& operator=(KernelHandle&&) noexcept;
  ~KernelHandle();
  const pod_kernel_vtable& vtable() const { return vt_; }
  std::string name() const;
  std::string version() const;

 private:
  KernelHandle() = default;
  pod_kernel_vtable vt_{};
  void* dl_ = nullptr;
};

struct RunOutcome {
  RunRecord run{RunStatus::launch_failed, "not run"};  // how it went (reference/outputs.hpp)
  KernelOutputs outputs;  // downloaded when the kernel ran (also when guards were overwritten)
  pod_run_stats stats{};
};

// Throws CudaError only for failures outside the kernel (allocation, copies); kernel failures come back
// as RunStatus::launch_failed with the message.
RunOutcome run_case(const KernelHandle& kernel, const Case& c, int kv_chunk_tokens = 0);

// Empty when a CUDA device can be used; else why not (e.g. "no usable CUDA device (CUDA driver version is
// insufficient ...)"), for a clear message before any work starts.
std::string gpu_unavailable_reason();

}  // namespace podcheck::kernels

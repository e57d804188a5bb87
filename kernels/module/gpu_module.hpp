// The GPU module: everything podcheck does with CUDA, behind one function table exported by a shared library
// (libpodcheck_gpu.so) that app/ loads with dlopen for `podcheck run` and `podcheck bench kernel` only. Every
// other command starts without loading the CUDA runtime, cuBLAS or a driver (DESIGN §3). This header has no
// CUDA in it: the table speaks the case model and the C ABI's plain structs.
#pragma once

#include "kernels/bench/kernel_bench.hpp"
#include "kernels/host/kernel_runner.hpp"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace podcheck::kernels {

inline constexpr std::uint32_t kGpuModuleVersion = 3;  // bumped when GpuModule (or what it takes) changes shape

// One kernel (podcheck's own, or a port loaded from its shared library), ready to run cases.
class KernelRunner {
 public:
  virtual ~KernelRunner() = default;
  virtual std::string name() const = 0;
  virtual std::string version() const = 0;  // what goes into trace provenance
  // Upload, poison, supports?, run, synchronise, guard check, download (kernel_runner.hpp). Never throws: a
  // failure outside the kernel (allocation, copy) and a lost CUDA context come back as launch-failed.
  virtual RunOutcome run(const Case& c, int kv_chunk_tokens) = 0;
};

struct GpuModule {
  std::uint32_t version = kGpuModuleVersion;
  std::string (*unavailable_reason)();  // "" when a CUDA device can be used
  std::string (*device_description)();  // "NVIDIA H200 (sm_90, 132 SMs)"
  std::string (*driver_version)();
  std::unique_ptr<KernelRunner> (*builtin_kernel)();                     // podcheck-cuda
  std::unique_ptr<KernelRunner> (*load_kernel)(const std::string& path);  // a port; throws std::runtime_error
  // `podcheck bench kernel`: prints the table; false when a kernel failed validation on a mix. Throws.
  bool (*bench_kernel)(const BenchOptions& options, std::FILE* out);
};

}  // namespace podcheck::kernels

// Exported by libpodcheck_gpu.so (the only symbol app/ looks up).
extern "C" const podcheck::kernels::GpuModule* podcheck_gpu_module();

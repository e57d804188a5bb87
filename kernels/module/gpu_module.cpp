// The GPU module's function table (gpu_module.hpp), built into libpodcheck_gpu.so.
#include "kernels/module/gpu_module.hpp"

#include "kernels/pod/pod_launch.hpp"

#include <cuda_runtime.h>

#include <exception>
#include <string>

namespace podcheck::kernels {
namespace {

class Runner final : public KernelRunner {
 public:
  Runner(KernelHandle h, bool builtin) : handle_(std::move(h)), builtin_(builtin) {}
  std::string name() const override { return handle_.name(); }
  std::string version() const override { return builtin_ ? build_version() : handle_.version(); }
  RunOutcome run(const Case& c, int kv_chunk_tokens) override {
    // A kernel that faulted leaves the CUDA context unusable for the rest of the process: every later case
    // would fail for a reason that is not its own. Say so instead of blaming them.
    if (!lost_.empty()) return lost(lost_);
    RunOutcome r;
    try {
      r = run_case(handle_, c, kv_chunk_tokens);
    } catch (const std::exception& e) {  // CUDA failure outside the kernel (allocation, copy)
      r.run = {RunStatus::launch_failed, e.what()};
    }
    if (r.run.status == RunStatus::launch_failed) {
      const cudaError_t sticky = cudaDeviceSynchronize();
      if (sticky != cudaSuccess)
        lost_ = "case '" + c.id + "' failed with " + cudaGetErrorName(sticky) + " (" + cudaGetErrorString(sticky) + ")";
    }
    return r;
  }

 private:
  static RunOutcome lost(const std::string& why) {
    RunOutcome r;
    r.run = {RunStatus::launch_failed, "not run: the CUDA context was lost when " + why};
    return r;
  }
  KernelHandle handle_;
  bool builtin_;
  std::string lost_;
};

std::unique_ptr<KernelRunner> builtin_kernel() { return std::make_unique<Runner>(KernelHandle::builtin(), true); }
std::unique_ptr<KernelRunner> load_kernel(const std::string& path) {
  return std::make_unique<Runner>(KernelHandle::load(path), false);
}
bool bench_kernel(const BenchOptions& o, std::FILE* out) {
  const BenchReport report = run_kernel_bench(o);
  print_bench(report, out);
  return report.all_validated();
}

const GpuModule kModule{kGpuModuleVersion, &gpu_unavailable_reason, &device_description, &driver_version,
                        &builtin_kernel,    &load_kernel,            &bench_kernel};

}  // namespace
}  // namespace podcheck::kernels

extern "C" __attribute__((visibility("default"))) const podcheck::kernels::GpuModule* podcheck_gpu_module() {
  return &podcheck::kernels::kModule;
}

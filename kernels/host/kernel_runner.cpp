// Runs one case through a C-ABI kernel (see kernel_runner.hpp).
#include "kernels/host/kernel_runner.hpp"

#include "kernels/host/cuda_check.hpp"
#include "kernels/host/device_case.hpp"

#include <dlfcn.h>

#include <stdexcept>
#include <utility>

namespace podcheck::kernels {

std::string gpu_unavailable_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error so later checks report their own
    return std::string("no usable CUDA device (") + cudaGetErrorString(e) + ")";
  }
  return n == 0 ? "no CUDA device" : "";
}

KernelHandle KernelHandle::builtin() {
  KernelHandle h;
  h.vt_ = {&podcheck_kernel_info, &podcheck_kernel_supports, &podcheck_kernel_run, &podcheck_kernel_last_error};
  return h;
}

KernelHandle KernelHandle::load(const std::string& path) {
  KernelHandle h;
  h.dl_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h.dl_) throw std::runtime_error("cannot load kernel library '" + path + "': " + dlerror());
  auto sym = [&](const char* name) {
    void* s = dlsym(h.dl_, name);
    if (!s) throw std::runtime_error("kernel library '" + path + "' does not export " + name);
    return s;
  };
  h.vt_.info = reinterpret_cast<pod_kernel_info_fn>(sym("podcheck_kernel_info"));
  h.vt_.supports = reinterpret_cast<pod_kernel_supports_fn>(sym("podcheck_kernel_supports"));
  h.vt_.run = reinterpret_cast<pod_kernel_run_fn>(sym("podcheck_kernel_run"));
  h.vt_.last_error = reinterpret_cast<pod_kernel_last_error_fn>(sym("podcheck_kernel_last_error"));
  const pod_kernel_info* info = h.vt_.info();
  if (!info || info->abi_version != POD_ABI_VERSION)
    throw std::runtime_error("kernel library '" + path + "' implements ABI version " +
                             std::to_string(info ? info->abi_version : 0) + ", podcheck expects " +
                             std::to_string(POD_ABI_VERSION));
  return h;
}

KernelHandle::KernelHandle(KernelHandle&& o) noexcept : vt_(o.vt_), dl_(std::exchange(o.dl_, nullptr)) {}
KernelHandle& KernelHandle::operator=(KernelHandle&& o) noexcept {
  std::swap(vt_, o.vt_);
  std::swap(dl_, o.dl_);
  return *this;
}
KernelHandle::~KernelHandle() {
  if (dl_) dlclose(dl_);
}

std::string KernelHandle::name() const { return vt_.info()->name; }
std::string KernelHandle::version() const { return vt_.info()->version; }

RunOutcome run_case(const KernelHandle& kernel, const Case& c, int kv_chunk_tokens) {
  RunOutcome r;
  DeviceCase dc(c);
  if (!dc.unsupported().empty()) {
    r.run = {RunStatus::not_supported, dc.unsupported()};
    return r;
  }
  pod_problem p = dc.problem();
  p.kv_chunk_tokens = kv_chunk_tokens;
  p.stats = &r.stats;
  const pod_kernel_vtable& vt = kernel.vtable();
  pod_status st = vt.supports(&p);
  if (st == POD_OK) {
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreate(&stream));
    st = vt.run(&p, stream);
    const cudaError_t sync = cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
    if (st == POD_OK && sync != cudaSuccess) {
      r.run = {RunStatus::launch_failed, std::string("kernel failed: ") + cudaGetErrorString(sync)};
      return r;
    }
  }
  if (st == POD_NOT_SUPPORTED) {
    r.run = {RunStatus::not_supported, vt.last_error()};
    return r;
  }
  if (st != POD_OK) {
    r.run = {RunStatus::launch_failed,
             std::string(st == POD_INVALID ? "invalid problem: " : "kernel error: ") + vt.last_error()};
    return r;
  }
  r.outputs = dc.download();
  const std::string g = dc.check_guards();
  r.run = g.empty() ? RunRecord{} : RunRecord{RunStatus::guards_overwritten, g};
  return r;
}

}  // namespace podcheck::kernels

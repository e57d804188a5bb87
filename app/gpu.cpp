#include "app/gpu.hpp"

#include "app/errors.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#ifndef PODCHECK_BUILD_GPU_MODULE
#define PODCHECK_BUILD_GPU_MODULE ""  // this build has no GPU module (no nvcc)
#endif

namespace podcheck::app {

namespace fs = std::filesystem;

namespace {

std::string module_path(std::string& tried) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("PODCHECK_GPU_MODULE"); env && *env) candidates.push_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back((exe.parent_path().parent_path() / "lib" / "podcheck" / "libpodcheck_gpu.so").string());
  if (*PODCHECK_BUILD_GPU_MODULE) candidates.push_back(PODCHECK_BUILD_GPU_MODULE);
  for (const auto& c : candidates) {
    tried += (tried.empty() ? "" : ", ") + c;
    if (fs::is_regular_file(c, ec)) return c;
  }
  return "";
}

const kernels::GpuModule* load(std::string& error) {
  // a module named by PODCHECK_GPU_MODULE is never replaced by the next place (a variant module's timing would
  // silently be the default module's)
  std::error_code ec;
  if (const char* env = std::getenv("PODCHECK_GPU_MODULE"); env && *env && !fs::is_regular_file(env, ec)) {
    error = std::string("PODCHECK_GPU_MODULE='") + env + "': no such file (unset it to use the default module)";
    return nullptr;
  }
  std::string tried;
  const std::string path = module_path(tried);
  if (path.empty()) {
    error = *PODCHECK_BUILD_GPU_MODULE ? "the GPU module libpodcheck_gpu.so was not found (looked at " + tried + ")"
                                       : "this podcheck was built without nvcc (no GPU module; looked at " +
                                             (tried.empty() ? std::string("nothing") : tried) + ")";
    return nullptr;
  }
  void* dl = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    error = "cannot load the GPU module '" + path + "': " + dlerror();
    return nullptr;
  }
  using Entry = const kernels::GpuModule* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(dl, "podcheck_gpu_module"));
  const kernels::GpuModule* m = entry ? entry() : nullptr;
  if (!m) {
    error = "'" + path + "' is not a podcheck GPU module (no podcheck_gpu_module)";
    return nullptr;
  }
  if (m->version != kernels::kGpuModuleVersion) {
    error = "the GPU module '" + path + "' has version " + std::to_string(m->version) + ", this podcheck needs " +
            std::to_string(kernels::kGpuModuleVersion) + " (mixed builds?)";
    return nullptr;
  }
  return m;  // never unloaded: CUDA's own teardown runs at exit
}

}  // namespace

const kernels::GpuModule& gpu_module(const std::string& what) {
  static std::string error;
  static const kernels::GpuModule* m = load(error);
  if (!m) throw UsageError("'" + what + "' needs the GPU: " + error);
  if (const std::string why = m->unavailable_reason(); !why.empty())
    throw UsageError("'" + what + "' needs a GPU: " + why);
  return *m;
}

}  // namespace podcheck::app

// run_kernel(): one case through a GPU kernel the way `podcheck run` drives it — the GPU module
// (app/gpu.hpp, loaded on first use) uploads the case, poisons the outputs and guard bands, calls the kernel
// through the C ABI (kernels/include/podcheck_kernel_abi.h: podcheck's own kernel, or a port's shared library),
// synchronises, checks the guards and downloads. The result is a Trace ready for judge() or write_trace().
#include "bindings.hpp"

#include "app/errors.hpp"
#include "app/gpu.hpp"
#include "app/run.hpp"
#include "traces/trace.hpp"

#include <pybind11/stl.h>

#include <map>
#include <memory>

namespace podcheck::python {

namespace {

// One runner per kernel for the process (a port loaded, or podcheck's kernel set up, once, as `run` does). Never
// destroyed: like the GPU module itself, they stay until the process ends and CUDA tears down on its own.
kernels::KernelRunner& runner(const kernels::GpuModule& gpu, const std::string& lib) {
  static auto* runners = new std::map<std::string, std::unique_ptr<kernels::KernelRunner>>();
  auto& r = (*runners)[lib];
  if (!r) r = lib.empty() ? gpu.builtin_kernel() : gpu.load_kernel(lib);
  return *r;
}

Trace run_kernel(const Case& c, std::optional<std::string> kernel_lib, int kv_chunk_tokens) {
  const kernels::GpuModule& gpu = app::gpu_module("podcheck.run_kernel");
  kernels::KernelRunner& k = runner(gpu, kernel_lib.value_or(""));
  const Provenance base =
      app::run_provenance(gpu, k, "podcheck.run_kernel (Python) --kernel " + kernel_lib.value_or("podcheck-cuda"));
  Trace t;
  t.kase = c;
  {
    py::gil_scoped_release unlocked;
    app::run_into(t, k, kv_chunk_tokens, base);
  }
  return t;
}

}  // namespace

void bind_gpu(py::module_& m) {
  // app::gpu_module's refusal (no GPU module in this build, none found, no usable GPU), naming why.
  py::register_exception<app::UsageError>(m, "GpuUnavailable", PyExc_RuntimeError);
  m.def("run_kernel", &run_kernel, py::arg("case"), py::arg("kernel_lib") = py::none(),
        py::arg("kv_chunk_tokens") = 0,
        "Runs a case through podcheck's CUDA kernel (kernel_lib=None) or a port implementing the C ABI "
        "(kernel_lib='path/to/port.so'), as `podcheck run` does, and returns the Trace: outputs, run record, "
        "provenance. Raises GpuUnavailable (naming why) without a GPU module or a usable GPU.");
}

}  // namespace podcheck::python

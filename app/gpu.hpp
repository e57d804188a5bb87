// Loading the GPU module (kernels/module/gpu_module.hpp) on first use: `run` and `bench kernel` call this,
// nothing else does, so no other command loads CUDA. Looked for, in order: $PODCHECK_GPU_MODULE, beside an
// installed binary (<prefix>/lib/podcheck/libpodcheck_gpu.so), the build tree this binary came from; a module named
// by $PODCHECK_GPU_MODULE that is not a file is an error, not a reason to take the next one.
#pragma once

#include "kernels/module/gpu_module.hpp"

#include <string>

namespace podcheck::app {

// Loads the module once (kept for the process) and checks its version; `what` names the command for the
// message. Throws UsageError: no module (built without nvcc), a module that does not load, or no usable GPU.
const kernels::GpuModule& gpu_module(const std::string& what);

}  // namespace podcheck::app

// `podcheck bench kernel`: podcheck-cuda, and optionally a peer port, timed on the bench mixes through the GPU
// module (kernels/bench/kernel_bench.hpp). Here the mixes' case ids are built (fixtures) and each kernel's
// outputs are judged before it is timed (validation::judge, calibrated policy; ours under the intended
// profile, a peer under flashinfer-pod, the profile of FlashInfer's POD).
#pragma once

#include <string>

namespace podcheck::app {

struct BenchKernelOptions {
  int warmup = 5, reps = 30;
  std::string peer;  // a port's shared library, "" = ours only
};
// Prints the table; returns 1 when a kernel failed validation on a mix (it is then not timed), else 0.
int run_bench_kernel(const BenchKernelOptions& options);

}  // namespace podcheck::app

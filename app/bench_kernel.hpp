// `podcheck bench kernel`: podcheck-cuda, and optionally a peer port, timed on the bench mixes through the GPU
// module (kernels/bench/kernel_bench.hpp). Here the mixes' case ids are built (fixtures) and each kernel's
// outputs are judged before it is timed (validation::judge, calibrated policy; ours under the intended
// profile, a peer under flashinfer-pod, the profile of FlashInfer's POD).
#pragma once

#include "kernels/bench/bench_mixes.hpp"

#include <string>
#include <vector>

namespace podcheck::app {

struct BenchKernelOptions {
  int warmup = 5, reps = 30;
  std::string peer;                // a port's shared library, "" = ours only
  std::vector<std::string> mixes;  // --mix values (resolve_mixes); empty: the standard set
};
// --mix values, in order: "standard" or "serving" (the sets of kernels/bench/bench_mixes.hpp), a mix name of
// either set, or a canonical case id of a POD or BatchPOD case (both sides; the id is its name). Duplicates
// are dropped. Throws UsageError naming the value and what is accepted; needs no GPU.
std::vector<kernels::BenchMix> resolve_mixes(const std::vector<std::string>& values);
// Prints the table; returns 1 when a kernel failed validation on a mix (it is then not timed), or ours could not
// run one, else 0 (a peer that does not support a mix is reported, not timed there, and not a failure).
int run_bench_kernel(const BenchKernelOptions& options);

}  // namespace podcheck::app

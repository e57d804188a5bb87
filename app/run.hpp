// `podcheck run`: cases through a GPU kernel (podcheck's own, or a port implementing the C ABI), recorded as a
// trace and/or judged on the spot. Per case: build the inputs (sweep id or fixture), run through the GPU
// module (upload, poison + guard bands, run, guard check, download), keep outputs and the run record, judge
// with validation::judge exactly as replaying the trace would.
#pragma once

#include "app/validate.hpp"
#include "kernels/module/gpu_module.hpp"

#include <string>
#include <vector>

namespace podcheck::app {

struct RunOptions {
  std::string kernel = "podcheck-cuda";  // built-in kernel name
  std::string kernel_lib;                // or a port's shared library
  std::string tier, shard, fixtures;     // exactly one source: tier (+ shard), fixtures file, or cases
  std::vector<std::string> cases;
  long limit = 0;        // only the first N cases
  int kv_chunk = 0;      // force the split-KV chunk (tokens)
  std::string output;    // trace to write ("" with check: none)
  bool force = false;
  bool inputs_by_id = false;
  bool check = false;    // judge each case on the spot
  JudgeJobOptions judge; // with check: policy, required outputs, reports
};

// The provenance of a run through `kernel`: its name and version, the device, the driver, the date (UTC), and
// `source` (how it was recorded).
Provenance run_provenance(const kernels::GpuModule& gpu, const kernels::KernelRunner& kernel, const std::string& source);
// Runs t.kase through the kernel and records what came back in t: outputs, run record, provenance `base` with
// the kernel's scheduling facts (none for a case it did not support). The one way podcheck run, and the Python
// module's run_kernel, turn a kernel's run into a trace.
void run_into(Trace& t, kernels::KernelRunner& kernel, int kv_chunk_tokens, const Provenance& base);

// Option combinations and output targets, checked before any GPU is looked for. Throws UsageError.
void check_run_options(const RunOptions& options);
// The whole job; returns the exit status (a kernel that failed to run or a case not passed: 1).
int run_kernel(const RunOptions& options);

}  // namespace podcheck::app

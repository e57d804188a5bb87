// podcheck bench kernel: times podcheck-cuda, and optionally a peer port (a shared library implementing the
// kernel ABI, e.g. libpodcheck_flashinfer.so), on POD mixes (bench_mixes.hpp, or any POD case ids): fused launch, each side alone, serial
// sum, against ceilings measured in the same run (a large device-to-device copy; a cuBLAS bf16 GEMM).
//
// Every mix is a canonical case id (fixtures/case_spec.hpp): its inputs are the generator's, and before
// anything is timed each kernel runs the case once and the outputs are judged (the `validate` hook:
// validation::judge under the calibrated policy, supplied by the caller since kernels/ does not depend on
// validation/): the fused launch, and the two one-sided launches writing one output set together. A kernel
// that fails is not timed on that mix. Timings are CUDA-event medians after warm-up, on one stream, over
// rotated copies of the validated inputs (so that they do not sit in L2); ours and the peer's use the same
// copies.
#pragma once

#include "kernels/bench/bench_mixes.hpp"
#include "reference/case.hpp"
#include "reference/outputs.hpp"

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace podcheck::kernels {

struct BenchHooks {
  std::function<Case(const std::string& id)> make_case;  // fixtures' make_case
  // "" when the outputs pass, else one line saying why; `peer` selects the profile the peer is read under.
  std::function<std::string(const Case& c, const KernelOutputs& observed, bool peer)> validate;
};

struct BenchOptions {
  int warmup = 5;
  int reps = 30;
  std::string peer;  // path of a port's shared library; "" = ours only
  std::vector<BenchMix> mixes;  // what to time, in order; empty: bench_mixes()
  BenchHooks hooks;  // required
};

struct KernelTimes {
  bool ran = false;        // validated and timed
  std::string failure;     // why not (validation failure, not supported, error)
  double fused_ms = 0, prefill_ms = 0, decode_ms = 0;  // medians
  std::string scheduling;  // grid, items, splits (as the kernel reports them)
  std::string timeline;    // ours: describe_timeline of one more fused launch on the first input set
  bool unsupported = false;  // not run: the kernel said it does not support the mix (its supports call)
};

struct BenchRow {
  BenchMix mix;
  double flops = 0, bytes = 0;  // whole POD (both sides), causal-aware
  double flops_p = 0, flops_d = 0, bytes_p = 0, bytes_d = 0;
  int rotation_sets = 0;
  KernelTimes ours, peer;
};

struct BenchReport {
  std::string device, version, peer_name;  // peer_name "" without a peer
  std::string tuning;  // the experiment knobs set in the environment (PODCHECK_CUDA_*), "" when none
  double copy_tbps = 0;    // device-to-device copy, bytes read + written
  double gemm_tflops = 0;  // cuBLAS bf16 GEMM 8192^3, fp32 accumulate, random inputs
  std::vector<BenchRow> rows;
  bool all_validated() const;  // ours ran every mix, and the peer every mix it supports
};

BenchReport run_kernel_bench(const BenchOptions& options);  // throws CudaError, std::runtime_error

// CUDA-free (kernels/bench/bench_report.cpp, host-tested):
// The work of a case: FLOPs 4 D H_qo per (query row, visible key), causal bottom-right aware; bytes: q, K, V
// and o once each at their dtypes' sizes (fp8 KV counts one byte) plus the fp32 LSE. Sets the row's
// flops*/bytes* fields.
void set_work(const Case& c, BenchRow& row);
// The mix's bound in ms: the larger of its FLOPs at the measured GEMM rate and its bytes at the measured
// copy rate (both sides of the POD together; 0 when a ceiling is missing).
double bound_ms(const BenchRow& row, const BenchReport& report);
void print_bench(const BenchReport& report, std::FILE* out);

}  // namespace podcheck::kernels

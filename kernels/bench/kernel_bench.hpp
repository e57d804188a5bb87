// podcheck bench kernel: times podcheck-cuda on fixed POD shapes (fused launch, each side alone, serial
// sum) against ceilings measured in the same run (a large device-to-device copy; a cuBLAS bf16 GEMM).
// CUDA-event medians after warm-up; input sets rotated so that they do not sit in L2.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace podcheck::kernels {

struct BenchOptions {
  int warmup = 5;
  int reps = 30;
};

struct BenchRow {
  std::string name;
  double fused_ms = 0, prefill_ms = 0, decode_ms = 0;  // medians
  double flops = 0, bytes = 0;                          // whole POD (both sides), causal-aware
  double flops_p = 0, flops_d = 0, bytes_p = 0, bytes_d = 0;
  int rotation_sets = 0;
  std::string scheduling;  // grid, items, splits
};

struct BenchReport {
  std::string device, version;
  double copy_tbps = 0;     // device-to-device copy, bytes read + written
  double gemm_tflops = 0;   // cuBLAS bf16 GEMM 8192^3, fp32 accumulate, random inputs
  std::vector<BenchRow> rows;
};

BenchReport run_kernel_bench(const BenchOptions& options);  // throws CudaError
void print_bench(const BenchReport& report, std::FILE* out);

}  // namespace podcheck::kernels

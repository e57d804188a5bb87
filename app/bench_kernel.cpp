#include "app/bench_kernel.hpp"

#include "app/gpu.hpp"
#include "fixtures/sweep.hpp"
#include "validation/judge.hpp"

#include <cstdio>

namespace podcheck::app {

namespace {

// "" when the outputs pass, else one line: status, profile, message, the headline tensor, the first finding.
std::string judge_line(const Case& c, const KernelOutputs& observed, bool peer) {
  validation::JudgeOptions jo;
  jo.policy = validation::Policy::calibrated;
  jo.profile = peer ? Profile::flashinfer_pod : Profile::intended;
  const validation::CaseResult r = validation::judge(c, observed, RunRecord{}, jo);
  if (r.status == validation::Status::passed) return "";
  std::string line = std::string(validation::status_name(r.status)) + " (profile " + r.profile + ")";
  if (!r.message.empty()) line += ": " + r.message;
  if (const validation::TensorReport* t = r.headline())
    line += "; " + t->name + " max_abs " + std::to_string(t->max_abs) + ", over tolerance " +
            std::to_string(t->over_tol) + ", unwritten " + std::to_string(t->unwritten);
  if (!r.diagnosis.empty()) line += "; " + r.diagnosis.front();
  return line;
}

}  // namespace

int run_bench_kernel(const BenchKernelOptions& o) {
  const kernels::GpuModule& gpu = gpu_module("bench kernel");
  kernels::BenchOptions bo;
  bo.warmup = o.warmup;
  bo.reps = o.reps;
  bo.peer = o.peer;
  bo.hooks.make_case = [](const std::string& id) { return make_case(id); };
  bo.hooks.validate = judge_line;
  return gpu.bench_kernel(bo, stdout) ? 0 : 1;
}

}  // namespace podcheck::app

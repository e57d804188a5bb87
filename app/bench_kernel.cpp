#include "app/bench_kernel.hpp"

#include "app/errors.hpp"
#include "app/gpu.hpp"
#include "fixtures/case_spec.hpp"
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

std::vector<kernels::BenchMix> resolve_mixes(const std::vector<std::string>& values) {
  std::vector<kernels::BenchMix> out;
  auto add = [&out](const kernels::BenchMix& m) {
    for (const kernels::BenchMix& o : out)
      if (o.id == m.id) return;
    out.push_back(m);
  };
  for (const std::string& v : values) {
    if (v == "standard" || v == "serving") {
      for (const kernels::BenchMix& m : v == "standard" ? kernels::bench_mixes() : kernels::bench_serving_mixes()) add(m);
      continue;
    }
    bool named = false;
    for (const auto* set : {&kernels::bench_mixes(), &kernels::bench_serving_mixes()})
      for (const kernels::BenchMix& m : *set)
        if (m.name == v || m.name.substr(0, m.name.find(' ')) == v) {
          add(m);
          named = true;
        }
    if (named) continue;
    CaseSpec s;
    try {
      s = parse_case_id(v);
    } catch (const std::exception& e) {
      throw UsageError("--mix '" + v + "': not a mix name (standard, serving, or the first word of a name listed by "
                       "kernels/bench/bench_mixes.hpp, e.g. A, Sd, A-e4m3) and not a case id: " + e.what());
    }
    if (const std::string why = spec_problem(s); !why.empty())
      throw UsageError("--mix '" + v + "': " + why);
    if (!s.has_prefill() || !s.has_decode())
      throw UsageError("--mix '" + v + "': a bench mix needs both sides (a pod_ or bpod_ case with a decode batch)");
    add({case_id(s), case_id(s)});
  }
  return out;
}

int run_bench_kernel(const BenchKernelOptions& o) {
  const std::vector<kernels::BenchMix> mixes = resolve_mixes(o.mixes);  // before any GPU work
  const kernels::GpuModule& gpu = gpu_module("bench kernel");
  kernels::BenchOptions bo;
  bo.mixes = mixes;
  bo.warmup = o.warmup;
  bo.reps = o.reps;
  bo.peer = o.peer;
  bo.hooks.make_case = [](const std::string& id) { return make_case(id); };
  bo.hooks.validate = judge_line;
  return gpu.bench_kernel(bo, stdout) ? 0 : 1;
}

}  // namespace podcheck::app

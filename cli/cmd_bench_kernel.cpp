// podcheck bench kernel: time podcheck-cuda (and with --peer a port's shared library) on the bench mixes,
// each case validated before it is timed, against ceilings measured in the same run. GPU only; see
// kernels/bench/kernel_bench.hpp. This file wires the hooks: make_case (fixtures) and the judge
// (validation, calibrated policy; ours under the intended profile, a peer under flashinfer-pod).
#include "cli/commands.hpp"

#if PODCHECK_WITH_KERNELS
#include "fixtures/sweep.hpp"
#include "kernels/bench/kernel_bench.hpp"
#include "kernels/host/kernel_runner.hpp"
#include "validation/judge.hpp"
#endif

#include <cstdio>
#include <memory>
#include <string>

namespace podcheck::cli {

#if PODCHECK_WITH_KERNELS
namespace {

std::string judge_line(const Case& c, const KernelOutputs& observed, bool peer) {
  validation::JudgeOptions jo;
  jo.policy = validation::Policy::calibrated;
  jo.profile = peer ? Profile::flashinfer_pod : Profile::intended;
  const validation::CaseResult r = validation::judge(c, observed, jo);
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
#endif

void add_bench_kernel(CLI::App& bench, CommandResult& result) {
  struct Opts {
    int warmup = 5, reps = 30;
    std::string peer;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = bench.add_subcommand("kernel", "Time the podcheck-cuda POD kernel (GPU): fused vs each side alone, "
                                             "optionally beside a peer port (--peer)");
  cmd->add_option("--warmup", o->warmup, "warm-up launches per timing (default 5)")->check(CLI::Range(0, 1000));
  cmd->add_option("--reps", o->reps, "timed launches per timing; the median is reported (default 30)")
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--peer", o->peer,
                  "shared library of a port (kernel ABI) timed beside podcheck-cuda on the same cases, inputs and "
                  "rotation, e.g. libpodcheck_flashinfer.so")
      ->check(CLI::ExistingFile);
  cmd->callback([o, &result] {
#if PODCHECK_WITH_KERNELS
    if (const std::string why = podcheck::kernels::gpu_unavailable_reason(); !why.empty())
      throw UsageError("'bench kernel' needs a GPU: " + why);
    podcheck::kernels::BenchOptions bo;
    bo.warmup = o->warmup;
    bo.reps = o->reps;
    bo.peer = o->peer;
    bo.hooks.make_case = [](const std::string& id) { return podcheck::make_case(id); };
    bo.hooks.validate = judge_line;
    const auto report = podcheck::kernels::run_kernel_bench(bo);
    podcheck::kernels::print_bench(report, stdout);
    // a kernel that failed validation on a mix is a parity failure, like any other case
    result.exit_code = report.all_validated() ? 0 : 1;
#else
    (void)result;
    throw UsageError("'bench kernel' needs the CUDA kernels: this podcheck was built without nvcc");
#endif
  });
}

}  // namespace podcheck::cli

// podcheck bench kernel: time podcheck-cuda (fused, each side alone, serial sum) against ceilings
// measured in the same run. GPU only; see kernels/bench/kernel_bench.hpp.
#include "cli/commands.hpp"

#if PODCHECK_WITH_KERNELS
#include "kernels/host/kernel_runner.hpp"
#include "kernels/bench/kernel_bench.hpp"
#endif

#include <cstdio>
#include <memory>

namespace podcheck::cli {

void add_bench_kernel(CLI::App& bench, CommandResult& result) {
  struct Opts {
    int warmup = 5, reps = 30;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = bench.add_subcommand("kernel", "Time the podcheck-cuda POD kernel (GPU): fused vs each side alone");
  cmd->add_option("--warmup", o->warmup, "warm-up launches per timing (default 5)")->check(CLI::Range(0, 1000));
  cmd->add_option("--reps", o->reps, "timed launches per timing; the median is reported (default 30)")
      ->check(CLI::Range(1, 10000));
  cmd->callback([o, &result] {
#if PODCHECK_WITH_KERNELS
    if (const std::string why = podcheck::kernels::gpu_unavailable_reason(); !why.empty())
      throw UsageError("'bench kernel' needs a GPU: " + why);
    podcheck::kernels::BenchOptions bo;
    bo.warmup = o->warmup;
    bo.reps = o->reps;
    const auto report = podcheck::kernels::run_kernel_bench(bo);
    podcheck::kernels::print_bench(report, stdout);
    result.exit_code = 0;
#else
    (void)result;
    throw UsageError("'bench kernel' needs the CUDA kernels: this podcheck was built without nvcc");
#endif
  });
}

}  // namespace podcheck::cli

// podcheck bench kernel: time podcheck-cuda (fused, each side alone, serial sum) against ceilings measured in
// the same run, through the GPU module (kernels/bench/kernel_bench.hpp).
#include "cli/commands.hpp"

#include "app/gpu.hpp"

#include <cstdio>
#include <memory>

namespace podcheck::cli {

void add_bench_kernel(CLI::App& bench, CommandResult& result) {
  auto o = std::make_shared<podcheck::kernels::BenchOptions>();
  auto* cmd = bench.add_subcommand("kernel", "Time the podcheck-cuda POD kernel (GPU): fused vs each side alone");
  cmd->add_option("--warmup", o->warmup, "warm-up launches per timing (default 5)")->check(CLI::Range(0, 1000));
  cmd->add_option("--reps", o->reps, "timed launches per timing; the median is reported (default 30)")
      ->check(CLI::Range(1, 10000));
  cmd->callback([o, &result] {
    app::gpu_module("bench kernel").bench_kernel(*o, stdout);
    result.exit_code = 0;
  });
}

}  // namespace podcheck::cli

// podcheck bench kernel: time podcheck-cuda (and with --peer a port's shared library) on the bench mixes, each
// case validated before it is timed, against ceilings measured in the same run (app/bench_kernel.hpp).
#include "cli/commands.hpp"

#include "app/bench_kernel.hpp"

#include <memory>

namespace podcheck::cli {

void add_bench_kernel(CLI::App& bench, CommandResult& result) {
  auto o = std::make_shared<app::BenchKernelOptions>();
  auto* cmd = bench.add_subcommand("kernel", "Time the podcheck-cuda POD kernel (GPU): fused vs each side alone, "
                                             "optionally beside a peer port (--peer)");
  cmd->add_option("--warmup", o->warmup, "warm-up launches per timing (default 5)")->check(CLI::Range(0, 1000));
  cmd->add_option("--reps", o->reps, "timed launches per timing; the median is reported (default 30)")
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--peer", o->peer,
                  "shared library of a port (kernel ABI) timed beside podcheck-cuda on the same cases, inputs and "
                  "rotation, e.g. libpodcheck_flashinfer.so")
      ->check(CLI::ExistingFile);
  cmd->add_option("--mix", o->mixes,
                  "what to time (repeatable, in order): standard (default), serving, a mix name's first word "
                  "(A, B, C, BPOD, G8, Sd, Sp, A-e4m3, A-ps1) or a POD / BatchPOD case id");
  cmd->callback([o, &result] { result.exit_code = app::run_bench_kernel(*o); });
}

}  // namespace podcheck::cli

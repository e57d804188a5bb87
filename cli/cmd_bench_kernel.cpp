// podcheck bench kernel: placeholder until kernels/ lands.
#include "cli/commands.hpp"

namespace podcheck::cli {

void add_bench_kernel(CLI::App& bench, CommandResult& result) {
  auto* cmd = bench.add_subcommand("kernel", "(not yet available)");
  cmd->callback([&result] { throw UsageError("'bench kernel' is not available in this build yet"); });
}

}  // namespace podcheck::cli

// podcheck bench: placeholder until its module lands.
#include "cli/commands.hpp"

namespace podcheck::cli {

void add_bench(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("bench", "(not yet available)");
  cmd->callback([&result] { throw UsageError("'bench' is not available in this build yet"); });
}

}  // namespace podcheck::cli

// podcheck sweep: placeholder until its module lands.
#include "cli/commands.hpp"

namespace podcheck::cli {

void add_sweep(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("sweep", "(not yet available)");
  cmd->callback([&result] { throw UsageError("'sweep' is not available in this build yet"); });
}

}  // namespace podcheck::cli

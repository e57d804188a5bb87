// podcheck selfcheck: placeholder until its module lands.
#include "cli/commands.hpp"

namespace podcheck::cli {

void add_selfcheck(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("selfcheck", "(not yet available)");
  cmd->callback([&result] { throw UsageError("'selfcheck' is not available in this build yet"); });
}

}  // namespace podcheck::cli

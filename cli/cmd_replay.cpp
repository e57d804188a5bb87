// podcheck replay: placeholder until its module lands.
#include "cli/commands.hpp"

namespace podcheck::cli {

void add_replay(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("replay", "(not yet available)");
  cmd->callback([&result] { throw UsageError("'replay' is not available in this build yet"); });
}

}  // namespace podcheck::cli

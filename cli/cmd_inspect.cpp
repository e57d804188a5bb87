// podcheck inspect: placeholder until its module lands.
#include "cli/commands.hpp"

namespace podcheck::cli {

void add_inspect(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("inspect", "(not yet available)");
  cmd->callback([&result] { throw UsageError("'inspect' is not available in this build yet"); });
}

}  // namespace podcheck::cli

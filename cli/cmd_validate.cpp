// podcheck validate: placeholder until its module lands.
#include "cli/commands.hpp"

namespace podcheck::cli {

void add_validate(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("validate", "(not yet available)");
  cmd->callback([&result] { throw UsageError("'validate' is not available in this build yet"); });
}

}  // namespace podcheck::cli

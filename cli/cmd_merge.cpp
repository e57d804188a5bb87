// podcheck merge: placeholder until its module lands.
#include "cli/commands.hpp"

namespace podcheck::cli {

void add_merge(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("merge", "(not yet available)");
  cmd->callback([&result] { throw UsageError("'merge' is not available in this build yet"); });
}

}  // namespace podcheck::cli

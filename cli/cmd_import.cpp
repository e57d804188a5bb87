// podcheck import: placeholder until its module lands.
#include "cli/commands.hpp"

namespace podcheck::cli {

void add_import(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("import", "(not yet available)");
  cmd->callback([&result] { throw UsageError("'import' is not available in this build yet"); });
}

}  // namespace podcheck::cli

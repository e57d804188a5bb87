// podcheck generate: placeholder until its module lands.
#include "cli/commands.hpp"

namespace podcheck::cli {

void add_generate(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("generate", "(not yet available)");
  cmd->callback([&result] { throw UsageError("'generate' is not available in this build yet"); });
}

}  // namespace podcheck::cli

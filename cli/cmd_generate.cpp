// podcheck generate: cases and their reference outputs into an HDF5 fixture file (app/generate.hpp).
#include "cli/commands.hpp"

#include "app/generate.hpp"

#include <memory>

namespace podcheck::cli {

void add_generate(CLI::App& app, CommandResult& result) {
  auto o = std::make_shared<app::GenerateOptions>();
  auto* cmd = app.add_subcommand("generate", "build cases and their reference outputs into an HDF5 fixture file");
  cmd->add_option("--tier", o->tier, "tier name or sweep file (see `podcheck sweep list`)");
  cmd->add_option("--case", o->cases, "canonical case id (repeatable; quote it: ids contain parentheses)");
  cmd->add_option("--shard", o->shard, "k/n: keep case i when i % n == k (0-based)");
  cmd->add_option("-o,--output", o->output, "fixture file to write (HDF5)")->required();
  cmd->add_flag("--float32", o->float32, "store reference outputs as float32 instead of float64");
  cmd->add_flag("--force", o->force, "overwrite an existing output file");
  cmd->callback([o, &result] { result.exit_code = app::run_generate(*o); });
}

}  // namespace podcheck::cli

// podcheck merge: join sharded JSON reports (validate/replay/run --check --json) into one (app/validate.hpp).
#include "cli/commands.hpp"

#include "app/validate.hpp"

namespace podcheck::cli {

void add_merge(CLI::App& app, CommandResult& result) {
  auto o = std::make_shared<app::MergeOptions>();
  auto* cmd = app.add_subcommand("merge", "Join sharded JSON reports into one");
  cmd->add_option("inputs", o->inputs, "JSON reports")->required();
  cmd->add_option("-o,--output", o->output, "merged JSON report")->required();
  cmd->add_option("--junit", o->junit, "also write a JUnit XML report of the merged cases");
  cmd->add_option("--html", o->html,
                  "also write the HTML report of the merged cases (with the heat maps the JSON reports carry)");
  cmd->add_flag("--force", o->force, "replace existing output files");
  cmd->callback([o, &result] { result.exit_code = app::run_merge(*o); });
}

}  // namespace podcheck::cli

// podcheck merge: join sharded JSON reports (validate/replay --json) into one; summary recomputed.
#include "cli/commands.hpp"

#include "validation/report.hpp"

#include <cstdio>

namespace podcheck::cli {

void add_merge(CLI::App& app, CommandResult& result) {
  struct Opts {
    std::vector<std::string> inputs;
    std::string output, junit;
    bool force = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("merge", "Join sharded JSON reports into one");
  cmd->add_option("inputs", o->inputs, "JSON reports")->required()->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", o->output, "merged JSON report")->required();
  cmd->add_option("--junit", o->junit, "also write a JUnit XML report of the merged cases");
  cmd->add_flag("--force", o->force, "replace existing output files");
  cmd->callback([o, &result] {
    namespace v = podcheck::validation;
    const auto merged = v::merge_reports(o->inputs);
    v::write_text_file(o->output, merged.dump(2) + "\n", o->force);
    const v::Summary s = v::summary_from_json_cases(merged["cases"]);
    if (!o->junit.empty()) {
      std::vector<nlohmann::json> cases(merged["cases"].begin(), merged["cases"].end());
      v::write_text_file(o->junit, v::junit_xml(cases, s), o->force);
    }
    v::Summary shown = s;
    shown.seconds = merged["summary"].value("seconds", 0.0);
    std::printf("%s\n", v::summary_line("merge", shown).c_str());
    result.exit_code = s.exit_code();
  });
}

}  // namespace podcheck::cli

// podcheck replay: judge recorded traces against the reference, say what is wrong and where (app/validate.hpp).
#include "cli/commands.hpp"
#include "cli/job_options.hpp"

namespace podcheck::cli {

void add_replay(CLI::App& app, CommandResult& result) {
  struct Opts {
    std::vector<std::string> files;
    std::string case_id, profile;
    JudgeCliOptions judge;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("replay", "Replay traces against the reference: verdict, metrics, where and why");
  cmd->add_option("files", o->files, "trace files (HDF5)")->required();
  cmd->add_option("--case", o->case_id, "only this case id");
  cmd->add_option("--profile", o->profile,
                  "intended | flashinfer | flashinfer-pod (default: the profiles the trace's expectations name, "
                  "else intended)");
  o->judge.add_to(cmd);
  cmd->callback([o, &result] {
    app::JudgeJobOptions jo;
    o->judge.apply(jo);
    try {
      if (!o->profile.empty()) jo.replay.profile = profile_from_name(o->profile);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    jo.replay.case_filter = o->case_id;
    result.exit_code = app::run_replay(o->files, jo);
  });
}

}  // namespace podcheck::cli

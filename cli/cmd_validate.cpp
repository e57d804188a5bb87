// podcheck validate: the main job (app/validate.hpp): the reference's self-consistency on a tier plus a replay
// of the golden traces, each judged under the profiles its expectations name.
#include "cli/commands.hpp"
#include "cli/job_options.hpp"

namespace podcheck::cli {

void add_validate(CLI::App& app, CommandResult& result) {
  struct Opts {
    app::ValidateOptions v;
    std::string shard;
    JudgeCliOptions judge;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("validate", "The main job: reference self-consistency on a tier + replay of the golden traces");
  cmd->add_option("--tier", o->v.tier, "tier for the reference self-consistency check (default quick; 'none' skips it)");
  cmd->add_option("--traces", o->v.traces,
                  "folder of traces to replay (default: the golden traces installed beside the executable or in the "
                  "source tree it was built from)");
  cmd->add_flag("--no-golden", o->v.no_golden, "replay no traces (only the reference's self-consistency)");
  cmd->add_option("--shard", o->shard, "k/n: only cases i with i % n == k");
  o->judge.add_to(cmd);
  cmd->callback([o, &result] {
    app::ValidateOptions v = o->v;
    o->judge.apply(v.job);
    try {
      if (!o->shard.empty()) v.job.replay.shard = parse_shard(o->shard);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    result.exit_code = app::run_validate(v);
  });
}

}  // namespace podcheck::cli

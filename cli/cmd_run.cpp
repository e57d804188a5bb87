// podcheck run: cases through a GPU kernel, recorded as a trace and/or judged on the spot (app/run.hpp).
#include "cli/commands.hpp"
#include "cli/job_options.hpp"

#include "app/run.hpp"

namespace podcheck::cli {

void add_run(CLI::App& app, CommandResult& result) {
  struct Opts {
    app::RunOptions run;
    JudgeCliOptions judge;
  };
  auto o = std::make_shared<Opts>();
  app::RunOptions& r = o->run;
  auto* cmd = app.add_subcommand("run", "Run cases through a GPU kernel and record a trace (GPU)");
  cmd->add_option("--kernel", r.kernel, "built-in kernel name (default podcheck-cuda)");
  cmd->add_option("--kernel-lib", r.kernel_lib, "shared library implementing the podcheck kernel ABI");
  cmd->add_option("--tier", r.tier, "run a tier (quick, default, full, ...) or a sweep file");
  cmd->add_option("--shard", r.shard, "k/n: only cases i with i % n == k (with --tier)");
  cmd->add_option("--fixtures", r.fixtures, "run the cases of a fixture file");
  cmd->add_option("--case", r.cases, "run these case ids");
  cmd->add_option("--limit", r.limit, "run only the first N cases of the list");
  cmd->add_option("--kv-chunk", r.kv_chunk, "force the split-KV chunk size (tokens, multiple of 32)");
  cmd->add_option("-o,--output", r.output, "trace file to write (optional with --check)");
  cmd->add_flag("--inputs-by-id", r.inputs_by_id,
                "store each case's id and an inputs digest instead of its input tensors (small traces; readers "
                "rebuild the inputs with the generator and check the digest)");
  cmd->add_flag("--check", r.check, "also judge each case against the reference, as replay does");
  o->judge.add_to(cmd, /*with_artifacts=*/false);
  cmd->callback([o, &result] {
    app::RunOptions run = o->run;
    o->judge.apply(run.judge);
    run.force = run.judge.reports.force;
    result.exit_code = app::run_kernel(run);
  });
}

}  // namespace podcheck::cli

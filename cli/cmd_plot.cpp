// podcheck plot: one case's heat maps of error / bound as a PNG (app/plot.hpp).
#include "cli/commands.hpp"

#include "app/plot.hpp"

namespace podcheck::cli {

void add_plot(CLI::App& app, CommandResult& result) {
  auto o = std::make_shared<app::PlotOptions>();
  auto* cmd = app.add_subcommand("plot", "Draw one case's heat maps of error / bound as a PNG");
  cmd->add_option("trace", o->trace, "trace file (HDF5)")->required();
  cmd->add_option("--case", o->case_id, "case id")->required();
  cmd->add_option("-o,--output", o->output, "PNG file to write")->required();
  cmd->add_option("--profile", o->profile,
                  "intended | flashinfer | flashinfer-pod (default: the first profile the trace's expectations name, "
                  "else intended)");
  cmd->add_option("--policy", o->policy, "tolerance policy: calibrated (default), flashinfer, flashinfer-bench");
  cmd->add_flag("--force", o->force, "replace an existing output file");
  cmd->callback([o, &result] { result.exit_code = app::run_plot(*o); });
}

}  // namespace podcheck::cli

// podcheck selfcheck: the float64 reference checks itself over a tier of small cases (app/selfcheck.hpp).
#include "cli/commands.hpp"

#include "app/selfcheck.hpp"

#include <omp.h>

#include <memory>

namespace podcheck::cli {

void add_selfcheck(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("selfcheck",
                                 "Check the float64 reference against itself (fast vs naive, double vs 50 digits)");
  struct Opts {
    app::SelfcheckOptions s;
    int jobs = 0;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--tier", o->s.tier, "Tier of cases to check")->capture_default_str();
  cmd->add_option("--case", o->s.cases, "Check only this case id (repeatable); overrides --tier");
  cmd->add_option("-j,--jobs", o->jobs, "OpenMP threads (default: all)");
  cmd->callback([o, &result] {
    if (o->jobs < 0) throw UsageError("-j must be >= 1");
    if (o->jobs > 0) omp_set_num_threads(o->jobs);
    result.exit_code = app::run_selfcheck(o->s);
  });
}

}  // namespace podcheck::cli

// podcheck bench: `bench reference` (the fast float64 reference against a roofline measured in the same run,
// app/bench_reference.hpp) and `bench kernel` (cli/cmd_bench_kernel.cpp) under one command.
#include "cli/commands.hpp"

#include "app/bench_reference.hpp"

#include <memory>

namespace podcheck::cli {

void add_bench(CLI::App& app, CommandResult& result) {
  auto* bench = app.add_subcommand("bench", "Time the float64 reference or a kernel");
  bench->require_subcommand(1);
  auto* ref = bench->add_subcommand("reference", "Time the fast float64 reference against OpenBLAS dgemm");
  auto opts = std::make_shared<app::BenchReferenceOptions>();
  ref->add_option("--json", opts->json, "Also write the results as JSON to FILE");
  ref->add_flag("--quick", opts->quick, "Smaller problems (skips the 12288^2 prefill)");
  ref->add_flag("--force", opts->force, "Overwrite an existing --json file");
  ref->add_option("--case", opts->only, "Run only the cases whose name contains SUBSTR (e.g. decode)");
  ref->callback([opts, &result] {
    app::run_bench_reference(*opts);
    result.exit_code = 0;
  });
  add_bench_kernel(*bench, result);
}

}  // namespace podcheck::cli

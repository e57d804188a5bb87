// Subcommands of the podcheck CLI. The CLI is thin: each command parses its options and makes one call into
// app/ (the jobs), which prints and returns the exit status: 0 success, 1 parity failure, 2 usage or input error.
#pragma once

#include "app/errors.hpp"

#include <CLI/CLI.hpp>

#include <stdexcept>

namespace podcheck::cli {

struct CommandResult {
  int exit_code = 0;
};

void add_selfcheck(CLI::App& app, CommandResult& result);  // cli/cmd_selfcheck.cpp  (reference)
void add_bench(CLI::App& app, CommandResult& result);      // cli/cmd_bench.cpp      (reference, kernels)
void add_sweep(CLI::App& app, CommandResult& result);      // cli/cmd_sweep.cpp      (fixtures)
void add_generate(CLI::App& app, CommandResult& result);   // cli/cmd_generate.cpp   (fixtures)
void add_inspect(CLI::App& app, CommandResult& result);    // cli/cmd_inspect.cpp    (fixtures, traces)
void add_import(CLI::App& app, CommandResult& result);     // cli/cmd_import.cpp     (traces)
void add_export(CLI::App& app, CommandResult& result);     // cli/cmd_export.cpp     (traces)
void add_replay(CLI::App& app, CommandResult& result);     // cli/cmd_replay.cpp     (validation)
void add_validate(CLI::App& app, CommandResult& result);   // cli/cmd_validate.cpp   (validation)
void add_merge(CLI::App& app, CommandResult& result);      // cli/cmd_merge.cpp      (validation)
void add_plot(CLI::App& app, CommandResult& result);       // cli/cmd_plot.cpp       (validation)
void add_run(CLI::App& app, CommandResult& result);        // cli/cmd_run.cpp        (kernels)
// Registers `bench kernel` under the `bench` subcommand (cli/cmd_bench_kernel.cpp; kernels).
void add_bench_kernel(CLI::App& bench, CommandResult& result);

// Thrown for bad usage or bad input; main prints "podcheck: error: <what>" and exits 2.
using app::UsageError;

}  // namespace podcheck::cli

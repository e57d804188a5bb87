// podcheck: validate fused POD attention kernels against a double-precision reference.
#include "cli/commands.hpp"

#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
  CLI::App app{"podcheck: a double-precision reference and validation framework for fused POD attention "
               "kernels (prefill + paged decode in one launch)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "podcheck 0.1.0");
  podcheck::cli::CommandResult result;
  podcheck::cli::add_validate(app, result);
  podcheck::cli::add_replay(app, result);
  podcheck::cli::add_selfcheck(app, result);
  podcheck::cli::add_sweep(app, result);
  podcheck::cli::add_generate(app, result);
  podcheck::cli::add_inspect(app, result);
  podcheck::cli::add_import(app, result);
  podcheck::cli::add_export(app, result);
  podcheck::cli::add_merge(app, result);
  podcheck::cli::add_plot(app, result);
  podcheck::cli::add_run(app, result);
  podcheck::cli::add_bench(app, result);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "podcheck: error: %s\n", e.what());
    return 2;
  }
  return result.exit_code;
}

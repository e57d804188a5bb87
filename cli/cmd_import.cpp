// podcheck import: recordings of other kernels -> one podcheck trace or fixture file (app/imports.hpp).
#include "cli/commands.hpp"

#include "app/imports.hpp"

#include <memory>

namespace podcheck::cli {

namespace {

void add_output(CLI::App* c, app::ImportOutput& out) {
  c->add_option("-o,--output", out.output, "trace file to write")->required();
  c->add_flag("--force", out.force, "overwrite OUT if it exists");
  c->add_option("--gzip", out.gzip, "gzip level for large datasets (shuffle on)")->check(CLI::Range(0, 9));
}

}  // namespace

void add_import(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("import", "Bring recordings of other kernels in as podcheck traces");
  cmd->require_subcommand(1);

  struct FiOpts {
    std::vector<std::string> inputs;
    app::ImportOutput out;
  };
  auto fi = std::make_shared<FiOpts>();
  auto* c1 = cmd->add_subcommand("flashinfer",
                                 "FlashInfer POD / BatchPOD / standalone prefill+decode recordings (HDF5) -> trace");
  c1->add_option("inputs", fi->inputs, "recorded HDF5 files")->required()->check(CLI::ExistingFile);
  add_output(c1, fi->out);
  c1->callback([fi, &result] { result.exit_code = app::import_flashinfer_recordings(fi->inputs, fi->out); });

  auto dump = std::make_shared<app::DumpImportJob>();
  auto* c2 = cmd->add_subcommand(
      "flashinfer-dump", "FlashInfer's API-logging dumps (FLASHINFER_LOGLEVEL=10, FLASHINFER_DUMP_SAFETENSORS=1) -> trace");
  c2->add_option("dirs", dump->dirs, "dump folders (FLASHINFER_DUMP_DIR) or single call folders")
      ->required()
      ->check(CLI::ExistingDirectory);
  add_output(c2, dump->out);
  c2->add_option("--kv-layout", dump->kv_layout, "NHD or HND: the cache layout of wrappers whose __init__ is not in the dump")
      ->check(CLI::IsMember({"NHD", "HND"}));
  c2->add_flag("--skip-unsupported", dump->skip_unsupported, "import the calls podcheck can model and list the others");
  c2->callback([dump, &result] { result.exit_code = app::import_flashinfer_dumps(*dump); });

  auto fib = std::make_shared<app::FibImportJob>();
  auto* c3 = cmd->add_subcommand("fib", "flashinfer-bench dataset (definitions/, workloads/, blob/) -> fixture, one case per workload");
  c3->add_option("dataset", fib->dataset, "dataset folder")->required()->check(CLI::ExistingDirectory);
  c3->add_option("-o,--output", fib->output, "fixture file to write (the workloads' inputs)")->required();
  c3->add_flag("--force", fib->force, "overwrite OUT if it exists");
  c3->add_flag("--with-reference", fib->with_reference, "also store float64 reference outputs");
  c3->add_option("--definition", fib->definitions, "only these definitions (default: every supported one)");
  c3->add_option("--seed", fib->seed, "seed of podcheck's generator for inputs of type random (default 0)");
  c3->callback([fib, &result] { result.exit_code = app::import_fib_dataset(*fib); });
}

}  // namespace podcheck::cli

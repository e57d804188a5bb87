// podcheck import: recordings of other kernels -> one podcheck trace file.
//   flashinfer       IN.h5...  FlashInfer recordings in the project's HDF5 layouts (traces/import_flashinfer.hpp)
//   flashinfer-dump  DIR...    FlashInfer's own API-logging dumps (traces/flashinfer_dump.hpp)
//   fib              DATASET   flashinfer-bench workloads (traces/fib.hpp)
#include "cli/commands.hpp"
#include "traces/fib.hpp"
#include "traces/flashinfer_dump.hpp"
#include "traces/import_flashinfer.hpp"
#include "fixtures/fixture_io.hpp"
#include "reference/reference.hpp"
#include "traces/trace_io.hpp"

#include <cstdio>
#include <set>

namespace podcheck::cli {

namespace {

struct OutOpts {
  std::string output;
  bool force = false;
  int gzip = 9;
  void add_to(CLI::App* c) {
    c->add_option("-o,--output", output, "trace file to write")->required();
    c->add_flag("--force", force, "overwrite OUT if it exists");
    c->add_option("--gzip", gzip, "gzip level for large datasets (shuffle on)")->check(CLI::Range(0, 9));
  }
  void write(const std::vector<Trace>& all) const {
    TraceWriteOptions o;
    o.force = force;
    o.gzip_level = gzip;
    write_traces(output, all, o);
  }
};

void add_flashinfer(CLI::App* cmd, CommandResult& result) {
  auto* fi = cmd->add_subcommand("flashinfer",
                                 "FlashInfer POD / BatchPOD / standalone prefill+decode recordings (HDF5) -> trace");
  struct Opts {
    std::vector<std::string> inputs;
    OutOpts out;
  };
  auto opts = std::make_shared<Opts>();
  fi->add_option("inputs", opts->inputs, "recorded HDF5 files")->required()->check(CLI::ExistingFile);
  opts->out.add_to(fi);
  fi->callback([opts, &result] {
    std::vector<Trace> all;
    std::set<std::string> ids;
    for (const std::string& in : opts->inputs) {
      for (Trace& t : import_flashinfer(in)) {
        if (!ids.insert(t.kase.id).second) throw UsageError("case '" + t.kase.id + "' appears twice (in '" + in + "')");
        all.push_back(std::move(t));
      }
    }
    opts->out.write(all);
    std::printf("imported %zu case(s) from %zu file(s) into %s\n", all.size(), opts->inputs.size(), opts->out.output.c_str());
    result.exit_code = 0;
  });
}

void add_flashinfer_dump(CLI::App* cmd, CommandResult& result) {
  auto* c = cmd->add_subcommand("flashinfer-dump",
                                "FlashInfer's API-logging dumps (FLASHINFER_LOGLEVEL=10, FLASHINFER_DUMP_SAFETENSORS=1) -> trace");
  struct Opts {
    std::vector<std::string> dirs;
    OutOpts out;
    std::string kv_layout;
    bool skip_unsupported = false;
  };
  auto opts = std::make_shared<Opts>();
  c->add_option("dirs", opts->dirs, "dump folders (FLASHINFER_DUMP_DIR) or single call folders")->required()->check(CLI::ExistingDirectory);
  opts->out.add_to(c);
  c->add_option("--kv-layout", opts->kv_layout, "NHD or HND: the cache layout of wrappers whose __init__ is not in the dump")
      ->check(CLI::IsMember({"NHD", "HND"}));
  c->add_flag("--skip-unsupported", opts->skip_unsupported, "import the calls podcheck can model and list the others");
  c->callback([opts, &result] {
    DumpImportOptions o;
    if (!opts->kv_layout.empty()) o.kv_layout = layout_from_name(opts->kv_layout);
    o.skip_unsupported = opts->skip_unsupported;
    DumpImportResult r = import_flashinfer_dump(opts->dirs, o);
    if (r.traces.empty()) throw UsageError("no call in the dump imports as a case (" + std::to_string(r.notes.size()) + " note(s) below)");
    opts->out.write(r.traces);
    for (const auto& n : r.notes) std::printf("note: %s\n", n.c_str());
    std::printf("imported %zu call(s) from %zu dump folder(s) into %s\n", r.traces.size(), opts->dirs.size(),
                opts->out.output.c_str());
    result.exit_code = 0;
  });
}

void add_fib(CLI::App* cmd, CommandResult& result) {
  auto* c = cmd->add_subcommand("fib", "flashinfer-bench dataset (definitions/, workloads/, blob/) -> fixture, one case per workload");
  struct Opts {
    std::string dataset, output;
    bool force = false, reference = false;
    std::vector<std::string> definitions;
    std::uint64_t seed = 0;
  };
  auto opts = std::make_shared<Opts>();
  c->add_option("dataset", opts->dataset, "dataset folder")->required()->check(CLI::ExistingDirectory);
  c->add_option("-o,--output", opts->output, "fixture file to write (the workloads' inputs)")->required();
  c->add_flag("--force", opts->force, "overwrite OUT if it exists");
  c->add_flag("--with-reference", opts->reference, "also store float64 reference outputs");
  c->add_option("--definition", opts->definitions, "only these definitions (default: every supported one)");
  c->add_option("--seed", opts->seed, "seed of podcheck's generator for inputs of type random (default 0)");
  c->callback([opts, &result] {
    FibImportOptions o;
    o.definitions = opts->definitions;
    o.seed = opts->seed;
    FibImportResult r = import_fib(opts->dataset, o);
    if (r.cases.empty()) throw UsageError("no workload of a supported definition under '" + opts->dataset + "'");
    std::vector<Fixture> fx;
    for (auto& fc : r.cases) {
      Fixture f;
      if (opts->reference) f.reference = reference_fast(fc.kase);
      f.kase = std::move(fc.kase);
      fx.push_back(std::move(f));
    }
    FixtureWriteOptions wo;
    wo.force = opts->force;
    write_fixtures(opts->output, fx, wo);
    for (const auto& n : r.notes) std::printf("note: %s\n", n.c_str());
    std::printf("imported %zu workload(s) from %s into %s\n", fx.size(), opts->dataset.c_str(), opts->output.c_str());
    result.exit_code = 0;
  });
}

}  // namespace

void add_import(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("import", "Bring recordings of other kernels in as podcheck traces");
  cmd->require_subcommand(1);
  add_flashinfer(cmd, result);
  add_flashinfer_dump(cmd, result);
  add_fib(cmd, result);
}

}  // namespace podcheck::cli

// podcheck import flashinfer IN.h5... -o OUT.h5 [--force]: FlashInfer recordings -> one podcheck trace file.
#include "cli/commands.hpp"
#include "fixtures/atomic_file.hpp"
#include "traces/import_flashinfer.hpp"
#include "traces/trace_io.hpp"

#include <cstdio>
#include <set>

namespace podcheck::cli {

void add_import(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("import", "Bring recordings of other kernels in as podcheck traces");
  cmd->require_subcommand(1);
  auto* fi = cmd->add_subcommand("flashinfer",
                                 "FlashInfer POD / BatchPOD / standalone prefill+decode recordings (HDF5) -> trace");
  struct Opts {
    std::vector<std::string> inputs;
    std::string output;
    bool force = false;
    int gzip = 9;
  };
  auto opts = std::make_shared<Opts>();
  fi->add_option("inputs", opts->inputs, "recorded HDF5 files")->required()->check(CLI::ExistingFile);
  fi->add_option("-o,--output", opts->output, "trace file to write")->required();
  fi->add_flag("--force", opts->force, "overwrite OUT if it exists");
  fi->add_option("--gzip", opts->gzip, "gzip level for large datasets (shuffle on)")->check(CLI::Range(0, 9));
  fi->callback([opts, &result] {
    try {
      (void)check_output(opts->output, opts->force, /*allow_stream=*/false);  // before reading any input
    } catch (const OutputError& e) {
      throw UsageError(e.what());
    }
    std::vector<Trace> all;
    std::set<std::string> ids;
    for (const std::string& in : opts->inputs) {
      // read in a child process: a libhdf5 crash on a corrupt recording is an error, not a signal
      FileRead<Trace> r = import_flashinfer_file(in);
      if (!r.ok()) throw FormatError(r.error);
      for (CaseRead<Trace>& c : r.cases) {
        if (!c.ok()) throw FormatError(c.error);
        Trace& t = *c.value;
        if (!ids.insert(t.kase.id).second) throw UsageError("case '" + t.kase.id + "' appears twice (in '" + in + "')");
        all.push_back(std::move(t));
      }
    }
    TraceWriteOptions o;
    o.force = opts->force;
    o.gzip_level = opts->gzip;
    write_traces(opts->output, all, o);
    std::printf("imported %zu case(s) from %zu file(s) into %s\n", all.size(), opts->inputs.size(), opts->output.c_str());
    result.exit_code = 0;
  });
}

}  // namespace podcheck::cli

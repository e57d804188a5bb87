// Imports and exports (imports.hpp).
#include "app/imports.hpp"

#include "app/errors.hpp"
#include "fixtures/atomic_file.hpp"
#include "fixtures/fixture_io.hpp"
#include "fixtures/sweep.hpp"
#include "reference/reference.hpp"
#include "traces/fib.hpp"
#include "traces/flashinfer_dump.hpp"
#include "traces/import_flashinfer.hpp"
#include "traces/trace_io.hpp"

#include <cstdio>
#include <filesystem>
#include <set>

namespace podcheck::app {

namespace {

void check_target(const std::string& path, bool force) {
  try {
    (void)check_output(path, force, /*allow_stream=*/false);  // before reading any input
  } catch (const OutputError& e) {
    throw UsageError(e.what());
  }
}

void write(const ImportOutput& out, const std::vector<Trace>& all) {
  TraceWriteOptions o;
  o.force = out.force;
  o.gzip_level = out.gzip;
  write_traces(out.output, all, o);
}

std::vector<Case> cases_of(const std::string& arg, const std::set<std::string>& only) {
  std::vector<Case> out;
  std::error_code ec;
  if (std::filesystem::is_regular_file(arg, ec)) {
    auto keep = [&](const Case& c) { return only.empty() || only.count(c.id); };
    if (is_trace_file(arg)) {
      for (auto& t : read_traces(arg))
        if (keep(t.kase)) out.push_back(std::move(t.kase));
    } else {
      for (auto& f : read_fixtures(arg))
        if (keep(f.kase)) out.push_back(std::move(f.kase));
    }
    return out;
  }
  try {
    out.push_back(make_case(arg));
  } catch (const std::exception& e) {
    throw UsageError("'" + arg + "' is neither a fixture or trace file nor a case id podcheck generates: " + e.what());
  }
  return out;
}

}  // namespace

int import_flashinfer_recordings(const std::vector<std::string>& inputs, const ImportOutput& out) {
  check_target(out.output, out.force);
  std::vector<Trace> all;
  std::set<std::string> ids;
  for (const std::string& in : inputs) {
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
  write(out, all);
  std::printf("imported %zu case(s) from %zu file(s) into %s\n", all.size(), inputs.size(), out.output.c_str());
  return 0;
}

int import_flashinfer_dumps(const DumpImportJob& job) {
  check_target(job.out.output, job.out.force);
  DumpImportOptions o;
  if (!job.kv_layout.empty()) o.kv_layout = layout_from_name(job.kv_layout);
  o.skip_unsupported = job.skip_unsupported;
  DumpImportResult r = import_flashinfer_dump(job.dirs, o);
  if (r.traces.empty())
    throw UsageError("no call in the dump imports as a case (" + std::to_string(r.notes.size()) + " note(s) below)");
  write(job.out, r.traces);
  for (const auto& n : r.notes) std::printf("note: %s\n", n.c_str());
  std::printf("imported %zu call(s) from %zu dump folder(s) into %s\n", r.traces.size(), job.dirs.size(),
              job.out.output.c_str());
  return 0;
}

int import_fib_dataset(const FibImportJob& job) {
  check_target(job.output, job.force);
  FibImportOptions o;
  o.definitions = job.definitions;
  o.seed = job.seed;
  FibImportResult r = import_fib(job.dataset, o);
  if (r.cases.empty()) throw UsageError("no workload of a supported definition under '" + job.dataset + "'");
  std::vector<Fixture> fx;
  for (auto& fc : r.cases) {
    Fixture f;
    if (job.with_reference) f.reference = reference_fast(fc.kase);
    f.kase = std::move(fc.kase);
    fx.push_back(std::move(f));
  }
  FixtureWriteOptions wo;
  wo.force = job.force;
  write_fixtures(job.output, fx, wo);
  for (const auto& n : r.notes) std::printf("note: %s\n", n.c_str());
  std::printf("imported %zu workload(s) from %s into %s\n", fx.size(), job.dataset.c_str(), job.output.c_str());
  return 0;
}

int export_fib_cases(const FibExportJob& job) {
  std::set<std::string> only(job.only.begin(), job.only.end());
  std::vector<Case> cases;
  for (const auto& a : job.args)
    for (auto& c : cases_of(a, only)) cases.push_back(std::move(c));
  if (cases.empty()) throw UsageError("no case to export");
  FibExportResult r;
  try {
    r = export_fib(cases, job.dir);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  for (const auto& n : r.notes) std::printf("note: %s\n", n.c_str());
  std::printf("exported %zu case(s) into %s (%zu files)\n", cases.size(), job.dir.c_str(), r.files.size());
  return 0;
}

}  // namespace podcheck::app

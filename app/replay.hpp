// Replaying recorded traces: every case of every file judged (validation::judge) under the profiles its
// expectations name, with reproduce commands and failure data. A file or a case that cannot be read becomes
// an invalid-case verdict naming the file, case and problem; the other files and cases are still judged.
#pragma once

#include "fixtures/sweep.hpp"
#include "traces/trace.hpp"
#include "validation/judge.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace podcheck::app {

using validation::CaseResult;

// Where failing cases leave their data (STYLE E11): a trace with the reference and the diff, and the verdict
// as JSON, one pair of files per (case, profile).
struct Artifacts {
  bool enabled = true;
  std::string dir = "podcheck-failures";
};

struct ReplayOptions {
  validation::Policy policy = validation::Policy::calibrated;
  std::optional<Profile> profile;   // forced; else the profiles the trace's expectations name, else intended
  validation::OutputSet required;   // outputs every case must have recorded (--require-outputs)
  std::string case_filter;          // exact id ("" = all)
  Shard shard;                      // over the cases of all files, in order
  Artifacts artifacts;
  std::function<void(const CaseResult&, int done, int total)> progress;  // called after each verdict
  // Called with each verdict of a trace that could be read, and the trace, before `progress`: what reports
  // need from the case (the heat maps, made while the outputs are at hand; flashinfer-bench lines; the
  // capture summary of a FlashInfer dump).
  std::function<void(const CaseResult&, const Trace&)> on_trace;
};

// Profiles a trace is judged under: the forced one, else those its expectations name, else intended.
std::vector<Profile> profiles_for(const Trace& t, const std::optional<Profile>& forced);

// Replays every case of the files. Throws UsageError only when --case names no case of any readable file.
std::vector<CaseResult> replay_files(const std::vector<std::string>& files, const ReplayOptions& options);

// Judges one trace under one profile: verdict, expectation, reproduce command, failure data.
CaseResult replay_trace(const Trace& t, const std::string& file, Profile profile, const ReplayOptions& options);

// "podcheck replay FILE --case 'ID' --profile P" (shell-quoted).
std::string reproduce_command(const std::string& file, const std::string& id, Profile profile,
                              validation::Policy policy);

// Failure data of one judged case (what replay writes for a failing case): the file it goes to,
// <dir>/<id>__<profile>.h5, and the writing itself — the trace with the reference outputs and diff/ plus
// <path>.json with the verdict (case_json). write_failure_data sets r.artifact to the path, or to
// "(not written: why)" when it cannot be written. Used by replay and by the Python module's assertions.
std::string failure_data_path(const Artifacts& artifacts, const std::string& id, Profile profile);
void write_failure_data(CaseResult& r, const Trace& t, const std::string& path);

// Every *.h5 file under dir (recursively), sorted.
std::vector<std::string> trace_files_under(const std::string& dir);

}  // namespace podcheck::app

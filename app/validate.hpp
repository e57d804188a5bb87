// The jobs that judge recorded traces and print as they go: `podcheck replay` (given files) and
// `podcheck validate` (the main job: the reference's self-consistency on a tier plus a replay of the golden
// traces), and `podcheck merge` (sharded JSON reports joined). Each returns the exit status (report.hpp).
#pragma once

#include "app/replay.hpp"
#include "app/report.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace podcheck::app {

struct JudgeJobOptions {
  ReplayOptions replay;  // policy, profile, required outputs, case filter, shard, failure data
  ReportFiles reports;   // --json / --junit / --html
  std::string fib_trace; // --fib-trace: the verdicts as flashinfer-bench Trace lines (JSONL)
  bool quiet = false;    // print failures and the summary only
};

// Collects what the reports beside the JSON/JUnit ones need from each judged trace: flashinfer-bench Trace lines
// (traces/fib_trace.hpp) and, for cases imported from FlashInfer API-logging dumps, their calls in capture
// order (traces/flashinfer_dump.hpp), printed as the capture summary: the first failing call, each wrapper
// instance's layers with their verdicts.
class TraceReports {
 public:
  explicit TraceReports(const JudgeJobOptions& options);
  void add(const Trace& t, const CaseResult& r);
  // Prints the capture summary (when dump calls were judged) and writes the --fib-trace file.
  void finish(std::FILE* out) const;

 private:
  const JudgeJobOptions& options_;
  std::vector<std::string> fib_lines_;
  std::vector<Trace> dump_calls_;  // id and provenance only
  std::vector<CaseResult> dump_results_;
};

int run_replay(const std::vector<std::string>& files, const JudgeJobOptions& options);

struct ValidateOptions {
  JudgeJobOptions job;
  std::string tier = "quick";  // reference self-consistency tier; "none" skips it
  std::string traces;          // folder of traces to replay; "" = the golden traces (golden.hpp)
  bool no_golden = false;      // replay nothing (only with no --traces)
};
int run_validate(const ValidateOptions& options);

struct MergeOptions {
  std::vector<std::string> inputs;
  std::string output, junit, html;  // html: the page of the merged cases, with the maps the reports carry
  bool force = false;
};
int run_merge(const MergeOptions& options);

}  // namespace podcheck::app

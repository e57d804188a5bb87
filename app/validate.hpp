// The jobs that judge recorded traces and print as they go: `podcheck replay` (given files) and
// `podcheck validate` (the main job: the reference's self-consistency on a tier plus a replay of the golden
// traces), and `podcheck merge` (sharded JSON reports joined). Each returns the exit status (report.hpp).
#pragma once

#include "app/replay.hpp"
#include "app/report.hpp"

#include <string>
#include <vector>

namespace podcheck::app {

struct JudgeJobOptions {
  ReplayOptions replay;  // policy, profile, required outputs, case filter, shard, failure data
  ReportFiles reports;   // --json / --junit / --html
  bool quiet = false;    // print failures and the summary only
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

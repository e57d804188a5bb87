// The main job's loops: replay trace files and check the reference's self-consistency on a tier.
// File and fixture access come in through hooks (the CLI passes traces/ and fixtures/ functions), so that
// validation depends on the case model only and traces/ may depend on validation.
#pragma once

#include "fixtures/sweep.hpp"
#include "traces/trace.hpp"
#include "validation/judge.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace podcheck::validation {

struct JobHooks {
  std::function<std::vector<Trace>(const std::string& path)> read_traces;
  // Writes a failure's data (inputs, observed, reference) to path; empty: no artifacts.
  std::function<void(const std::string& path, const Trace& trace)> write_failure;
  std::function<std::vector<std::string>(std::string_view tier, Shard shard)> list_tier;
  std::function<Case(std::string_view id)> make_case;
};

struct JobOptions {
  Policy policy = Policy::calibrated;
  std::optional<Profile> profile;  // forced; else the profiles the trace's expectations name, else intended
  std::string case_filter;         // exact id ("" = all)
  bool artifacts = true;
  std::string artifacts_dir = "podcheck-failures";
  Shard shard;
  int selfcheck_rows = 3;  // sampled query rows per side (first, middle, last)
  std::function<void(const CaseResult&, int done, int total)> progress;  // called after each case
};

// Profiles a trace is judged under (see JobOptions::profile).
std::vector<Profile> profiles_for(const Trace& t, const JobOptions& o);

// Replays every trace of the files (filtered by case id and shard). Throws what read_traces throws
// (bad files are input errors). Fills reproduce commands and writes failure artifacts.
std::vector<CaseResult> replay_files(const std::vector<std::string>& files, const JobHooks& hooks,
                                     const JobOptions& options);

// Judges one trace under one profile, with reproduce command and artifact (the unit replay_files uses).
CaseResult replay_one(const Trace& t, const std::string& file, Profile profile, const JobHooks& hooks,
                      const JobOptions& options);

// Reference self-consistency on a tier: fast vs naive (double) on a few sampled rows per side and head.
std::vector<CaseResult> selfcheck_tier(std::string_view tier, const JobHooks& hooks, const JobOptions& options);
CaseResult selfcheck_case(const Case& c, int sampled_rows);

// "podcheck replay FILE --case 'ID' --profile P" (shell-quoted).
std::string reproduce_command(const std::string& file, const std::string& id, Profile profile, Policy policy);

// Every *.h5 file under dir (recursively), sorted.
std::vector<std::string> trace_files_under(const std::string& dir);
// The first `traces/golden` folder found searching upward from each start directory; "" if none.
std::string find_golden_dir(const std::vector<std::string>& starts);

}  // namespace podcheck::validation

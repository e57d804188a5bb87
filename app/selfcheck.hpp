// The reference checks itself. One bound, the reference's own (kFastVsNaiveBound, row_rel_diff in
// reference/reference.hpp), for both forms:
//   sampled  `podcheck validate`: fast vs naive (double) on a few sampled rows of every head pair of a tier's
//            cases, as verdicts (kind "selfcheck");
//   deep     `podcheck selfcheck`: fast vs naive on every row, and naive double vs naive in 50-digit
//            arithmetic (Boost cpp_bin_float_50, kDoubleVsMultiprecisionBound) on sampled rows.
#pragma once

#include "fixtures/sweep.hpp"
#include "validation/judge.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace podcheck::app {

using validation::CaseResult;

// Sampled rows per side (first, last, spread between) and the first and last head.
CaseResult selfcheck_sampled(const Case& c, int sampled_rows = 3);

struct SelfcheckTierOptions {
  std::string tier = "quick";
  Shard shard;
  std::string case_filter;  // exact id ("" = all)
  int sampled_rows = 3;
  std::function<void(const CaseResult&, int done, int total)> progress;
  std::function<void(const CaseResult&, const Case&)> on_case;  // each verdict of a case that was built
};
// selfcheck_sampled over a tier; a case the generator refuses is an invalid-case verdict.
std::vector<CaseResult> selfcheck_tier(const SelfcheckTierOptions& options);

struct DeepCheck {
  std::string id;
  double fast_vs_naive = 0;  // worst row_rel_diff over every (row, head)
  double naive_vs_mp = 0;    // worst over the sampled rows
  int mp_rows = 0;
  bool passed() const;
};
DeepCheck selfcheck_deep(const Case& c);

struct SelfcheckOptions {
  std::string tier = "selfcheck";
  std::vector<std::string> cases;  // overrides tier
};
// The `podcheck selfcheck` job: a table line per case on stdout, progress on stderr. Returns the exit status.
int run_selfcheck(const SelfcheckOptions& options);

}  // namespace podcheck::app

// The shapes of one side's wrong values (validation/diagnose.hpp runs them): which structure explains the
// set of failing (row, head) cells, each finding with a rank so that the most specific comes first.
// NaN elements (never written or computed NaN) are not part of the set: diagnose reports their structure.
#pragma once

#include "validation/diagnose.hpp"
#include "validation/error_map.hpp"
#include "validation/finding.hpp"
#include "validation/variants.hpp"

#include <vector>

namespace podcheck::validation {

// Ranks: lower comes first; stable within a rank.
inline constexpr int kRankNonfinite = 0;   // elements never written / NaN: their structure
inline constexpr int kRankSingle = 5;      // one element
inline constexpr int kRankExplains = 10;   // a mechanism that explains the error set exactly
inline constexpr int kRankSemantic = 12;   // a semantic variant the kernel matches
inline constexpr int kRankWhere = 20;      // where the errors are confined (heads, tiles, positions, KV)
inline constexpr int kRankOnly = 30;       // only one tensor / request / side is wrong
inline constexpr int kRankSpread = 40;     // no structure found
inline constexpr int kRankPartial = 45;    // semantic variants that fix some tensors
inline constexpr int kRankNone = 50;

struct RankedFinding {
  int rank = kRankSpread;
  Finding finding;
};

// Patterns of the side's failing cells. `variants` are the case's semantic variants (the mask-only ones are
// used to find mask bounds); `work` is a scratch copy of the profiled case (page tables are rewritten in it
// and restored).
std::vector<RankedFinding> side_patterns(const DiagnosisInput& in, SideKind side, const CellErrors& cells,
                                         const std::vector<Variant>& variants, Case& work);

}  // namespace podcheck::validation

// What a report adds to a verdict while the case and the kernel's outputs are at hand (the replay, validate and
// run loops): the case's attributes (kind, dtypes, features: the HTML page filters on them) and, for a case
// whose outputs were judged wrong, its heat maps of error / bound (validation/error_map.hpp), binned for a
// report. Both go into the JSON report ("case", "heat_maps") so that `podcheck merge` can draw them too.
//
// JSON of one map: {side, request, tensor, rows, heads, row_bins, head_bins, rows_per_bin, heads_per_bin,
// cells: "0.12 0.5 3.4 nan inf ..." (row_bins x head_bins ratios, row-major, 3 digits, space-separated: a
// string keeps a pretty-printed report small; nan = never written, inf = a non-finite mismatch)}.
#pragma once

#include "reference/case.hpp"
#include "reference/outputs.hpp"
#include "validation/error_map.hpp"
#include "validation/judge.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace podcheck::app {

using validation::CaseResult;
using validation::HeatMap;

// Report maps are binned to at most this many head bins, and each (side, tensor) panel, the requests of the
// side stacked, to at most this many row bins (every request keeps at least one).
inline constexpr int kMaxHeadBins = 64;
inline constexpr std::int64_t kMaxPanelRowBins = 128;
// At most this many failing cases of one run (or one shard) get maps, and a page draws at most this many: a
// map costs about what judging the case did (the reference and the emulator again), and a broken kernel can
// fail thousands of cases. Later ones carry a note instead.
inline constexpr int kMaxMapCases = 100;

// {kind: "single"|"batch"|"prefill"|"decode", dtype: "f16" | "bf16" | "f16/e4m3" (q, then kv when it differs),
//  heads: "32/8", head_dim, features: ["causal", "gqa", "paged", ...]} (docs/VALIDATION.md lists them).
nlohmann::json case_info(const Case& c);

// A case gets maps when its outputs were judged wrong: status incorrect with at least one checked output.
bool wants_maps(const CaseResult& r);

// The report's maps of a case: validation::heat_maps under the result's policy and profile, then coarsened
// (each bin a block of whole bins, so every bin is still the max of the cells it covers) to the limits above.
std::vector<HeatMap> report_heat_maps(const Case& c, const KernelOutputs& observed, validation::Policy policy,
                                      Profile profile);
// Coarsens maps so that each (side, tensor) panel has at most max_panel_rows row bins.
std::vector<HeatMap> fit_panel_rows(std::vector<HeatMap> maps, std::int64_t max_panel_rows);

nlohmann::json heat_maps_json(const std::vector<HeatMap>& maps);
// Throws std::invalid_argument naming the field that is missing or inconsistent.
std::vector<HeatMap> heat_maps_from_json(const nlohmann::json& maps);

// Case attributes and maps of the verdicts of one run, keyed by (source, id, profile), attached to the JSON
// report when it is written. A map that cannot be computed leaves a note in its place ("heat_maps_note").
class ReportExtras {
 public:
  void add(const CaseResult& r, const Case& c, const KernelOutputs& observed);  // a judged trace
  void add_info(const CaseResult& r, const Case& c);                            // attributes only
  // Adds "case", "heat_maps" and "heat_maps_note" to the cases of a report_json() that have them.
  void attach(nlohmann::json& report) const;
  std::size_t size() const { return extras_.size(); }
  int max_map_cases = kMaxMapCases;

 private:
  std::map<std::string, nlohmann::json> extras_;
  int map_cases_ = 0;
};

}  // namespace podcheck::app

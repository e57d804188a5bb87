// The HTML report (`--html FILE` on validate, replay, run --check and merge): one self-contained page made from
// a JSON report (report_json() with the extras of report_maps.hpp, or a merged report), with no network
// access: CSS and JS inline, pictures as PNG data URIs inside inline SVG.
//
// The page: the summary; a table of every case (id, source, profile, status, verdict, worst error / bound,
// the metrics per output, seconds) sortable by column and filterable by status, verdict, kind, dtype, feature
// and text; then every failing case (verdict fail or xfail) with its worst element, diagnosis, reproduce
// command and heat maps of error / bound over (query row x head), one panel per (side, tensor) with the
// side's requests stacked, and the colour legend. The URL fragment sets filters and sort
// (#status=incorrect&sort=worst&dir=desc); docs/VALIDATION.md says how to read a map.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace podcheck::app {

struct HtmlOptions {
  std::string title = "podcheck report";  // e.g. "podcheck validate"
  int max_maps_cases = 100;               // failing cases drawn with maps (later ones: text only, with a note;
                                          // report_maps.hpp's kMaxMapCases)
};

// The page. Throws std::invalid_argument when the report is not a podcheck report (no 'cases' list) or a
// case's heat maps are malformed.
std::string html_report(const nlohmann::json& report, const HtmlOptions& options = {});

}  // namespace podcheck::app

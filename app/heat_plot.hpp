// Heat maps drawn (report_maps.hpp gives the maps): the colour scale of error / bound, panels (one per side and
// tensor, the side's requests stacked top to bottom as bands), the legend, and the figure `podcheck plot`
// writes. The HTML page (html_report.hpp) uses the same colours, panel cells and legend bar.
//
// Colours: within the bound (ratio < 1) a light-to-mid blue, darker as the error nears its bound; over it
// (ratio >= 1) yellow -> orange -> red -> dark red on a log scale up to 1000x; a non-finite mismatch (+-Inf,
// -inf or a value where the reference is empty or not) near-black; NaN (never written) magenta.
#pragma once

#include "app/png_image.hpp"
#include "validation/error_map.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace podcheck::app {

using validation::HeatMap;

enum class CellClass { within, over, nonfinite, unwritten };
CellClass cell_class(float ratio);  // NaN: unwritten; +inf: nonfinite; >= 1: over; else within
Rgb heat_color(float ratio);
std::string css_color(Rgb c);  // "#rrggbb"

// The legend bar: the left 40% of its width is ratio 0..1 (linear), the rest 1..1000 (log10).
double legend_ratio_at(double fraction);
double legend_fraction_of(double ratio);
Image legend_bar(int width, int height);

// One (side, tensor) panel: the maps of the side's requests, in request order.
struct Panel {
  SideKind side = SideKind::prefill;
  validation::TensorKind kind = validation::TensorKind::out;
  std::vector<const HeatMap*> maps;
  int heads = 0, head_bins = 0, heads_per_bin = 1;
  std::int64_t row_bins = 0;  // sum over the requests
  std::string tensor() const;  // "out_d"
};
// Panels of the maps: prefill before decode, out before lse.
std::vector<Panel> panels_of(const std::vector<HeatMap>& maps);
// The panel's cells, one pixel per bin, the requests stacked (the HTML page scales it up).
Image panel_cells(const Panel& p);

// Pixels per bin for a panel drawn about `target` pixels wide and tall (at least 1, at most 24).
int cell_width(const Panel& p, int target = 320);
int cell_height(const Panel& p, int target = 320);

// The figure of `podcheck plot`: header lines, then per side a row of panels (out, lse) with request labels,
// head axis and bin sizes, then the legend.
Image plot_figure(const std::vector<HeatMap>& maps, const std::vector<std::string>& header);

}  // namespace podcheck::app

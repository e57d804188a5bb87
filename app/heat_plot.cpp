// Colours, panels, legend and the figure of heat maps (heat_plot.hpp).
#include "app/heat_plot.hpp"

#include "app/report_maps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace podcheck::app {

using validation::TensorKind;

namespace {

struct Stop {
  double at;
  Rgb c;
};
constexpr Stop kWithin[] = {{0.0, {0xee, 0xf3, 0xf8}}, {0.5, {0xa6, 0xc8, 0xe4}}, {1.0, {0x3a, 0x7d, 0xbf}}};
constexpr Stop kOver[] = {{0.0, {0xff, 0xe0, 0x66}},
                          {1.0 / 3, {0xfd, 0x8d, 0x3c}},
                          {2.0 / 3, {0xd6, 0x28, 0x28}},
                          {1.0, {0x5c, 0x0a, 0x16}}};
constexpr Rgb kNonFinite{0x14, 0x14, 0x14};
constexpr Rgb kUnwritten{0xe0, 0x1e, 0xe0};
constexpr Rgb kInk{0x22, 0x22, 0x22}, kMuted{0x66, 0x66, 0x66}, kSeparator{0xff, 0xff, 0xff};
constexpr double kWithinShare = 0.4;  // of the legend bar

template <std::size_t N>
Rgb interpolate(const Stop (&stops)[N], double t) {
  t = std::clamp(t, 0.0, 1.0);
  for (std::size_t i = 1; i < N; ++i)
    if (t <= stops[i].at) {
      const double u = (t - stops[i - 1].at) / (stops[i].at - stops[i - 1].at);
      auto mix = [u](std::uint8_t a, std::uint8_t b) { return static_cast<std::uint8_t>(std::lround(a + u * (b - a))); };
      return {mix(stops[i - 1].c.r, stops[i].c.r), mix(stops[i - 1].c.g, stops[i].c.g), mix(stops[i - 1].c.b, stops[i].c.b)};
    }
  return stops[N - 1].c;
}

}  // namespace

CellClass cell_class(float r) {
  if (std::isnan(r)) return CellClass::unwritten;
  if (std::isinf(r)) return CellClass::nonfinite;
  return r >= 1.0f ? CellClass::over : CellClass::within;
}

Rgb heat_color(float r) {
  switch (cell_class(r)) {
    case CellClass::unwritten: return kUnwritten;
    case CellClass::nonfinite: return kNonFinite;
    case CellClass::over: return interpolate(kOver, std::log10(static_cast<double>(r)) / 3.0);
    case CellClass::within: break;
  }
  return interpolate(kWithin, std::max(0.0f, r));
}

std::string css_color(Rgb c) { return fmt::format("#{:02x}{:02x}{:02x}", c.r, c.g, c.b); }

double legend_ratio_at(double f) {
  f = std::clamp(f, 0.0, 1.0);
  if (f < kWithinShare) return f / kWithinShare;
  return std::pow(10.0, 3.0 * (f - kWithinShare) / (1.0 - kWithinShare));
}

double legend_fraction_of(double r) {
  if (r < 1.0) return kWithinShare * std::max(0.0, r);
  return kWithinShare + (1.0 - kWithinShare) * std::min(1.0, std::log10(r) / 3.0);
}

Image legend_bar(int width, int height) {
  Image img(width, height);
  for (int x = 0; x < width; ++x) {
    // the colour at the pixel's centre; the pixel holding the bound (ratio 1) takes the "over" colour
    const double f = (x + 0.5) / width;
    const double r = (f < kWithinShare && (x + 1.0) / width > kWithinShare) ? 1.0 : legend_ratio_at(f);
    img.fill(x, 0, 1, height, heat_color(static_cast<float>(r)));
  }
  return img;
}

std::string Panel::tensor() const { return tensor_name(side, kind); }

std::vector<Panel> panels_of(const std::vector<HeatMap>& maps) {
  std::vector<Panel> out;
  for (SideKind side : {SideKind::prefill, SideKind::decode})
    for (TensorKind kind : {TensorKind::out, TensorKind::lse}) {
      Panel p;
      p.side = side;
      p.kind = kind;
      for (const HeatMap& m : maps)
        if (m.side == side && m.kind == kind) p.maps.push_back(&m);
      if (p.maps.empty()) continue;
      std::stable_sort(p.maps.begin(), p.maps.end(), [](const HeatMap* a, const HeatMap* b) { return a->request < b->request; });
      p.heads = p.maps[0]->heads;
      p.head_bins = p.maps[0]->head_bins;
      p.heads_per_bin = p.maps[0]->heads_per_bin;
      for (const HeatMap* m : p.maps) p.row_bins += m->row_bins;
      out.push_back(std::move(p));
    }
  return out;
}

Image panel_cells(const Panel& p) {
  Image img(p.head_bins, static_cast<int>(p.row_bins));
  int y = 0;
  for (const HeatMap* m : p.maps) {
    for (std::int64_t i = 0; i < m->row_bins; ++i, ++y)
      for (int h = 0; h < m->head_bins && h < p.head_bins; ++h) img.set(h, y, heat_color(m->at(i, h)));
  }
  return img;
}

int cell_width(const Panel& p, int target) { return std::clamp(target / std::max(1, p.head_bins), 1, 24); }
int cell_height(const Panel& p, int target) {
  return std::clamp(static_cast<int>(target / std::max<std::int64_t>(1, p.row_bins)), 1, 24);
}

namespace {

constexpr int kScale = 2;                     // text scale of the figure
constexpr int kLine = 9 * kScale + 4;         // line height (descenders included)
constexpr int kMargin = 16, kGap = 28;

// Breaks a line into pieces of at most `chars` characters (at spaces when there is one in the second half).
std::vector<std::string> wrap(const std::string& s, std::size_t chars) {
  std::vector<std::string> out;
  std::string rest = s;
  chars = std::max<std::size_t>(chars, 8);
  while (rest.size() > chars) {
    std::size_t cut = rest.rfind(' ', chars);
    if (cut == std::string::npos || cut < chars / 2) cut = chars;
    out.push_back(rest.substr(0, cut));
    rest = rest.substr(cut == chars ? cut : cut + 1);
  }
  out.push_back(rest);
  return out;
}

struct PanelLayout {
  const Panel* p;
  int cx, cy, gutter, body_w, body_h, width, height;
  std::vector<std::string> below;  // axis lines under the cells
};

PanelLayout layout(const Panel& p) {
  PanelLayout l{&p, cell_width(p), cell_height(p), 0, 0, 0, 0, 0, {}};
  int max_req = 0;
  std::int64_t max_rpb = 1;
  for (const HeatMap* m : p.maps) {
    max_req = std::max(max_req, m->request);
    max_rpb = std::max(max_rpb, m->rows_per_bin);
  }
  l.gutter = text_width(fmt::format("r{}", max_req), kScale) + 10;
  l.body_w = p.head_bins * l.cx;
  l.body_h = static_cast<int>(p.row_bins) * l.cy;
  l.below.push_back(p.heads_per_bin > 1 ? fmt::format("heads 0-{} ({}/bin)", p.heads - 1, p.heads_per_bin)
                                        : fmt::format("heads 0-{}", p.heads - 1));
  if (max_rpb > 1) l.below.push_back(fmt::format("rows: up to {}/bin", max_rpb));
  const std::string title = fmt::format("{} {}", side_name(p.side), p.tensor());
  int w = std::max(l.body_w, text_width(title, kScale));
  for (const auto& s : l.below) w = std::max(w, text_width(s, kScale));
  l.width = l.gutter + w;
  l.height = kLine + l.body_h + 4 + static_cast<int>(l.below.size()) * kLine;
  return l;
}

void draw_panel(Image& img, const PanelLayout& l, int x0, int y0) {
  const Panel& p = *l.p;
  img.text(x0 + l.gutter, y0, fmt::format("{} {}", side_name(p.side), p.tensor()), kInk, kScale);
  const int bx = x0 + l.gutter, by = y0 + kLine;
  int y = by, last_label = -1000;
  for (std::size_t k = 0; k < p.maps.size(); ++k) {
    const HeatMap& m = *p.maps[k];
    for (std::int64_t i = 0; i < m.row_bins; ++i)
      for (int h = 0; h < m.head_bins; ++h) img.fill(bx + h * l.cx, y + static_cast<int>(i) * l.cy, l.cx, l.cy, heat_color(m.at(i, h)));
    const int band_h = static_cast<int>(m.row_bins) * l.cy;
    if (k > 0) {
      img.fill(bx - 6, y, 5, 1, kMuted);                              // tick at the band's top
      if (l.cy >= 4) img.fill(bx, y, l.body_w, 1, kSeparator);        // separator between requests
    }
    if (y - last_label >= kLine) {
      const std::string lab = fmt::format("r{}", m.request);
      img.text(bx - 8 - text_width(lab, kScale), y + std::max(0, (std::min(band_h, kLine) - 7 * kScale) / 2), lab, kMuted, kScale);
      last_label = y;
    }
    y += band_h;
  }
  img.frame(bx - 1, by - 1, l.body_w + 2, l.body_h + 2, kMuted);
  int ty = by + l.body_h + 6;
  for (const auto& s : l.below) {
    img.text(bx, ty, s, kMuted, kScale);
    ty += kLine;
  }
}

}  // namespace

Image plot_figure(const std::vector<HeatMap>& maps, const std::vector<std::string>& header) {
  const auto panels = panels_of(maps);
  std::vector<std::vector<PanelLayout>> rows;  // one row of panels per side
  for (const Panel& p : panels) {
    if (rows.empty() || rows.back().front().p->side != p.side) rows.emplace_back();
    rows.back().push_back(layout(p));
  }
  const int legend_w = 360;
  int content_w = 620;  // the legend's widest line
  int content_h = 0;
  for (const auto& r : rows) {
    int w = 0, h = 0;
    for (const auto& l : r) {
      w += (w ? kGap : 0) + l.width;
      h = std::max(h, l.height);
    }
    content_w = std::max(content_w, w);
    content_h += h + kGap;
  }
  std::vector<std::string> lines;
  for (const auto& h : header)
    for (auto& piece : wrap(h, static_cast<std::size_t>(content_w / (6 * kScale)))) lines.push_back(std::move(piece));
  const int header_h = static_cast<int>(lines.size()) * kLine + 8;
  const int legend_h = kLine + 24 + kLine + kLine + 8;
  Image img(content_w + 2 * kMargin, kMargin + header_h + content_h + legend_h + kMargin);
  int y = kMargin;
  for (std::size_t i = 0; i < lines.size(); ++i, y += kLine) img.text(kMargin, y, lines[i], i == 0 ? kInk : kMuted, kScale);
  y += 8;
  for (const auto& r : rows) {
    int x = kMargin, h = 0;
    for (const auto& l : r) {
      draw_panel(img, l, x, y);
      x += l.width + kGap;
      h = std::max(h, l.height);
    }
    y += h + kGap;
  }
  // Legend: the bar with its ticks, then the two colours of non-finite cells.
  img.text(kMargin, y, "error / bound (1 = the bound; out: max over dims)", kInk, kScale);
  y += kLine;
  const Image bar = legend_bar(legend_w, 16);
  for (int yy = 0; yy < bar.height(); ++yy)
    for (int xx = 0; xx < bar.width(); ++xx) img.set(kMargin + xx, y + yy, bar.at(xx, yy));
  img.frame(kMargin - 1, y - 1, legend_w + 2, 18, kMuted);
  const std::pair<double, const char*> ticks[] = {{0, "0"}, {0.5, ".5"}, {1, "1"}, {10, "10"}, {100, "100"}, {1000, "1e3+"}};
  for (const auto& [r, lab] : ticks) {
    const int tx = kMargin + static_cast<int>(std::lround(legend_fraction_of(r) * (legend_w - 1)));
    img.fill(tx, y + 17, 1, 5, kInk);
    const int w = text_width(lab, kScale);
    img.text(std::clamp(tx - w / 2, kMargin, kMargin + legend_w - w), y + 24, lab, kInk, kScale);
  }
  int sx = kMargin;
  const int sy = y + 24 + kLine;
  for (const auto& [c, lab] : {std::pair{kNonFinite, "inf: non-finite mismatch"}, std::pair{kUnwritten, "NaN: never written"}}) {
    img.fill(sx, sy - 1, 16, 16, c);
    sx = img.text(sx + 22, sy, lab, kInk, kScale) + 24;
  }
  return img;
}

}  // namespace podcheck::app

// The self-contained HTML report (html_report.hpp).
#include "app/html_report.hpp"

#include "app/heat_plot.hpp"
#include "app/png_image.hpp"
#include "app/replay.hpp"
#include "app/report.hpp"
#include "app/report_maps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <set>
#include <stdexcept>

namespace podcheck::app {

using nlohmann::json;

namespace {

constexpr const char* kOutputs[] = {"out_p", "out_d", "lse_p", "lse_d"};

std::string esc(const std::string& in) { return markup_escape(in); }

std::string str(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "";
  const json& v = j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

double number(const json& j, const char* key, double fallback = 0) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}

long count(const json& m, std::initializer_list<const char*> keys) {
  long n = 0;
  for (const char* k : keys) n += static_cast<long>(number(m, k));
  return n;
}

std::string g3(double v) { return fmt::format("{:.3g}", v); }

// The largest share of its bound over a case's checked outputs: NaN (never written) above inf (a non-finite
// mismatch) above any number. `key` sorts them in that order.
struct Worst {
  double key = -1;
  std::string text = "-", cls = "na";
};

Worst worst_of_metrics(const json& m) {
  Worst w;
  if (!m.is_object() || !m.value("checked", false)) return w;
  if (count(m, {"unwritten", "nan"}) > 0) return {1e300, "NaN", "nan"};
  if (count(m, {"inf", "neginf_missing", "neginf_extra"}) > 0) return {1e299, "inf", "inf"};
  if (!m.contains("tol_used") || !m["tol_used"].is_number()) return w;
  const double t = m["tol_used"].get<double>();
  return {t, g3(t), m.value("passed", t <= 1.0) ? "within" : "over"};
}

Worst worst_of_case(const json& c) {
  Worst w;
  if (!c.contains("metrics") || !c["metrics"].is_object()) return w;
  for (const auto& [name, m] : c["metrics"].items()) {
    const Worst x = worst_of_metrics(m);
    if (x.key > w.key) w = x;
  }
  return w;
}

std::string metrics_title(const json& m) {
  if (!m.value("checked", false)) return str(m, "note").empty() ? "not checked" : str(m, "note");
  auto n = [&](const char* k) {
    return m.contains(k) && m[k].is_number() ? g3(m[k].get<double>()) : std::string("-");
  };
  return fmt::format("max_abs {}, max_rel {}, rel_l2 {}, cosine {}, max_ulp {}, over bound {} of {} ({}), unwritten "
                     "{}, nan {}, inf {}, -inf missing {}, -inf extra {}, largest error/bound {}",
                     n("max_abs"), n("max_rel"), n("rel_l2"), n("cosine"), n("max_ulp"), n("over_tol"), n("numel"),
                     n("over_fraction"), n("unwritten"), n("nan"), n("inf"), n("neginf_missing"), n("neginf_extra"),
                     n("tol_used"));
}

std::string metrics_cell(const json& metrics, const char* name) {
  if (!metrics.is_object() || !metrics.contains(name)) return "<td class=\"m na\" data-v=\"-2\">&middot;</td>";
  const json& m = metrics[name];
  if (!m.value("checked", false))
    return fmt::format("<td class=\"m nc\" data-v=\"-1\" title=\"{}\">not checked</td>", esc(metrics_title(m)));
  const Worst w = worst_of_metrics(m);
  std::string text = w.text;
  const long nonfinite = count(m, {"unwritten", "nan", "inf", "neginf_missing", "neginf_extra"});
  if (nonfinite > 0) text += fmt::format(" &times;{}", nonfinite);
  else if (number(m, "over_tol") > 0) text += fmt::format(" &middot; {} over", static_cast<long>(number(m, "over_tol")));
  return fmt::format("<td class=\"m {}\" data-v=\"{}\" title=\"{}\">{}</td>", w.cls, w.key, esc(metrics_title(m)), text);
}

std::string basename_of(const std::string& path) {
  const auto p = path.find_last_of('/');
  return p == std::string::npos ? path : path.substr(p + 1);
}

std::vector<std::string> features_of(const json& c) {
  std::vector<std::string> out;
  if (c.contains("case") && c["case"].contains("features") && c["case"]["features"].is_array())
    for (const auto& f : c["case"]["features"])
      if (f.is_string()) out.push_back(f.get<std::string>());
  return out;
}

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : sep) + x;
  return out;
}

// ---- heat maps -------------------------------------------------------------------------------------------

// One byte per bin for the page's tooltips (and for tests reading the DOM): 0..99 = floor(100 x ratio) for a
// ratio below 1; 100..252 = 100 + floor(38 x log10 ratio) (capped: 4 decades); 254 = inf; 255 = NaN.
std::uint8_t cell_code(float r) {
  if (std::isnan(r)) return 255;
  if (std::isinf(r)) return 254;
  if (r < 1.0f) return static_cast<std::uint8_t>(std::clamp(static_cast<int>(r * 100.0f), 0, 99));
  return static_cast<std::uint8_t>(100 + std::clamp(static_cast<int>(std::floor(38.0 * std::log10(r))), 0, 152));
}

std::string data_uri(const Image& img) { return "data:image/png;base64," + base64(encode_png(img)); }

std::string figure_html(const Panel& p, int group_size) {
  const int cx = cell_width(p, 320), cy = cell_height(p, 288);
  const int W = p.head_bins * cx, H = static_cast<int>(p.row_bins) * cy;
  constexpr int G = 46, T = 1, B = 34;  // gutter (request labels), top, bottom (head axis)
  std::string codes, bands = "[";
  std::string seps, labels;
  std::int64_t first = 0;
  int last_label = -1000;
  for (std::size_t k = 0; k < p.maps.size(); ++k) {
    const HeatMap& m = *p.maps[k];
    for (float v : m.cells) codes += static_cast<char>(cell_code(v));
    bands += fmt::format("{}[{},{},{},{},{}]", k ? "," : "", m.request, first, m.row_bins, m.rows, m.rows_per_bin);
    const int y = T + static_cast<int>(first) * cy;
    if (k > 0) seps += fmt::format("M{} {}h{}", cy >= 4 ? G : G - 5, y, cy >= 4 ? W + 5 : 5);
    if (y - last_label >= 12) {
      const int band_h = static_cast<int>(m.row_bins) * cy;
      labels += fmt::format("<text class=\"rl\" x=\"{}\" y=\"{}\">r{}</text>", G - 4, y + std::min(band_h, 12) / 2 + 4,
                            m.request);
      last_label = y;
    }
    first += m.row_bins;
  }
  bands += "]";
  std::string ticks;
  if (group_size > 1 && p.heads % group_size == 0 && p.heads / group_size <= 64)
    for (int g = 1; g < p.heads / group_size; ++g) {
      const double x = G + static_cast<double>(g * group_size) / p.heads_per_bin * cx;
      ticks += fmt::format("M{:.1f} {}v4", x, T + H + 1);
    }
  const std::string binning =
      fmt::format("{} request{}, {} heads{}", p.maps.size(), p.maps.size() == 1 ? "" : "s", p.heads,
                  p.heads_per_bin > 1 ? fmt::format(" ({} per bin)", p.heads_per_bin) : "");
  std::int64_t max_rpb = 1;
  for (const HeatMap* m : p.maps) max_rpb = std::max(max_rpb, m->rows_per_bin);
  const std::string row_note = max_rpb > 1 ? fmt::format(", rows up to {} per bin", max_rpb) : "";
  std::string out = fmt::format(
      "<figure class=\"heatmap\" data-side=\"{side}\" data-tensor=\"{tensor}\" data-requests=\"{nreq}\" "
      "data-heads=\"{heads}\" data-head-bins=\"{hb}\" data-heads-per-bin=\"{hpb}\" data-row-bins=\"{rb}\" "
      "data-cell-w=\"{cx}\" data-cell-h=\"{cy}\" data-bands=\"{bands}\" data-codes=\"{codes}\">"
      "<figcaption><b>{side} {tensor}</b> {what}<br><small>{binning}{row_note}</small></figcaption>"
      "<svg class=\"map\" width=\"{sw}\" height=\"{sh}\" role=\"img\" aria-label=\"{side} {tensor} heat map\">"
      "<image class=\"cells\" x=\"{G}\" y=\"{T}\" width=\"{W}\" height=\"{H}\" preserveAspectRatio=\"none\" href=\"{uri}\"/>"
      "<rect class=\"frame\" x=\"{fx}\" y=\"0.5\" width=\"{fw}\" height=\"{fh}\"/>"
      "<path class=\"sep\" d=\"{seps}\"/><path class=\"gt\" d=\"{ticks}\"/>{labels}"
      "<text class=\"ax\" x=\"{G}\" y=\"{y1}\">0</text>"
      "<text class=\"ax end\" x=\"{xr}\" y=\"{y1}\">{hmax}</text>"
      "<text class=\"ax mid\" x=\"{xm}\" y=\"{y2}\">heads{hnote}</text>"
      "<text class=\"ax mid\" transform=\"translate(10 {ym}) rotate(-90)\">rows</text>"
      "</svg></figure>",
      fmt::arg("side", side_name(p.side)), fmt::arg("tensor", p.tensor()), fmt::arg("nreq", p.maps.size()),
      fmt::arg("heads", p.heads), fmt::arg("hb", p.head_bins), fmt::arg("hpb", p.heads_per_bin),
      fmt::arg("rb", p.row_bins), fmt::arg("cx", cx), fmt::arg("cy", cy), fmt::arg("bands", bands),
      fmt::arg("codes", base64(codes)),
      fmt::arg("what", p.kind == validation::TensorKind::out ? "error / bound, max over dims" : "error / bound"),
      fmt::arg("binning", binning), fmt::arg("row_note", row_note), fmt::arg("sw", G + W + 10),
      fmt::arg("sh", T + H + B), fmt::arg("G", G), fmt::arg("T", T), fmt::arg("W", W), fmt::arg("H", H),
      fmt::arg("uri", data_uri(panel_cells(p))), fmt::arg("fx", G - 0.5), fmt::arg("fw", W + 1),
      fmt::arg("fh", H + 1), fmt::arg("seps", seps), fmt::arg("ticks", ticks), fmt::arg("labels", labels),
      fmt::arg("y1", T + H + 14), fmt::arg("y2", T + H + 28), fmt::arg("xr", G + W), fmt::arg("hmax", p.heads - 1),
      fmt::arg("xm", G + W / 2), fmt::arg("hnote", p.heads_per_bin > 1 ? fmt::format(" ({}/bin)", p.heads_per_bin) : ""),
      fmt::arg("ym", T + H / 2));
  return out;
}

std::string legend_html() {
  static const std::string uri = data_uri(legend_bar(360, 1));
  std::string ticks;
  const std::pair<double, const char*> marks[] = {{0, "0"}, {0.5, "0.5"}, {1, "1"}, {10, "10"}, {100, "100"}, {1000, "&ge;1000"}};
  for (const auto& [r, lab] : marks)
    ticks += fmt::format("<span style=\"left:{:.1f}%\">{}</span>", 100.0 * legend_fraction_of(r), lab);
  return fmt::format(
      "<div class=\"legend\"><div class=\"lt\">error / bound</div><div class=\"lb\"><img src=\"{}\" width=\"360\" "
      "height=\"14\" alt=\"colour scale\"><div class=\"ticks\">{}</div></div>"
      "<div class=\"sw\"><i style=\"background:{}\"></i>within the bound (&lt; 1)</div>"
      "<div class=\"sw\"><i style=\"background:{}\"></i>over it (&ge; 1, log scale)</div>"
      "<div class=\"sw\"><i style=\"background:{}\"></i>inf: non-finite mismatch</div>"
      "<div class=\"sw\"><i style=\"background:{}\"></i>NaN: never written</div></div>",
      uri, ticks, css_color(heat_color(0.6f)), css_color(heat_color(10.0f)), css_color(heat_color(INFINITY)),
      css_color(heat_color(NAN)));
}

int group_size_of(const json& c) {
  const std::string heads = c.contains("case") ? str(c["case"], "heads") : "";
  const auto slash = heads.find('/');
  if (slash == std::string::npos) return 0;
  try {
    const int q = std::stoi(heads.substr(0, slash)), kv = std::stoi(heads.substr(slash + 1));
    return kv > 0 ? q / kv : 0;
  } catch (const std::exception&) {
    return 0;
  }
}

std::string maps_html(const json& c, bool draw) {
  if (!draw) return "<p class=\"note\">Heat maps left out: the page draws the maps of the first failing cases only.</p>";
  if (c.contains("heat_maps_note")) return "<p class=\"note\">" + esc(str(c, "heat_maps_note")) + "</p>";
  if (!c.contains("heat_maps")) {
    const std::string st = str(c, "status");
    if (st == "incorrect")
      return "<p class=\"note\">No heat maps in this report (it was written without them).</p>";
    return "<p class=\"note\">No heat maps: no output was judged wrong (" + esc(st) + ").</p>";
  }
  std::vector<HeatMap> maps;
  try {
    maps = heat_maps_from_json(c["heat_maps"]);
  } catch (const std::exception& e) {
    throw std::invalid_argument(fmt::format("case '{}': {}", str(c, "id"), e.what()));
  }
  // One row per side: its output, then its LSE.
  std::string out = "<div class=\"maps\">";
  const int g = group_size_of(c);
  const auto panels = panels_of(maps);
  for (std::size_t i = 0; i < panels.size(); ++i) {
    if (i == 0 || panels[i].side != panels[i - 1].side) out += i == 0 ? "<div class=\"side\">" : "</div><div class=\"side\">";
    out += figure_html(panels[i], g);
  }
  return out + (panels.empty() ? "" : "</div>") + "</div>" + legend_html();
}

// ---- page parts ------------------------------------------------------------------------------------------

std::string status_span(const std::string& s) { return fmt::format("<span class=\"st st-{0}\">{0}</span>", esc(s)); }
std::string verdict_span(const std::string& v) { return fmt::format("<span class=\"vd vd-{0}\">{0}</span>", esc(v)); }

std::string case_text(const json& c) {
  if (!c.contains("case")) return "";
  const json& k = c["case"];
  std::string s = fmt::format("{} &middot; {} &middot; heads {} &middot; d {}", esc(str(k, "kind")), esc(str(k, "dtype")),
                              esc(str(k, "heads")), esc(str(k, "head_dim")));
  const auto f = features_of(c);
  if (!f.empty()) s += " &middot; " + esc(joined(f, ", "));
  return s;
}

// The reproduce command: the report's (failures), else, for an expected failure of a trace file, the same
// command replay gives a failure.
std::string reproduce_html(const json& c) {
  std::string cmd = str(c, "reproduce");
  const std::string source = str(c, "source");
  if (cmd.empty() && str(c, "kind") == "trace" && source.size() > 3 && source.substr(source.size() - 3) == ".h5") {
    try {
      cmd = reproduce_command(source, str(c, "id"), profile_from_name(str(c, "profile")),
                              validation::policy_from_name(str(c, "policy")));
    } catch (const std::invalid_argument&) {
      cmd.clear();  // a profile or policy this podcheck does not know: no command rather than a wrong one
    }
  }
  return cmd.empty() ? "" : "<p class=\"repro\">reproduce: <code>" + esc(cmd) + "</code></p>";
}

std::string failure_html(const json& c, const std::string& anchor, bool draw_maps) {
  std::string out = fmt::format("<article class=\"failure\" id=\"{}\" data-id=\"{}\" data-status=\"{}\" data-verdict=\"{}\">",
                                anchor, esc(str(c, "id")), esc(str(c, "status")), esc(str(c, "verdict")));
  out += fmt::format("<h3>{} {} <span class=\"cid\">{}</span> <span class=\"prof\">[{}]</span></h3>",
                     verdict_span(str(c, "verdict")), status_span(str(c, "status")), esc(str(c, "id")),
                     esc(str(c, "profile")));
  out += "<dl class=\"facts\">";
  auto fact = [&](const char* k, const std::string& v) {
    if (!v.empty()) out += fmt::format("<dt>{}</dt><dd>{}</dd>", k, v);
  };
  fact("source", esc(str(c, "source")));
  fact("case", case_text(c));
  fact("policy", esc(str(c, "policy")));
  if (str(c, "run") != "ran") fact("run", esc(str(c, "run")));
  if (c.contains("expected") && c["expected"].is_object()) {
    const json& e = c["expected"];
    std::string t = fmt::format("{} under {}", esc(str(e, "status")), esc(str(e, "profile")));
    if (!str(e, "diagnosis").empty()) t += fmt::format(", diagnosis containing &ldquo;{}&rdquo;", esc(str(e, "diagnosis")));
    if (!str(e, "reason").empty()) t += " &mdash; " + esc(str(e, "reason"));
    fact("expected", t);
  }
  fact("message", esc(str(c, "message")));
  if (c.contains("worst") && c["worst"].is_object()) {
    const json& w = c["worst"];
    auto v = [&](const char* k) { return w.contains(k) && w[k].is_number() ? g3(w[k].get<double>()) : std::string("NaN"); };
    fact("worst", fmt::format("<b>{}</b> observed {}, reference {}, error {}, bound {} @ {}", esc(str(w, "tensor")),
                              v("observed"), v("reference"), v("error"), v("bound"), esc(str(w, "text"))));
  }
  if (c.contains("not_checked") && c["not_checked"].is_array() && !c["not_checked"].empty()) {
    std::vector<std::string> nc;
    for (const auto& x : c["not_checked"]) nc.push_back(x.is_string() ? x.get<std::string>() : x.dump());
    fact("not checked", esc(joined(nc, ", ")));
  }
  if (c.contains("profile_notes") && c["profile_notes"].is_array()) {
    std::vector<std::string> pn;
    for (const auto& x : c["profile_notes"]) pn.push_back(x.is_string() ? x.get<std::string>() : x.dump());
    fact("profile", esc(joined(pn, "; ")));
  }
  fact("data", esc(str(c, "artifact")));
  out += "</dl>";
  // The diagnosis: the structured findings (kind + text) when the report has them, else its lines.
  const json findings = c.value("findings", json::array());
  const json lines = c.value("diagnosis", json::array());
  if (!findings.empty() || !lines.empty()) {
    out += "<h4>Diagnosis</h4><ol class=\"diagnosis\">";
    if (!findings.empty())
      for (const auto& f : findings)
        out += fmt::format("<li><span class=\"fk\">{}</span> {}</li>", esc(str(f, "kind")), esc(str(f, "text")));
    else
      for (const auto& l : lines) out += "<li>" + esc(l.is_string() ? l.get<std::string>() : l.dump()) + "</li>";
    out += "</ol>";
  }
  out += reproduce_html(c);
  out += maps_html(c, draw_maps);
  return out + "</article>\n";
}

std::string options_html(const char* id, const char* label, const std::set<std::string>& values) {
  std::string out = fmt::format("<label>{} <select id=\"{}\"><option value=\"\">all</option>", label, id);
  for (const auto& v : values) out += fmt::format("<option value=\"{0}\">{0}</option>", esc(v));
  return out + "</select></label>";
}

std::string utc_minute_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return buf;
}

constexpr const char* kStyle = R"CSS(
:root{--ink:#222;--muted:#666;--line:#ddd;--bg:#fafafa;--ok:#1a7f37;--fail:#c62828;--xfail:#8250df;--skip:#9a6700}
*{box-sizing:border-box}
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);margin:0 24px 48px;background:#fff}
h1{font-size:22px;margin:18px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:15px;margin:0 0 8px;word-break:break-all}h4{font-size:14px;margin:10px 0 4px}
.sub{color:var(--muted);margin:0 0 12px}
.tiles{display:flex;flex-wrap:wrap;gap:8px;margin:8px 0}
.tile{border:1px solid var(--line);border-radius:6px;padding:6px 12px;min-width:92px;background:var(--bg)}
.tile b{display:block;font-size:20px}
.tile.ok b{color:var(--ok)}.tile.fail b{color:var(--fail)}.tile.xfail b{color:var(--xfail)}.tile.skip b{color:var(--skip)}
.outcome{font-weight:600}.outcome.good{color:var(--ok)}.outcome.bad{color:var(--fail)}
#filters{display:flex;flex-wrap:wrap;gap:10px;align-items:center;margin:8px 0;position:sticky;top:0;background:#fff;padding:6px 0;z-index:2}
#filters input{width:220px}#shown{color:var(--muted)}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{border-bottom:1px solid var(--line);padding:3px 6px;text-align:left;vertical-align:top}
th{background:var(--bg);cursor:pointer;user-select:none;white-space:nowrap;position:sticky;top:40px;z-index:1}
th[aria-sort=ascending]::after{content:" \25B2"}th[aria-sort=descending]::after{content:" \25BC"}
td.id{word-break:break-all;max-width:420px}td.num,td.m,td.w{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
td.within{color:#1f5f99}td.over{color:var(--fail);font-weight:600}td.nan{color:#b0119e;font-weight:600}td.inf{color:#000;font-weight:600}
td.nc{color:var(--skip)}td.na{color:#bbb}
.st,.vd{display:inline-block;border-radius:3px;padding:0 5px;font-size:12px;border:1px solid currentColor}
.st-passed,.vd-ok{color:var(--ok)}.st-incorrect,.st-launch-failed,.vd-fail{color:var(--fail)}
.vd-xfail{color:var(--xfail)}.st-skipped,.st-not-supported,.st-invalid-case,.vd-skip{color:var(--skip)}
tr.vfail{background:#fff5f5}tr.vxfail{background:#faf7ff}
.failure{border:1px solid var(--line);border-radius:6px;padding:12px 14px;margin:12px 0;background:#fff}
.failure .cid{font-family:ui-monospace,monospace;font-size:13px}.prof{color:var(--muted);font-weight:normal}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;word-break:break-word}
ol.diagnosis{margin:0;padding-left:22px}.fk{font-family:ui-monospace,monospace;font-size:12px;background:#eef;border-radius:3px;padding:0 4px;margin-right:4px}
.repro code{background:#f4f4f4;padding:2px 6px;border-radius:3px;word-break:break-all;user-select:all}
.maps{margin:10px 0 4px}.maps .side{display:flex;flex-wrap:wrap;gap:18px 28px;margin-bottom:14px}
figure.heatmap{margin:0}figure.heatmap figcaption{font-size:13px;margin-bottom:4px}figure.heatmap small{color:var(--muted)}
svg.map image{image-rendering:pixelated}svg.map .frame{fill:none;stroke:#888}svg.map .sep{stroke:#fff;stroke-width:1;fill:none}
svg.map .gt{stroke:#555;fill:none}svg.map text{font-size:11px;fill:#555}svg.map .rl{text-anchor:end}
svg.map .end{text-anchor:end}svg.map .mid{text-anchor:middle}
.legend{display:flex;flex-wrap:wrap;align-items:flex-start;gap:6px 16px;font-size:12px;color:var(--muted);margin-top:8px}
.legend .lb{position:relative;width:360px;height:32px}.legend .lb img{display:block;image-rendering:pixelated;border:1px solid #888}
.legend .ticks span{position:absolute;top:16px;transform:translateX(-50%);white-space:nowrap}
.legend .sw i{display:inline-block;width:12px;height:12px;border:1px solid #888;margin-right:4px;vertical-align:-2px}
.note{color:var(--muted);font-style:italic}
#tip{position:fixed;pointer-events:none;background:#222;color:#fff;font-size:12px;padding:3px 7px;border-radius:3px;z-index:9}
)CSS";

// Filters, sort, the URL fragment (#status=incorrect&sort=worst&dir=desc) and the maps' tooltips. Each figure
// also records the size its cell picture decoded to (data-decoded="WxH", one pixel per bin) and the size it
// is drawn at (data-rendered); body[data-ready] says all of it ran.
constexpr const char* kScript = R"JS(
(function(){
const table=document.getElementById('cases');const tbody=table.tBodies[0];const rows=Array.from(tbody.rows);
const order=new Map(rows.map((r,i)=>[r,i]));
const keys=['status','verdict','kind','dtype','feature','text'];
function get(k){const e=document.getElementById('f-'+k);return e?e.value.trim():'';}
function set(k,v){const e=document.getElementById('f-'+k);if(!e)return;
 if(e.tagName==='SELECT'&&!Array.from(e.options).some(o=>o.value===v)){const o=document.createElement('option');o.value=o.textContent=v;e.appendChild(o);}
 e.value=v;}
let sortKey='',sortDir='asc';
function apply(){let n=0;const t=get('text').toLowerCase();
 for(const tr of rows){const d=tr.dataset;
  const ok=(!get('status')||d.status===get('status'))&&(!get('verdict')||d.verdict===get('verdict'))&&
   (!get('kind')||d.kind===get('kind'))&&(!get('dtype')||d.dtype===get('dtype'))&&
   (!get('feature')||(' '+d.features+' ').indexOf(' '+get('feature')+' ')>=0)&&
   (!t||d.id.toLowerCase().indexOf(t)>=0||(d.source||'').toLowerCase().indexOf(t)>=0);
  tr.hidden=!ok;if(ok)n++;}
 document.getElementById('shown').textContent=n+' of '+rows.length+' cases shown';table.dataset.shown=n;}
function sortBy(key,dir){const th=table.querySelector('th[data-key="'+key+'"]');if(!th)return;
 const col=Array.from(th.parentNode.children).indexOf(th);const num=th.dataset.type==='num';
 const val=tr=>{const td=tr.cells[col];const v=td.dataset.v!==undefined?td.dataset.v:td.textContent;return num?parseFloat(v):v.toLowerCase();};
 const sorted=rows.slice().sort((a,b)=>{const x=val(a),y=val(b);const c=num?(x-y):(x<y?-1:x>y?1:0);
  return (dir==='desc'?-c:c)||(order.get(a)-order.get(b));});
 for(const tr of sorted)tbody.appendChild(tr);
 for(const h of table.tHead.rows[0].cells)h.removeAttribute('aria-sort');
 th.setAttribute('aria-sort',dir==='desc'?'descending':'ascending');sortKey=key;sortDir=dir;}
function save(){const p=new URLSearchParams();for(const k of keys){const v=get(k);if(v)p.set(k,v);}
 if(sortKey){p.set('sort',sortKey);p.set('dir',sortDir);}const s=p.toString();
 history.replaceState(null,'',s?'#'+s:location.pathname+location.search);}
function load(){const h=location.hash.slice(1);if(h.indexOf('=')<0)return;const p=new URLSearchParams(h);
 for(const k of keys)if(p.has(k))set(k,p.get(k));if(p.has('sort'))sortBy(p.get('sort'),p.get('dir')==='desc'?'desc':'asc');}
for(const k of keys){const e=document.getElementById('f-'+k);if(e)e.addEventListener('input',()=>{apply();save();});}
for(const th of table.tHead.rows[0].cells)th.addEventListener('click',()=>{
 sortBy(th.dataset.key,sortKey===th.dataset.key&&sortDir==='asc'?'desc':'asc');save();});
load();apply();
const tip=document.getElementById('tip');
function codeText(c){if(c===255)return 'NaN (never written)';if(c===254)return 'inf (non-finite mismatch)';
 if(c<100)return (c/100).toFixed(2)+'-'+((c+1)/100).toFixed(2)+' of the bound';
 return '\u2248'+Math.pow(10,(c-100)/38).toPrecision(2)+'\u00d7 the bound'+(c>=252?' or more':'');}
const figs=Array.from(document.querySelectorAll('figure.heatmap'));let pending=figs.length;
function done(){if(--pending<=0)document.body.dataset.ready='1';}
if(!pending)document.body.dataset.ready='1';
for(const fig of figs){const d=fig.dataset;const codes=atob(d.codes);const bands=JSON.parse(d.bands);
 const hb=+d.headBins,rb=+d.rowBins,hpb=+d.headsPerBin,heads=+d.heads;const img=fig.querySelector('image.cells');
 const pic=new Image();pic.onload=()=>{d.decoded=pic.naturalWidth+'x'+pic.naturalHeight;
  const r=img.getBoundingClientRect();d.rendered=Math.round(r.width)+'x'+Math.round(r.height);done();};
 pic.onerror=()=>{d.decoded='error';done();};pic.src=img.getAttribute('href');
 const svg=fig.querySelector('svg');
 svg.addEventListener('mousemove',e=>{const r=img.getBoundingClientRect();
  const x=Math.floor((e.clientX-r.left)/r.width*hb),y=Math.floor((e.clientY-r.top)/r.height*rb);
  if(x<0||y<0||x>=hb||y>=rb){tip.hidden=true;return;}
  const b=bands.find(b=>y>=b[1]&&y<b[1]+b[2]);if(!b){tip.hidden=true;return;}
  const r0=(y-b[1])*b[4],r1=Math.min(b[3],r0+b[4])-1,h0=x*hpb,h1=Math.min(heads,h0+hpb)-1;
  tip.textContent='request '+b[0]+', row'+(r1>r0?'s '+r0+'-'+r1:' '+r0)+', head'+(h1>h0?'s '+h0+'-'+h1:' '+h0)+
   ': '+codeText(codes.charCodeAt(y*hb+x));
  tip.style.left=(e.clientX+12)+'px';tip.style.top=(e.clientY+12)+'px';tip.hidden=false;});
 svg.addEventListener('mouseleave',()=>{tip.hidden=true;});}
})();
)JS";

}  // namespace

std::string html_report(const json& report, const HtmlOptions& o) {
  if (!report.is_object() || !report.contains("cases") || !report["cases"].is_array())
    throw std::invalid_argument("not a podcheck report (expected an object with a 'cases' list)");
  const json& cases = report["cases"];
  const json summary = report.value("summary", json::object());
  std::set<std::string> statuses, verdicts, kinds, dtypes, features;
  for (const auto& c : cases) {
    statuses.insert(str(c, "status"));
    verdicts.insert(str(c, "verdict"));
    if (c.contains("case")) {
      kinds.insert(str(c["case"], "kind"));
      dtypes.insert(str(c["case"], "dtype"));
    }
    for (auto& f : features_of(c)) features.insert(f);
  }
  kinds.erase("");
  dtypes.erase("");

  std::string page;
  page.reserve(1 << 20);
  page += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  page += "<title>" + esc(o.title) + "</title><style>" + kStyle + "</style></head>\n<body>\n";
  const long n_fail = static_cast<long>(number(summary, "failed"));
  const bool success = summary.value("success", n_fail == 0);
  page += fmt::format("<header><h1>{}</h1><p class=\"sub\">{} case{} &middot; {:.0f} s &middot; generated {} by podcheck",
                      esc(o.title), cases.size(), cases.size() == 1 ? "" : "s", number(summary, "seconds"), utc_minute_now());
  if (summary.contains("merged_from") && summary["merged_from"].is_array())
    page += fmt::format(" &middot; merged from {} reports", summary["merged_from"].size());
  page += "</p></header>\n";

  // Summary
  page += "<section id=\"summary\"><h2>Summary</h2><div class=\"tiles\">";
  const std::pair<const char*, const char*> tiles[] = {{"ok", "ok"}, {"xfail", "xfail"}, {"failed", "fail"}, {"skip", "skip"}};
  for (const auto& [k, cls] : tiles)
    page += fmt::format("<div class=\"tile {}\"><b data-count=\"{}\">{}</b>{}</div>", cls, cls,
                        static_cast<long>(number(summary, k)), k);
  for (const char* k : {"passed", "incorrect", "launch-failed", "not-supported", "invalid-case", "skipped", "not_checked"})
    page += fmt::format("<div class=\"tile\"><b data-count=\"{0}\">{1}</b>{0}</div>", k, static_cast<long>(number(summary, k)));
  page += fmt::format("</div><p class=\"outcome {}\">{} &mdash; exit status {}</p></section>\n", success ? "good" : "bad",
                      success ? "success: every case passed or failed as expected" : "not a success",
                      static_cast<long>(number(summary, "exit_code")));

  // The table
  page += "<section id=\"table\"><h2>Cases</h2><div id=\"filters\">";
  page += options_html("f-status", "status", statuses) + options_html("f-verdict", "verdict", verdicts) +
          options_html("f-kind", "kind", kinds) + options_html("f-dtype", "dtype", dtypes) +
          options_html("f-feature", "feature", features);
  page += "<label>id <input id=\"f-text\" type=\"search\" placeholder=\"part of an id or file\"></label>"
          "<span id=\"shown\"></span></div>\n";
  page += "<table id=\"cases\"><thead><tr><th data-key=\"id\">case</th><th data-key=\"source\">source</th>"
          "<th data-key=\"profile\">profile</th><th data-key=\"status\">status</th><th data-key=\"verdict\">verdict</th>"
          "<th data-key=\"kind\">kind</th><th data-key=\"dtype\">dtype</th>"
          "<th data-key=\"worst\" data-type=\"num\" title=\"largest error / bound over the checked outputs\">worst err/bound</th>";
  for (const char* t : kOutputs) page += fmt::format("<th data-key=\"{0}\" data-type=\"num\">{0}</th>", t);
  page += "<th data-key=\"seconds\" data-type=\"num\">s</th></tr></thead>\n<tbody>\n";
  int n_failures = 0;
  std::vector<std::string> anchors(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    const std::string v = str(c, "verdict");
    if (v == "fail" || v == "xfail") anchors[i] = fmt::format("f{}", ++n_failures);
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    const Worst w = worst_of_case(c);
    const std::string id = str(c, "id"), source = str(c, "source"), v = str(c, "verdict");
    const std::string kind = c.contains("case") ? str(c["case"], "kind") : "";
    const std::string dtype = c.contains("case") ? str(c["case"], "dtype") : "";
    const std::string shown_source = str(c, "kind") == "selfcheck" ? "selfcheck" : basename_of(source);
    page += fmt::format("<tr class=\"v{}\" data-id=\"{}\" data-source=\"{}\" data-status=\"{}\" data-verdict=\"{}\" "
                        "data-kind=\"{}\" data-dtype=\"{}\" data-features=\"{}\" data-profile=\"{}\" data-worst=\"{}\">",
                        esc(v), esc(id), esc(source.empty() ? shown_source : source), esc(str(c, "status")), esc(v),
                        esc(kind), esc(dtype),
                        esc(joined(features_of(c), " ")), esc(str(c, "profile")), w.key);
    page += anchors[i].empty() ? fmt::format("<td class=\"id\">{}</td>", esc(id))
                               : fmt::format("<td class=\"id\"><a href=\"#{}\">{}</a></td>", anchors[i], esc(id));
    page += fmt::format("<td class=\"src\" title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                        esc(source), esc(shown_source), esc(str(c, "profile")), status_span(str(c, "status")),
                        verdict_span(v), esc(kind), esc(dtype));
    page += fmt::format("<td class=\"w {}\" data-v=\"{}\">{}</td>", w.cls, w.key, w.text);
    const json metrics = c.value("metrics", json::object());
    for (const char* t : kOutputs) page += metrics_cell(metrics, t);
    page += fmt::format("<td class=\"num\" data-v=\"{0}\">{0:.2f}</td></tr>\n", number(c, "seconds"));
  }
  page += "</tbody></table></section>\n";

  // Failing cases
  page += fmt::format("<section id=\"failures\"><h2>Failing cases ({})</h2>", n_failures);
  if (n_failures == 0) page += "<p class=\"note\">None: every case passed.</p>";
  if (n_failures > o.max_maps_cases)
    page += fmt::format("<p class=\"note\">{} failing cases: the maps of the first {} are drawn.</p>", n_failures,
                        o.max_maps_cases);
  int drawn = 0;
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (!anchors[i].empty()) page += failure_html(cases[i], anchors[i], drawn++ < o.max_maps_cases);
  page += "</section>\n<div id=\"tip\" hidden></div>\n<script>" + std::string(kScript) + "</script>\n</body></html>\n";
  return page;
}

}  // namespace podcheck::app

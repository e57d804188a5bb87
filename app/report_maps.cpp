// Case attributes and heat maps carried by reports (report_maps.hpp).
#include "app/report_maps.hpp"

#include "fixtures/case_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

namespace podcheck::app {

using namespace validation;

namespace {

std::string short_dtype(DType t) {
  const std::string_view s = dtype_short_name(t);
  return s == "?" ? std::string(dtype_name(t)) : std::string(s);
}

float worse(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
  return std::max(a, b);
}

// Rows of a map coarsened by an integer factor: bin i covers the old bins [i * f, (i + 1) * f).
HeatMap coarsen_rows(const HeatMap& m, std::int64_t f) {
  if (f <= 1) return m;
  HeatMap out = m;
  out.rows_per_bin = m.rows_per_bin * f;
  out.row_bins = (m.row_bins + f - 1) / f;
  out.cells.assign(static_cast<std::size_t>(out.row_bins * out.head_bins), 0.0f);
  for (std::int64_t i = 0; i < m.row_bins; ++i)
    for (int h = 0; h < m.head_bins; ++h) {
      float& bin = out.cells[(i / f) * out.head_bins + h];
      bin = worse(bin, m.at(i, h));
    }
  return out;
}

std::string key_of(const std::string& source, const std::string& id, const std::string& profile) {
  return fmt::format("{}\x1f{}\x1f{}", source, id, profile);
}

}  // namespace

nlohmann::json case_info(const Case& c) {
  std::set<std::string> f;
  if (c.group_size() > 1) f.insert("gqa");
  if (c.dtype_kv == DType::float8_e4m3fn || c.dtype_kv == DType::float8_e5m2) f.insert("fp8-kv");
  if (c.lse_base == LseBase::base_e) f.insert("lse-base-e");
  for (SideKind k : {SideKind::prefill, SideKind::decode}) {
    const Side* s = c.side(k);
    if (!s) continue;
    const SideParams& p = s->params;
    if (p.mask_mode == MaskMode::causal) f.insert("causal");
    if (p.mask_mode == MaskMode::custom) f.insert("custom-mask");
    if (p.window_left >= 0) f.insert("window");
    if (p.pos_encoding == PosEncoding::rope_llama) f.insert("rope");
    if (p.pos_encoding == PosEncoding::alibi) f.insert("alibi");
    if (p.logits_soft_cap > 0) f.insert("soft-cap");
    if (p.sm_scale) f.insert("sm-scale");
    if (p.q_scale != 1.0 || p.k_scale != 1.0 || p.v_scale != 1.0) f.insert("scales");
    if (s->kv.layout == Layout::HND) f.insert("hnd");
    if (s->kv.stacked()) f.insert("stacked-kv");
  }
  std::string dtype = short_dtype(c.dtype_q);
  if (c.dtype_kv != c.dtype_q) dtype = fmt::format("{}/{}", dtype, short_dtype(c.dtype_kv));
  return {{"kind", c.kind()},
          {"dtype", dtype},
          {"heads", fmt::format("{}/{}", c.num_qo_heads, c.num_kv_heads)},
          {"head_dim", c.head_dim},
          {"features", std::vector<std::string>(f.begin(), f.end())}};
}

bool wants_maps(const CaseResult& r) {
  return r.status == Status::incorrect &&
         std::any_of(r.tensors.begin(), r.tensors.end(), [](const TensorReport& t) { return t.checked; });
}

std::vector<HeatMap> fit_panel_rows(std::vector<HeatMap> maps, std::int64_t max_rows) {
  max_rows = std::max<std::int64_t>(1, max_rows);
  for (SideKind side : {SideKind::prefill, SideKind::decode})
    for (TensorKind kind : {TensorKind::out, TensorKind::lse}) {
      std::vector<HeatMap*> panel;
      for (auto& m : maps)
        if (m.side == side && m.kind == kind) panel.push_back(&m);
      auto total_with = [&](std::int64_t cap) {  // row bins of the panel with at most `cap` per request
        std::int64_t t = 0;
        for (const HeatMap* m : panel) {
          const std::int64_t f = (m->row_bins + cap - 1) / cap;
          t += (m->row_bins + f - 1) / f;
        }
        return t;
      };
      if (panel.empty() || total_with(std::numeric_limits<std::int32_t>::max()) <= max_rows) continue;
      std::int64_t cap = max_rows;
      while (cap > 1 && total_with(cap) > max_rows) --cap;
      for (HeatMap* m : panel) *m = coarsen_rows(*m, (m->row_bins + cap - 1) / cap);
    }
  return maps;
}

std::vector<HeatMap> report_heat_maps(const Case& c, const KernelOutputs& observed, Policy policy, Profile profile) {
  return fit_panel_rows(heat_maps(c, observed, policy, profile, kMaxPanelRowBins, kMaxHeadBins), kMaxPanelRowBins);
}

nlohmann::json heat_maps_json(const std::vector<HeatMap>& maps) {
  nlohmann::json out = nlohmann::json::array();
  for (const HeatMap& m : maps) {
    std::string cells;  // 3 digits are plenty for a colour and a tooltip
    for (float v : m.cells) {
      if (!cells.empty()) cells += ' ';
      cells += std::isnan(v) ? std::string("nan") : std::isinf(v) ? std::string("inf") : fmt::format("{:.3g}", v);
    }
    out.push_back({{"side", std::string(side_name(m.side))},
                   {"request", m.request},
                   {"tensor", tensor_name(m.side, m.kind)},
                   {"rows", m.rows},
                   {"heads", m.heads},
                   {"row_bins", m.row_bins},
                   {"head_bins", m.head_bins},
                   {"rows_per_bin", m.rows_per_bin},
                   {"heads_per_bin", m.heads_per_bin},
                   {"cells", cells}});
  }
  return out;
}

std::vector<HeatMap> heat_maps_from_json(const nlohmann::json& maps) {
  if (!maps.is_array()) throw std::invalid_argument("heat_maps: not a list");
  std::vector<HeatMap> out;
  for (const auto& j : maps) {
    auto need = [&](const char* k) -> const nlohmann::json& {
      if (!j.is_object() || !j.contains(k)) throw std::invalid_argument(fmt::format("heat_maps: a map without '{}'", k));
      return j[k];
    };
    HeatMap m;
    const std::string side = need("side").get<std::string>(), tensor = need("tensor").get<std::string>();
    if (side != "prefill" && side != "decode") throw std::invalid_argument("heat_maps: side '" + side + "'");
    m.side = side == "prefill" ? SideKind::prefill : SideKind::decode;
    m.kind = tensor.rfind("lse", 0) == 0 ? TensorKind::lse : TensorKind::out;
    m.request = need("request").get<int>();
    m.rows = need("rows").get<std::int64_t>();
    m.heads = need("heads").get<int>();
    m.row_bins = need("row_bins").get<std::int64_t>();
    m.head_bins = need("head_bins").get<int>();
    m.rows_per_bin = need("rows_per_bin").get<std::int64_t>();
    m.heads_per_bin = need("heads_per_bin").get<int>();
    if (!need("cells").is_string()) throw std::invalid_argument("heat_maps: 'cells' is not a string");
    std::istringstream cells(need("cells").get<std::string>());
    for (std::string v; cells >> v;) {
      if (v == "nan") m.cells.push_back(std::numeric_limits<float>::quiet_NaN());
      else if (v == "inf") m.cells.push_back(std::numeric_limits<float>::infinity());
      else {
        std::size_t used = 0;
        float x = 0;
        try {
          x = std::stof(v, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != v.size() || !std::isfinite(x) || x < 0)
          throw std::invalid_argument("heat_maps: cell '" + v + "' is not a ratio, nan or inf");
        m.cells.push_back(x);
      }
    }
    if (m.row_bins < 1 || m.head_bins < 1 || m.rows_per_bin < 1 || m.heads_per_bin < 1 ||
        static_cast<std::int64_t>(m.cells.size()) != m.row_bins * m.head_bins)
      throw std::invalid_argument(fmt::format("heat_maps: {} request {}: {} cells for {} x {} bins", tensor, m.request,
                                              m.cells.size(), m.row_bins, m.head_bins));
    out.push_back(std::move(m));
  }
  return out;
}

void ReportExtras::add_info(const CaseResult& r, const Case& c) {
  extras_[key_of(r.source, r.id, r.profile)]["case"] = case_info(c);
}

void ReportExtras::add(const CaseResult& r, const Case& c, const KernelOutputs& observed) {
  nlohmann::json& e = extras_[key_of(r.source, r.id, r.profile)];
  e["case"] = case_info(c);
  if (!wants_maps(r)) return;
  if (map_cases_ >= max_map_cases) {
    e["heat_maps_note"] = fmt::format("heat maps left out: a report carries the maps of its first {} failing cases", max_map_cases);
    return;
  }
  ++map_cases_;
  try {
    e["heat_maps"] = heat_maps_json(report_heat_maps(c, observed, policy_from_name(r.policy), profile_from_name(r.profile)));
  } catch (const std::exception& err) {
    e["heat_maps_note"] = std::string("heat maps not computed: ") + err.what();
  }
}

void ReportExtras::attach(nlohmann::json& report) const {
  if (!report.contains("cases")) return;
  for (auto& c : report["cases"]) {
    const auto it = extras_.find(key_of(c.value("source", ""), c.value("id", ""), c.value("profile", "")));
    if (it == extras_.end()) continue;
    for (const auto& [k, v] : it->second.items()) c[k] = v;
  }
}

}  // namespace podcheck::app

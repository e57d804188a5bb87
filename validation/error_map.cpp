// Per-cell errors of a side and the heat maps built from them (validation/error_map.hpp).
#include "validation/error_map.hpp"

#include "validation/emulator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace podcheck::validation {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// One element against its bound, by compare_tensor's rules: 0 pass, 1 fail (ratio set), 2 NaN observed.
int judge_element(double o, double r, double b, bool is_lse, double& ratio) {
  ratio = 0;
  if (std::isnan(o)) return std::isnan(r) ? 0 : 2;
  if (!std::isfinite(r)) {
    const bool bad = (is_lse && r < 0) ? !(std::isinf(o) && o < 0) : o != r;
    ratio = bad ? kInf : 0;
    return bad ? 1 : 0;
  }
  if (std::isinf(o)) {
    ratio = kInf;
    return 1;
  }
  const double e = std::abs(o - r);
  ratio = b > 0 ? e / b : (e > 0 ? kInf : 0.0);
  return e > b ? 1 : 0;
}

// NaN above every number (never written is the worst a cell can be).
float worse(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
  return std::max(a, b);
}

}  // namespace

CellErrors cell_errors(Policy policy, const Case& c, SideKind side, const KernelOutputs& observed,
                       const SideResult& ref, const Envelope* env) {
  CellErrors e;
  e.side = side;
  e.rows = ref.rows;
  e.heads = ref.heads;
  const std::int64_t cells = ref.rows * ref.heads;
  const int D = ref.head_dim;
  e.out_ratio.assign(static_cast<std::size_t>(cells), 0.0f);
  e.lse_ratio.assign(static_cast<std::size_t>(cells), 0.0f);
  e.flags.assign(static_cast<std::size_t>(cells), 0);
  const auto& ob_out = observed.out(side);
  const auto& ob_lse = observed.lse(side);
  e.out_checked = ob_out && ob_out->numel() == static_cast<std::int64_t>(ref.out.size()) &&
                  ob_out->shape == std::vector<std::int64_t>{ref.rows, ref.heads, D};
  e.lse_checked = ob_lse && ob_lse->shape == std::vector<std::int64_t>{ref.rows, ref.heads};
  if (e.out_checked) {
    const auto bounds = out_bounds(policy, c, ref, env);
    for (std::int64_t cell = 0; cell < cells; ++cell) {
      double worst = 0;
      for (int d = 0; d < D; ++d) {
        const std::int64_t i = cell * D + d;
        double ratio;
        const int v = judge_element(ob_out->get(i), ref.out[i], bounds[i], false, ratio);
        if (v == 2) e.flags[cell] |= CellErrors::kOutNan;
        if (v == 1) e.flags[cell] |= CellErrors::kOutFail;
        worst = std::max(worst, ratio);
      }
      e.out_ratio[cell] = static_cast<float>(worst);
    }
  }
  if (e.lse_checked) {
    const auto bounds = lse_bounds(policy, c, ref, env);
    for (std::int64_t cell = 0; cell < cells; ++cell) {
      double ratio;
      const int v = judge_element(ob_lse->get(cell), ref.lse[cell], bounds[cell], true, ratio);
      if (v == 2) e.flags[cell] |= CellErrors::kLseNan;
      if (v == 1) e.flags[cell] |= CellErrors::kLseFail;
      e.lse_ratio[cell] = static_cast<float>(ratio);
    }
  }
  return e;
}

std::vector<HeatMap> heat_maps(const Case& c, const std::vector<CellErrors>& sides, std::int64_t max_rows,
                               int max_heads) {
  std::vector<HeatMap> out;
  max_rows = std::max<std::int64_t>(1, max_rows);
  max_heads = std::max(1, max_heads);
  for (const CellErrors& e : sides) {
    const Side* s = c.side(e.side);
    if (!s) continue;
    for (int r = 0; r < s->num_requests(); ++r) {
      const std::int64_t Q = s->qo_len(r), row0 = s->qo_indptr[r];
      if (Q == 0) continue;
      for (TensorKind kind : {TensorKind::out, TensorKind::lse}) {
        if (!(kind == TensorKind::out ? e.out_checked : e.lse_checked)) continue;
        const auto& ratio = kind == TensorKind::out ? e.out_ratio : e.lse_ratio;
        const std::uint8_t nan_flag = kind == TensorKind::out ? CellErrors::kOutNan : CellErrors::kLseNan;
        HeatMap m;
        m.side = e.side;
        m.request = r;
        m.kind = kind;
        m.rows = Q;
        m.heads = e.heads;
        m.rows_per_bin = (Q + max_rows - 1) / max_rows;
        m.heads_per_bin = (e.heads + max_heads - 1) / max_heads;
        m.row_bins = (Q + m.rows_per_bin - 1) / m.rows_per_bin;
        m.head_bins = (e.heads + m.heads_per_bin - 1) / m.heads_per_bin;
        m.cells.assign(static_cast<std::size_t>(m.row_bins * m.head_bins), 0.0f);
        for (std::int64_t i = 0; i < Q; ++i)
          for (int h = 0; h < e.heads; ++h) {
            const std::int64_t cell = (row0 + i) * e.heads + h;
            const float v = (e.flags[cell] & nan_flag) ? std::numeric_limits<float>::quiet_NaN() : ratio[cell];
            float& bin = m.cells[(i / m.rows_per_bin) * m.head_bins + h / m.heads_per_bin];
            bin = worse(bin, v);
          }
        out.push_back(std::move(m));
      }
    }
  }
  return out;
}

std::vector<HeatMap> heat_maps(const Case& c, const KernelOutputs& observed, Policy policy, Profile profile,
                               std::int64_t max_rows, int max_heads) {
  const ProfiledCase pc = apply_profile(profile, c);
  const PodResult ref = reference_fast(pc.kase, pc.semantics);
  std::vector<CellErrors> sides;
  for (SideKind k : {SideKind::prefill, SideKind::decode}) {
    const SideResult* rs = ref.side(k);
    if (!rs || !(observed.out(k) || observed.lse(k))) continue;
    Envelope env;
    if (policy == Policy::calibrated) env = make_envelope(pc.kase, k, *rs, emulate_side(pc.kase, k, pc.semantics));
    sides.push_back(cell_errors(policy, pc.kase, k, observed, *rs, policy == Policy::calibrated ? &env : nullptr));
  }
  return heat_maps(pc.kase, sides, max_rows, max_heads);
}

}  // namespace podcheck::validation

// Metrics, non-finite checks and worst-element location of one output tensor.
#include "validation/compare.hpp"

#include "reference/outputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace podcheck::validation {

bool is_poison(DType t, std::uint32_t bits) {
  switch (t) {
    case DType::float16: return bits == kPoisonF16;
    case DType::bfloat16: return bits == kPoisonBF16;
    case DType::float32: return bits == kPoisonF32;
    default: return false;
  }
}

std::string Location::text() const {
  std::string s = fmt::format("({}, req {}, row {}, head {}", side_name(side), request, row, head);
  if (dim >= 0) s += fmt::format(", dim {}", dim);
  if (!kv.empty()) s += "; " + kv;
  return s + ")";
}

namespace {

std::string kv_description(const Case& c, const Side& s, int r, std::int64_t row_in_req) {
  const std::int64_t L = s.kv_len(r), Q = s.qo_len(r);
  std::string out = fmt::format("kv_len {}", L);
  const SideParams& p = s.params;
  if (L > 0 && (p.mask_mode != MaskMode::none || p.window_left >= 0)) {
    const std::int64_t pos = row_in_req + L - Q;
    std::int64_t hi = L - 1, lo = 0;
    if (p.mask_mode == MaskMode::causal) hi = std::min(hi, pos);
    if (p.window_left >= 0) lo = std::max<std::int64_t>(0, pos - p.window_left);
    if (p.mask_mode == MaskMode::custom)
      out += ", custom mask";
    if (hi < lo) out += ", no visible key";
    else out += fmt::format(", keys {}..{}", lo, hi);
  }
  if (s.kv.paged && s.kv.pages.indptr.size() > static_cast<std::size_t>(r + 1)) {
    const auto b = s.kv.pages.indptr[r], e = s.kv.pages.indptr[r + 1];
    if (e > b) {
      if (Q == 1 || s.params.mask_mode == MaskMode::none)
        out += fmt::format(", last page {} (slot {})", s.kv.pages.indices[e - 1], s.kv.pages.last_page_len[r] - 1);
      if (e - b <= 6) {
        out += ", pages [";
        for (auto k = b; k < e; ++k) out += fmt::format("{}{}", k > b ? " " : "", s.kv.pages.indices[k]);
        out += "]";
      } else {
        out += fmt::format(", {} pages from {} to {}", e - b, s.kv.pages.indices[b], s.kv.pages.indices[e - 1]);
      }
    } else {
      out += ", no pages";
    }
  }
  return out;
}

}  // namespace

std::string tensor_name(SideKind side, TensorKind kind) {
  return std::string(kind == TensorKind::out ? "out_" : "lse_") + (side == SideKind::prefill ? "p" : "d");
}

Location locate_element(const Case& c, SideKind side, TensorKind kind, std::int64_t flat) {
  Location loc;
  loc.side = side;
  const Side* s = c.side(side);
  if (!s) return loc;
  const int H = c.num_qo_heads, D = c.head_dim;
  std::int64_t row;
  if (kind == TensorKind::out) {
    loc.dim = static_cast<int>(flat % D);
    loc.head = static_cast<int>((flat / D) % H);
    row = flat / (static_cast<std::int64_t>(D) * H);
  } else {
    loc.head = static_cast<int>(flat % H);
    row = flat / H;
  }
  loc.global_row = row;
  const int r = std::max(0, s->request_of(row));
  loc.request = r;
  loc.row = row - s->qo_indptr[r];
  try {
    loc.kv = kv_description(c, *s, r, loc.row);
  } catch (const std::exception&) {
  }
  return loc;
}

namespace {

bool shape_matches(const Tensor& t, const std::vector<std::int64_t>& want) { return t.shape == want; }


}  // namespace

TensorReport compare_tensor(const Case& c, SideKind side, TensorKind kind, const std::optional<Tensor>& observed,
                            const SideResult& ref, const std::vector<double>& bounds) {
  TensorReport rep;
  rep.name = tensor_name(side, kind);
  rep.side = side;
  rep.kind = kind;
  const std::vector<double>& rv = kind == TensorKind::out ? ref.out : ref.lse;
  rep.numel = static_cast<std::int64_t>(rv.size());
  if (!observed) {
    rep.note = "not checked: not recorded";
    return rep;
  }
  std::vector<std::int64_t> want = {ref.rows, ref.heads};
  if (kind == TensorKind::out) want.push_back(ref.head_dim);
  if (!shape_matches(*observed, want)) {
    rep.shape_ok = false;
    rep.note = fmt::format("shape mismatch: {} observed {}, reference {}", rep.name, shape_text(observed->shape),
                           shape_text(want));
    return rep;
  }
  rep.checked = true;
  const Tensor& ob = *observed;
  const DType ulp_dtype = kind == TensorKind::out ? c.dtype_o : DType::float32;
  const bool has_bits = ob.dtype != DType::float64;
  double sum_err2 = 0, sum_ref2 = 0, sum_obs2 = 0, dot = 0;
  double worst_score = -1;
  std::int64_t worst_flat = -1;
  bool worst_nonfinite = false;
  auto mark_worst_nonfinite = [&](std::int64_t i, double o, double r) {
    if (!worst_nonfinite) {
      worst_nonfinite = true;
      worst_flat = i;
      rep.worst_observed = o;
      rep.worst_reference = r;
      rep.worst_error = std::numeric_limits<double>::quiet_NaN();
      rep.worst_bound = bounds[i];
    }
  };
  for (std::int64_t i = 0; i < rep.numel; ++i) {
    const double r = rv[i];
    const double o = ob.get(i);
    if (std::isnan(o)) {
      if (!std::isnan(r)) {
        if (has_bits && is_poison(ob.dtype, ob.bits(i))) ++rep.unwritten;
        else ++rep.nan;
        mark_worst_nonfinite(i, o, r);
      }
      continue;
    }
    if (!std::isfinite(r)) {
      if (kind == TensorKind::lse && r < 0) {
        if (!(std::isinf(o) && o < 0)) {
          ++rep.neginf_missing;
          mark_worst_nonfinite(i, o, r);
        }
      } else if (o != r) {
        ++rep.inf;
        mark_worst_nonfinite(i, o, r);
      }
      continue;
    }
    if (std::isinf(o)) {
      if (kind == TensorKind::lse && o < 0) ++rep.neginf_extra;
      else ++rep.inf;
      mark_worst_nonfinite(i, o, r);
      continue;
    }
    const double e = std::abs(o - r);
    rep.max_abs = std::max(rep.max_abs, e);
    if (r != 0) rep.max_rel = std::max(rep.max_rel, e / std::abs(r));
    else if (e > 0) rep.max_rel = std::max(rep.max_rel, std::numeric_limits<double>::infinity());
    rep.max_ulp = std::max(rep.max_ulp, e / dtype_ulp(ulp_dtype, r));
    sum_err2 += e * e;
    sum_ref2 += r * r;
    sum_obs2 += o * o;
    dot += o * r;
    const double b = bounds[i];
    const double score = b > 0 ? e / b : (e > 0 ? std::numeric_limits<double>::infinity() : 0.0);
    rep.tol_used = std::max(rep.tol_used, score);
    if (e > b) ++rep.over_tol;
    if (!worst_nonfinite && score > worst_score) {
      worst_score = score;
      worst_flat = i;
      rep.worst_observed = o;
      rep.worst_reference = r;
      rep.worst_error = o - r;
      rep.worst_bound = b;
    }
  }
  rep.rel_l2 = sum_ref2 > 0 ? std::sqrt(sum_err2 / sum_ref2) : std::sqrt(sum_err2);
  rep.cosine = (sum_ref2 > 0 && sum_obs2 > 0) ? dot / std::sqrt(sum_ref2 * sum_obs2) : (sum_err2 == 0 ? 1.0 : 0.0);
  rep.over_fraction = rep.numel ? static_cast<double>(rep.over_tol) / static_cast<double>(rep.numel) : 0.0;
  if (worst_flat >= 0) rep.worst = locate_element(c, side, kind, worst_flat);
  return rep;
}

std::vector<std::uint8_t> failure_mask(TensorKind kind, const Tensor& ob, const SideResult& ref,
                                       const std::vector<double>& bounds) {
  const std::vector<double>& rv = kind == TensorKind::out ? ref.out : ref.lse;
  if (ob.numel() != static_cast<std::int64_t>(rv.size())) return {};
  std::vector<std::uint8_t> m(rv.size(), 0);
  for (std::size_t i = 0; i < rv.size(); ++i) {
    const double r = rv[i], o = ob.get(static_cast<std::int64_t>(i));
    if (std::isnan(o)) m[i] = !std::isnan(r);
    else if (!std::isfinite(r) || !std::isfinite(o)) m[i] = (o != r);
    else m[i] = std::abs(o - r) > bounds[i];
  }
  return m;
}

std::vector<std::uint8_t> nan_mask(TensorKind kind, const Tensor& ob, const SideResult& ref) {
  const std::vector<double>& rv = kind == TensorKind::out ? ref.out : ref.lse;
  if (ob.numel() != static_cast<std::int64_t>(rv.size())) return {};
  std::vector<std::uint8_t> m(rv.size(), 0);
  for (std::size_t i = 0; i < rv.size(); ++i) m[i] = std::isnan(ob.get(static_cast<std::int64_t>(i))) && !std::isnan(rv[i]);
  return m;
}

}  // namespace podcheck::validation

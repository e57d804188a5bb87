// Diagnosis: semantic variants (one flip at a time) and the structure of failures.
#include "validation/diagnose.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

namespace podcheck::validation {

std::string ranges_text(const std::vector<int>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += j == i ? fmt::format("{}", v[i]) : fmt::format("{}-{}", v[i], v[j]);
    i = j + 1;
  }
  return out;
}

namespace {

// Does the observed tensor agree with `ref` within bounds, ignoring NaN elements (reported structurally)?
bool agrees_ignoring_nan(TensorKind kind, const Tensor& ob, const SideResult& ref, const std::vector<double>& bounds) {
  const std::vector<double>& rv = kind == TensorKind::out ? ref.out : ref.lse;
  if (ob.numel() != static_cast<std::int64_t>(rv.size())) return false;
  for (std::size_t i = 0; i < rv.size(); ++i) {
    const double o = ob.get(static_cast<std::int64_t>(i)), r = rv[i];
    if (std::isnan(o)) continue;
    if (!std::isfinite(r) || !std::isfinite(o)) {
      if (o != r) return false;
      continue;
    }
    if (std::abs(o - r) > bounds[i]) return false;
  }
  return true;
}

struct Layout3 {
  std::int64_t rows;
  int H, D;  // D = 1 for lse
};

void structural(const DiagnosisInput& in, const TensorReport& t, std::vector<std::string>& out) {
  const Case& c = in.profiled.kase;
  const Side* s = c.side(t.side);
  const SideResult* ref = in.reference.side(t.side);
  const auto& ob = t.kind == TensorKind::out ? in.observed.out(t.side) : in.observed.lse(t.side);
  if (!s || !ref || !ob) return;
  const Layout3 L{ref->rows, ref->heads, t.kind == TensorKind::out ? ref->head_dim : 1};
  const std::int64_t per_row = static_cast<std::int64_t>(L.H) * L.D;
  const int nreq = s->num_requests();
  auto request_of = [&](std::int64_t row) {
    auto it = std::upper_bound(s->qo_indptr.begin(), s->qo_indptr.end(), static_cast<std::int32_t>(row));
    return static_cast<int>(it - s->qo_indptr.begin()) - 1;
  };

  // --- NaN where the reference is finite: never written or computed NaN ---
  if (t.unwritten + t.nan > 0) {
    const auto nm = nan_mask(t.kind, *ob, *ref);
    std::vector<std::int64_t> per_head(L.H, 0), per_req(nreq, 0);
    std::int64_t total = 0;
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(nm.size()); ++i)
      if (nm[i]) {
        ++total;
        const std::int64_t row = i / per_row;
        ++per_head[(i / L.D) % L.H];
        const int r = request_of(row);
        if (r >= 0 && r < nreq) ++per_req[r];
      }
    const std::string what = t.unwritten > 0 && t.nan == 0 ? "never written (poison pattern left)"
                             : t.unwritten == 0           ? "never written (NaN sentinel left) or computed NaN"
                                                          : "never written or NaN";
    const std::int64_t full_head = L.rows * L.D;
    std::vector<int> full_heads;
    std::int64_t in_full = 0;
    for (int h = 0; h < L.H; ++h)
      if (full_head > 0 && per_head[h] == full_head) {
        full_heads.push_back(h);
        in_full += per_head[h];
      }
    bool explained = false;
    if (!full_heads.empty() && in_full == total) {
      const int g = c.group_size();
      std::set<int> within;
      for (int h : full_heads) within.insert(h % std::max(g, 1));
      std::vector<int> wv(within.begin(), within.end());
      bool every_group = g > 1;
      if (every_group)
        for (int grp = 0; grp < c.num_kv_heads && every_group; ++grp)
          for (int w : wv)
            if (per_head[grp * g + w] != full_head) every_group = false;
      if (every_group && static_cast<int>(full_heads.size()) == static_cast<int>(wv.size()) * c.num_kv_heads)
        out.push_back(fmt::format("{}: {} heads {} of every group of {} (GQA group = {} query heads per kv head), "
                                  "all {} rows: {} elements",
                                  what, t.name, ranges_text(wv), g, g, L.rows, total));
      else
        out.push_back(fmt::format("{}: {} heads {} (all {} rows): {} elements", what, t.name, ranges_text(full_heads),
                                  L.rows, total));
      explained = true;
    }
    if (!explained) {
      std::vector<int> full_reqs;
      std::int64_t in_reqs = 0;
      for (int r = 0; r < nreq; ++r)
        if (s->qo_len(r) > 0 && per_req[r] == s->qo_len(r) * per_row) {
          full_reqs.push_back(r);
          in_reqs += per_req[r];
        }
      if (!full_reqs.empty() && in_reqs == total) {
        out.push_back(fmt::format("{}: {} request(s) {} entirely (whole request missing): {} elements", what, t.name,
                                  ranges_text(full_reqs), total));
        explained = true;
      }
    }
    if (!explained) {
      std::string where;
      int shown = 0;
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(nm.size()) && shown < 3; ++i)
        if (nm[i]) {
          where += (shown ? ", " : "") + locate_element(c, t.side, t.kind, i).text();
          ++shown;
        }
      out.push_back(fmt::format("{}: {} element(s) of {}, at {}{}", what, total, t.name, where, total > 3 ? ", ..." : ""));
    }
  }

  // --- finite elements over tolerance: where are they? ---
  if (t.over_tol > 0) {
    const SideResult& r = *ref;
    const std::vector<double>& rv = t.kind == TensorKind::out ? r.out : r.lse;
    std::vector<std::int64_t> per_req(nreq, 0), per_head(L.H, 0);
    std::int64_t total = 0, zeros = 0, first = -1;
    // Recompute the failing set with the same bounds the report used.
    std::vector<double> bounds;
    const Envelope* env = nullptr;
    if (auto it = in.envelopes.find(t.side); it != in.envelopes.end()) env = &it->second;
    bounds = t.kind == TensorKind::out ? out_bounds(in.policy, c, r, env) : lse_bounds(in.policy, c, r, env);
    for (std::size_t i = 0; i < rv.size(); ++i) {
      const double o = ob->get(static_cast<std::int64_t>(i));
      if (!std::isfinite(o) || !std::isfinite(rv[i])) continue;
      if (std::abs(o - rv[i]) <= bounds[i]) continue;
      ++total;
      if (first < 0) first = static_cast<std::int64_t>(i);
      if (o == 0.0) ++zeros;
      const std::int64_t row = static_cast<std::int64_t>(i) / per_row;
      ++per_head[(static_cast<std::int64_t>(i) / L.D) % L.H];
      const int rq = request_of(row);
      if (rq >= 0 && rq < nreq) ++per_req[rq];
    }
    if (total == 1) {
      out.push_back(fmt::format("a single element of {} is out of tolerance, at {}", t.name,
                                locate_element(c, t.side, t.kind, first).text()));
      return;
    }
    std::vector<int> reqs, heads;
    for (int q = 0; q < nreq; ++q)
      if (per_req[q]) reqs.push_back(q);
    for (int h = 0; h < L.H; ++h)
      if (per_head[h]) heads.push_back(h);
    if (nreq > 1 && reqs.size() == 1) {
      const int q = reqs[0];
      const bool whole = per_req[q] == s->qo_len(q) * per_row;
      std::string kv = locate_element(c, t.side, t.kind, s->qo_indptr[q] * per_row).kv;
      out.push_back(fmt::format("errors confined to {} request {} (rows {}..{}; {}){}: {} of its elements out of "
                                "tolerance; the other {} requests agree, so that request's KV pages or page-table "
                                "entries are suspect (e.g. its pages shuffled)",
                                side_name(t.side), q, s->qo_indptr[q], s->qo_indptr[q + 1] - 1, kv,
                                whole && zeros == total ? " (whole request missing: all zeros)" : "", per_req[q],
                                nreq - 1));
    } else if (L.H > 1 && heads.size() < static_cast<std::size_t>(L.H) && heads.size() <= 4) {
      out.push_back(fmt::format("errors confined to {} head(s) {}: {} elements out of tolerance; other heads agree",
                                t.name, ranges_text(heads), total));
    } else {
      out.push_back(fmt::format("{}: {} elements out of tolerance ({:.3g}%) across {} request(s) and {} head(s)",
                                t.name, total, 100.0 * double(total) / double(std::max<std::size_t>(rv.size(), 1)),
                                reqs.size(), heads.size()));
    }
  }
}

}  // namespace

std::vector<std::string> diagnose(const DiagnosisInput& in) {
  std::vector<std::string> out;
  // Structural findings first: they hold whatever the semantics.
  for (const auto& t : in.reports)
    if (t.checked && t.failed()) structural(in, t, out);

  // Which sides fail (finite elements over tolerance or -inf mismatches: NaN is structural)?
  std::set<SideKind> failing;
  for (const auto& t : in.reports)
    if (t.checked && (t.over_tol > 0 || t.inf > 0 || t.neginf_missing > 0 || t.neginf_extra > 0)) failing.insert(t.side);
  if (failing.empty()) return out;

  const Case& c = in.profiled.kase;
  std::vector<std::string> full, partial;
  for (const Variant& v : semantic_variants(c, in.profiled.semantics)) {
    bool all = true, some = false;
    std::vector<std::string> fixed;
    for (SideKind sk : failing) {
      if (v.only_side && *v.only_side != sk) continue;  // changes only the other side
      SideResult ref_v;
      try {
        ref_v = variant_reference(v, sk);
      } catch (const std::exception&) {
        all = false;
        continue;
      }
      const Envelope* env = nullptr;
      if (auto it = in.envelopes.find(sk); it != in.envelopes.end()) env = &it->second;
      for (TensorKind tk : {TensorKind::out, TensorKind::lse}) {
        const auto& ob = tk == TensorKind::out ? in.observed.out(sk) : in.observed.lse(sk);
        if (!ob) continue;
        const auto bounds = tk == TensorKind::out ? out_bounds(in.policy, c, ref_v, env)
                                                  : lse_bounds(in.policy, c, ref_v, env);
        const bool ok = agrees_ignoring_nan(tk, *ob, ref_v, bounds);
        const std::string name = std::string(tk == TensorKind::out ? "out_" : "lse_") + (sk == SideKind::prefill ? "p" : "d");
        bool was_failing = false;
        for (const auto& t : in.reports)
          if (t.name == name && (t.over_tol > 0 || t.inf > 0 || t.neginf_missing > 0 || t.neginf_extra > 0))
            was_failing = true;
        if (!ok) all = false;
        if (ok && was_failing) {
          some = true;
          fixed.push_back(name);
        }
      }
    }
    if (all && some) full.push_back(v.name);
    else if (some) {
      std::string f;
      for (const auto& x : fixed) f += (f.empty() ? "" : ", ") + x;
      partial.push_back(fmt::format("{} (fixes {})", v.name, f));
    }
  }
  for (const auto& f : full) out.push_back("matches the reference with: " + f);
  if (full.empty())
    for (const auto& p : partial) out.push_back("partly matches the reference with: " + p);
  if (full.empty() && partial.empty())
    out.push_back("no single semantic variant explains the differences (numerical error or a bug elsewhere)");
  return out;
}

}  // namespace podcheck::validation

// Diagnosis: the structure of elements never written, the patterns of wrong values (validation/patterns.hpp),
// and semantic variants one at a time (validation/variants.hpp), ranked most specific first.
#include "validation/diagnose.hpp"

#include "validation/error_map.hpp"
#include "validation/patterns.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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

bool value_failure(const TensorReport& t) {
  return t.checked && (t.over_tol > 0 || t.inf > 0 || t.neginf_missing > 0 || t.neginf_extra > 0);
}

// NaN where the reference is finite (never written, or computed): grouped by head, by request, else located.
void nonfinite(const DiagnosisInput& in, const TensorReport& t, std::vector<RankedFinding>& out) {
  const Case& c = in.profiled.kase;
  const Side* s = c.side(t.side);
  const SideResult* ref = in.reference.side(t.side);
  const auto& ob = t.kind == TensorKind::out ? in.observed.out(t.side) : in.observed.lse(t.side);
  if (!s || !ref || !ob || t.unwritten + t.nan == 0) return;
  const std::int64_t rows = ref->rows;
  const int H = ref->heads, D = t.kind == TensorKind::out ? ref->head_dim : 1;
  const std::int64_t per_row = static_cast<std::int64_t>(H) * D;
  const int nreq = s->num_requests();
  const auto nm = nan_mask(t.kind, *ob, *ref);
  std::vector<std::int64_t> per_head(H, 0), per_req(nreq, 0);
  std::int64_t total = 0;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(nm.size()); ++i)
    if (nm[i]) {
      ++total;
      ++per_head[(i / D) % H];
      const int r = s->request_of(i / per_row);
      if (r >= 0 && r < nreq) ++per_req[r];
    }
  const std::string what = t.unwritten > 0 && t.nan == 0 ? "never written (poison pattern left)"
                           : t.unwritten == 0           ? "never written (NaN sentinel left) or computed NaN"
                                                        : "never written or NaN";
  auto push = [&](std::string kind, std::string text, std::vector<FindingRange> ranges) {
    out.push_back({kRankNonfinite, Finding{std::move(kind), t.side, t.name, std::move(ranges), std::move(text)}});
  };
  const std::int64_t full_head = rows * D;
  std::vector<int> full_heads;
  std::int64_t in_full = 0;
  for (int h = 0; h < H; ++h)
    if (full_head > 0 && per_head[h] == full_head) {
      full_heads.push_back(h);
      in_full += per_head[h];
    }
  if (!full_heads.empty() && in_full == total) {
    const int g = c.group_size();
    std::set<int> within;
    for (int h : full_heads) within.insert(h % std::max(g, 1));
    const std::vector<int> wv(within.begin(), within.end());
    bool every_group = g > 1;
    if (every_group)
      for (int grp = 0; grp < c.num_kv_heads && every_group; ++grp)
        for (int w : wv)
          if (per_head[grp * g + w] != full_head) every_group = false;
    if (every_group && full_heads.size() == wv.size() * static_cast<std::size_t>(c.num_kv_heads))
      push("nonfinite-heads",
           fmt::format("{}: {} heads {} of every group of {} (GQA group = {} query heads per kv head), all {} rows: {} "
                       "elements",
                       what, t.name, ranges_text(wv), g, g, rows, total),
           {{"head_in_group", wv.front(), wv.back()}});
    else
      push("nonfinite-heads",
           fmt::format("{}: {} heads {} (all {} rows): {} elements", what, t.name, ranges_text(full_heads), rows, total),
           {{"head", full_heads.front(), full_heads.back()}});
    return;
  }
  std::vector<int> full_reqs;
  std::int64_t in_reqs = 0;
  for (int r = 0; r < nreq; ++r)
    if (s->qo_len(r) > 0 && per_req[r] == s->qo_len(r) * per_row) {
      full_reqs.push_back(r);
      in_reqs += per_req[r];
    }
  if (!full_reqs.empty() && in_reqs == total) {
    push("nonfinite-requests",
         fmt::format("{}: {} request(s) {} entirely (whole request missing): {} elements", what, t.name,
                     ranges_text(full_reqs), total),
         {{"request", full_reqs.front(), full_reqs.back()}});
    return;
  }
  std::string where;
  int shown = 0;
  std::vector<FindingRange> ranges;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(nm.size()) && shown < 3; ++i)
    if (nm[i]) {
      const Location loc = locate_element(c, t.side, t.kind, i);
      where += (shown ? ", " : "") + loc.text();
      if (shown == 0) ranges = {{"request", loc.request, loc.request}, {"row", loc.row, loc.row}, {"head", loc.head, loc.head}};
      ++shown;
    }
  ranges.push_back({"cells", total, total});
  push("nonfinite-elements",
       fmt::format("{}: {} element(s) of {}, at {}{}", what, total, t.name, where, total > 3 ? ", ..." : ""), ranges);
}

std::string side_tensors(const std::vector<TensorReport>& reports, SideKind side) {
  std::string s;
  for (const auto& t : reports)
    if (t.side == side && t.failed()) s += (s.empty() ? "" : ",") + t.name;
  return s;
}

}  // namespace

std::vector<Finding> diagnose(const DiagnosisInput& in) {
  std::vector<RankedFinding> found;
  for (const auto& t : in.reports)
    if (t.checked && t.failed()) nonfinite(in, t, found);

  // Which sides have wrong values (finite elements over tolerance or non-finite mismatches; NaN is structural)?
  std::set<SideKind> failing;
  for (const auto& t : in.reports)
    if (value_failure(t)) failing.insert(t.side);

  const Case& c = in.profiled.kase;
  const std::vector<Variant> variants = failing.empty() ? std::vector<Variant>{} : semantic_variants(c, in.profiled.semantics);
  Case work = failing.empty() ? Case{} : c;  // scratch for page-table candidates
  for (SideKind sk : failing) {
    const SideResult* ref = in.reference.side(sk);
    if (!ref) continue;
    const Envelope* env = nullptr;
    if (auto it = in.envelopes.find(sk); it != in.envelopes.end()) env = &it->second;
    const CellErrors cells = cell_errors(in.policy, c, sk, in.observed, *ref, env);
    for (auto& f : side_patterns(in, sk, cells, variants, work)) found.push_back(std::move(f));
  }
  // Only one side wrong.
  if (failing.size() == 1 && c.prefill && c.decode) {
    const SideKind bad = *failing.begin(), good = bad == SideKind::prefill ? SideKind::decode : SideKind::prefill;
    bool good_checked = false, good_clean = true;
    for (const auto& t : in.reports)
      if (t.side == good) {
        good_checked |= t.checked;
        good_clean &= !t.failed();
      }
    if (good_checked && good_clean)
      found.push_back({kRankOnly, Finding{"side-only", bad, side_tensors(in.reports, bad), {},
                                          fmt::format("only the {} side is wrong; the {} side agrees",
                                                      side_name(bad), side_name(good))}});
  }

  // Semantic variants, one at a time, on the sides with wrong values.
  if (!failing.empty()) {
    std::vector<std::string> full, partial;
    for (const Variant& v : variants) {
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
          const auto bounds = tk == TensorKind::out ? out_bounds(in.policy, c, ref_v, env) : lse_bounds(in.policy, c, ref_v, env);
          const bool ok = agrees_ignoring_nan(tk, *ob, ref_v, bounds);
          bool was_failing = false;
          for (const auto& t : in.reports)
            if (t.side == sk && t.kind == tk && value_failure(t)) was_failing = true;
          if (!ok) all = false;
          if (ok && was_failing) {
            some = true;
            fixed.push_back(tensor_name(sk, tk));
          }
        }
      }
      if (all && some) {
        full.push_back(v.name);
        std::string t;
        for (const auto& x : fixed) t += (t.empty() ? "" : ",") + x;
        found.push_back({kRankSemantic, Finding{"semantic-match", v.only_side, t, {},
                                                "matches the reference with: " + v.name}});
      } else if (some) {
        std::string f;
        for (const auto& x : fixed) f += (f.empty() ? "" : ", ") + x;
        partial.push_back(fmt::format("{} (fixes {})", v.name, f));
      }
    }
    if (full.empty())
      for (const auto& p : partial)
        found.push_back({kRankPartial, Finding{"semantic-partial", std::nullopt, "", {},
                                               "partly matches the reference with: " + p}});
    if (full.empty() && partial.empty())
      found.push_back({kRankNone, Finding{"semantic-none", std::nullopt, "", {},
                                          "no single semantic variant explains the differences (numerical error or a "
                                          "bug elsewhere)"}});
  }
  // A full semantic match is the structure: drop "no structure found".
  if (std::any_of(found.begin(), found.end(), [](const RankedFinding& f) { return f.finding.kind == "semantic-match"; }))
    found.erase(std::remove_if(found.begin(), found.end(),
                               [](const RankedFinding& f) { return f.finding.kind == "spread"; }),
                found.end());
  std::stable_sort(found.begin(), found.end(),
                   [](const RankedFinding& a, const RankedFinding& b) { return a.rank < b.rank; });
  std::vector<Finding> out;
  out.reserve(found.size());
  for (auto& f : found) out.push_back(std::move(f.finding));
  return out;
}

}  // namespace podcheck::validation

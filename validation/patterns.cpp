// Shapes of one side's wrong values (validation/patterns.hpp). Each analysis looks at the set of failing
// (row, head) cells and says which structure explains it, with the evidence; docs/VALIDATION.md lists them.
#include "validation/patterns.hpp"

#include "reference/naive.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace podcheck::validation {
namespace {

constexpr double kLn2 = 0.69314718055994530942;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Visible keys of a row as [lo, hi) from its first to its last visible key (lo >= hi: none). A custom mask is
// scanned key by key; the other modes are intervals.
struct Span {
  std::int64_t lo = 0, hi = 0;
  bool empty() const { return lo >= hi; }
};

Span row_span(const Side& s, int r, std::int64_t i) {
  const std::int64_t Q = s.qo_len(r), L = s.kv_len(r), pos = i + L - Q;
  const SideParams& p = s.params;
  if (p.mask_mode != MaskMode::custom) {
    std::int64_t lo = 0, hi = L;
    if (p.mask_mode == MaskMode::causal) hi = std::min(L, pos + 1);
    if (p.window_left >= 0) lo = std::max<std::int64_t>(0, pos - p.window_left);
    return hi > lo ? Span{lo, hi} : Span{0, 0};
  }
  Span sp{L, 0};
  for (std::int64_t j = 0; j < L; ++j)
    if (key_visible(s, r, i, j)) {
      sp.lo = std::min(sp.lo, j);
      sp.hi = j + 1;
    }
  return sp.hi > sp.lo ? sp : Span{0, 0};
}

// Does local row i of request r see the same keys under both sides (same requests and KV lengths)?
bool same_keys(const Side& a, const Side& b, int r, std::int64_t i) {
  if (a.params.mask_mode != MaskMode::custom && b.params.mask_mode != MaskMode::custom) {
    const Span x = row_span(a, r, i), y = row_span(b, r, i);
    if (x.empty() || y.empty()) return x.empty() == y.empty();
    return x.lo == y.lo && x.hi == y.hi;
  }
  for (std::int64_t j = 0; j < a.kv_len(r); ++j)
    if (key_visible(a, r, i, j) != key_visible(b, r, i, j)) return false;
  return true;
}

std::string ints(const std::vector<std::int64_t>& v) {
  std::vector<int> w(v.begin(), v.end());
  return ranges_text(w);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Everything one side's analyses share.
struct View {
  const DiagnosisInput& in;
  const Case& c;
  SideKind kind;
  const Side& s;
  const SideResult& ref;
  const CellErrors& e;
  const Envelope* env = nullptr;
  int H = 0, g = 1, Hkv = 1, R = 0, D = 0;
  std::vector<int> req;                        // request of each global row
  std::vector<std::uint8_t> row_fail;          // a cell of the row fails (NaN aside)
  std::vector<std::uint8_t> row_clean;         // no cell of the row fails or is NaN
  std::vector<std::uint8_t> row_empty;         // the reference row sees no key
  std::vector<std::int64_t> fail_rows;         // global rows with a failing cell
  std::vector<int> fail_reqs;                  // requests with a failing row
  std::int64_t fail_cells = 0;
  std::string tensors;                         // failing tensors of the side, "out_d" or "out_d,lse_d"
  bool out_fails = false, lse_fails = false;
  std::vector<double> out_b, lse_b;            // bounds (base case)

  View(const DiagnosisInput& di, SideKind k, const CellErrors& ce)
      : in(di), c(di.profiled.kase), kind(k), s(*di.profiled.kase.side(k)), ref(*di.reference.side(k)), e(ce) {
    if (auto it = in.envelopes.find(k); it != in.envelopes.end()) env = &it->second;
    H = c.num_qo_heads;
    g = std::max(1, c.group_size());
    Hkv = c.num_kv_heads;
    R = s.num_requests();
    D = c.head_dim;
    req.assign(static_cast<std::size_t>(ref.rows), 0);
    for (int r = 0; r < R; ++r)
      for (std::int64_t row = s.qo_indptr[r]; row < s.qo_indptr[r + 1]; ++row) req[row] = r;
    row_fail.assign(static_cast<std::size_t>(ref.rows), 0);
    row_clean.assign(static_cast<std::size_t>(ref.rows), 1);
    row_empty.assign(static_cast<std::size_t>(ref.rows), 0);
    for (std::int64_t row = 0; row < ref.rows; ++row) {
      row_empty[row] = H > 0 && std::isinf(ref.lse[row * H]) && ref.lse[row * H] < 0;
      for (int h = 0; h < H; ++h) {
        const std::int64_t cell = row * H + h;
        if (e.fails(cell)) {
          row_fail[row] = 1;
          ++fail_cells;
          out_fails |= (e.flags[cell] & CellErrors::kOutFail) != 0;
          lse_fails |= (e.flags[cell] & CellErrors::kLseFail) != 0;
        }
        if (e.fails(cell) || e.has_nan(cell)) row_clean[row] = 0;
      }
      if (row_fail[row]) fail_rows.push_back(row);
    }
    for (std::int64_t row : fail_rows)
      if (fail_reqs.empty() || fail_reqs.back() != req[row]) fail_reqs.push_back(req[row]);
    if (out_fails) tensors = tensor_name(k, TensorKind::out);
    if (lse_fails) tensors += std::string(tensors.empty() ? "" : ",") + tensor_name(k, TensorKind::lse);
    if (e.out_checked) out_b = out_bounds(in.policy, c, ref, env);
    if (e.lse_checked) lse_b = lse_bounds(in.policy, c, ref, env);
  }

  const Tensor& ob_out() const { return *in.observed.out(kind); }
  const Tensor& ob_lse() const { return *in.observed.lse(kind); }
  std::int64_t local(std::int64_t row) const { return row - s.qo_indptr[req[row]]; }
  std::string side() const { return std::string(side_name(kind)); }
  std::string tensors_text() const {
    std::string t = tensors;
    std::replace(t.begin(), t.end(), ',', '/');
    return t;
  }

  // "decode request 3 rows 0-4, request 7 row 2" for a set of global rows (up to 4 requests, then "...").
  std::string rows_text(const std::vector<std::int64_t>& rows) const {
    std::string out;
    std::size_t i = 0;
    int shown = 0;
    while (i < rows.size()) {
      const int r = req[rows[i]];
      std::vector<std::int64_t> loc;
      for (; i < rows.size() && req[rows[i]] == r; ++i) loc.push_back(local(rows[i]));
      if (shown == 4) {
        out += ", ...";
        break;
      }
      out += fmt::format("{}request {}", shown ? ", " : side() + " ", r);
      if (s.qo_len(r) > 1) out += fmt::format(" {} {}", loc.size() == 1 ? "row" : "rows", ints(loc));
      ++shown;
    }
    return out;
  }
  std::vector<FindingRange> rows_ranges(const std::vector<std::int64_t>& rows) const {
    std::vector<FindingRange> out;
    std::size_t i = 0;
    while (i < rows.size()) {
      const int r = req[rows[i]];
      out.push_back({"request", r, r});
      std::int64_t a = local(rows[i]), b = a;
      for (++i; i < rows.size() && req[rows[i]] == r; ++i) {
        if (local(rows[i]) != b + 1) {
          out.push_back({"row", a, b});
          a = local(rows[i]);
        }
        b = local(rows[i]);
      }
      out.push_back({"row", a, b});
    }
    return out;
  }

  Finding finding(std::string kind_, std::string text, std::vector<FindingRange> ranges = {},
                  std::string tensor = "") const {
    return Finding{std::move(kind_), kind, tensor.empty() ? tensors : tensor, std::move(ranges), std::move(text)};
  }
};

// ---- one element ------------------------------------------------------------------------------------------

bool single_element(const View& v, std::vector<RankedFinding>& out) {
  std::int64_t n = 0;
  for (const auto& t : v.in.reports)
    if (t.side == v.kind && t.checked) n += t.over_tol + t.inf + t.neginf_missing + t.neginf_extra;
  if (n != 1 || v.fail_cells != 1) return false;
  const std::int64_t row = v.fail_rows[0];
  for (int h = 0; h < v.H; ++h) {
    const std::int64_t cell = row * v.H + h;
    if (!v.e.fails(cell)) continue;
    std::int64_t flat = cell;
    TensorKind tk = TensorKind::lse;
    if (v.e.flags[cell] & CellErrors::kOutFail) {
      tk = TensorKind::out;
      for (int d = 0; d < v.D; ++d) {
        const std::int64_t i = cell * v.D + d;
        const double o = v.ob_out().get(i), r = v.ref.out[i];
        if (!std::isnan(o) && (!std::isfinite(o) || std::abs(o - r) > v.out_b[i])) flat = i;
      }
    }
    const Location loc = locate_element(v.c, v.kind, tk, flat);
    const std::string name = tensor_name(v.kind, tk);
    out.push_back({kRankSingle, v.finding("single-element",
                                          fmt::format("a single element of {} is out of tolerance, at {}", name,
                                                      loc.text()),
                                          {{"request", loc.request, loc.request}, {"row", loc.row, loc.row},
                                           {"head", h, h}},
                                          name)});
    return true;
  }
  return false;
}

// ---- rows that see no key, rows left empty ----------------------------------------------------------------

void empty_rows(const View& v, std::vector<RankedFinding>& out) {
  std::vector<std::int64_t> empty_all;
  for (std::int64_t row = 0; row < v.ref.rows; ++row)
    if (v.row_empty[row]) empty_all.push_back(row);
  bool all_empty = !v.fail_rows.empty();
  for (std::int64_t row : v.fail_rows) all_empty &= v.row_empty[row] != 0;
  if (all_empty) {
    out.push_back({kRankExplains,
                   v.finding("empty-rows-written",
                             fmt::format("rows that see no key got output: the errors are on {} of the {} rows that "
                                         "see no key ({}; {} (row, head) pairs), which must give out 0 and LSE -inf; "
                                         "every row that sees keys agrees",
                                         v.fail_rows.size(), empty_all.size(), v.rows_text(v.fail_rows),
                                         v.fail_cells),
                             v.rows_ranges(v.fail_rows))});
    return;
  }
  // The reverse: rows that see keys written as empty (LSE -inf, or an output of zeros).
  bool all_left = !v.fail_rows.empty();
  for (std::int64_t row : v.fail_rows) {
    if (v.row_empty[row]) {
      all_left = false;
      break;
    }
    for (int h = 0; h < v.H && all_left; ++h) {
      const std::int64_t cell = row * v.H + h;
      if (!v.e.fails(cell)) continue;
      bool looks_empty = false;
      if (v.e.lse_checked) {
        const double l = v.ob_lse().get(cell);
        looks_empty |= std::isinf(l) && l < 0;
      }
      if (v.e.out_checked && !looks_empty) {
        bool zeros = true, ref_zero = true;
        for (int d = 0; d < v.D; ++d) {
          zeros &= v.ob_out().get(cell * v.D + d) == 0.0;
          ref_zero &= v.ref.out[cell * v.D + d] == 0.0;
        }
        looks_empty = zeros && !ref_zero;
      }
      all_left &= looks_empty;
    }
  }
  if (all_left)
    out.push_back({kRankExplains,
                   v.finding("rows-left-empty",
                             fmt::format("rows that see keys were written as empty (out 0 / LSE -inf): {} rows ({}; "
                                         "{} (row, head) pairs); the other rows agree",
                                         v.fail_rows.size(), v.rows_text(v.fail_rows), v.fail_cells),
                             v.rows_ranges(v.fail_rows))});
}

// ---- a mask bound: the error rows are the rows whose visible keys change under another mask ---------------

void mask_bounds(const View& v, const std::vector<Variant>& variants, std::vector<RankedFinding>& out) {
  // Only a contrast explains: some row that sees keys must agree (when every row is wrong, any mask that changes
  // every row would "match").
  bool contrast = false;
  for (std::int64_t row = 0; row < v.ref.rows && !contrast; ++row) contrast = v.row_clean[row] && !v.row_empty[row];
  if (v.fail_rows.empty() || !contrast) return;
  std::vector<std::string> names;  // every mask whose changed rows are exactly the error rows
  for (const Variant& var : variants) {
    if (!var.mask_only || (var.only_side && *var.only_side != v.kind)) continue;
    const Side* alt = var.kase.side(v.kind);
    if (!alt) continue;
    std::vector<std::int64_t> differ;
    for (std::int64_t row = 0; row < v.ref.rows; ++row)
      if (!same_keys(v.s, *alt, v.req[row], v.local(row))) differ.push_back(row);
    if (!differ.empty() && differ == v.fail_rows) names.push_back(var.name);
  }
  if (names.empty()) return;
  std::string alts;
  for (std::size_t i = 0; i < names.size(); ++i)
    alts += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  out.push_back({kRankExplains,
                 v.finding("mask-bound",
                           fmt::format("errors on exactly the {} rows whose visible keys change with {} ({}): the "
                                       "kernel's mask bound is off there, every other row agrees",
                                       v.fail_rows.size(), alts, v.rows_text(v.fail_rows)),
                           v.rows_ranges(v.fail_rows))});
}

// ---- pages: a permutation of one request's page list explains its errors ----------------------------------

// Does request r agree with the observed outputs (NaN elements aside) when its page list is `pages`? Cells in
// `order` are checked first; the first disagreeing cell ends the check.
bool request_agrees(const View& v, Case& work, int r, const std::vector<std::int32_t>& pages,
                    const std::vector<std::int64_t>& order) {
  Side& ws = *work.side(v.kind);
  auto& ix = ws.kv.pages.indices;
  const auto b = ws.kv.pages.indptr[r];
  const std::vector<std::int32_t> saved(ix.begin() + b, ix.begin() + b + static_cast<std::ptrdiff_t>(pages.size()));
  std::copy(pages.begin(), pages.end(), ix.begin() + b);
  const int D = v.D;
  std::vector<double> o(D);
  bool ok = true;
  for (std::int64_t cell : order) {
    const std::int64_t row = cell / v.H;
    const int h = static_cast<int>(cell % v.H);
    double l = 0;
    reference_naive_row<double>(work, v.kind, row, h, v.in.profiled.semantics, o.data(), l);
    SideResult one{1, 1, D, o, {l}};
    Envelope env1;
    if (v.env) {
      env1.out.assign(v.env->out.begin() + cell * D, v.env->out.begin() + (cell + 1) * D);
      env1.lse = {v.env->lse[cell]};
    }
    auto agree = [](double ob, double rf, double bd) {
      if (std::isnan(ob)) return true;
      if (!std::isfinite(ob) || !std::isfinite(rf)) return ob == rf;
      return std::abs(ob - rf) <= bd;
    };
    if (v.e.out_checked) {
      const auto bo = out_bounds(v.in.policy, v.c, one, v.env ? &env1 : nullptr);
      for (int d = 0; d < D && ok; ++d) ok = agree(v.ob_out().get(cell * D + d), o[d], bo[d]);
    }
    if (ok && v.e.lse_checked) {
      const auto bl = lse_bounds(v.in.policy, v.c, one, v.env ? &env1 : nullptr);
      ok = agree(v.ob_lse().get(cell), l, bl[0]);
    }
    if (!ok) break;
  }
  std::copy(saved.begin(), saved.end(), ix.begin() + b);
  return ok;
}

std::string pages_text(const std::vector<std::int32_t>& p) {
  std::string s = "[";
  for (std::size_t i = 0; i < p.size(); ++i) s += fmt::format("{}{}", i ? " " : "", p[i]);
  return s + "]";
}

// Page lists a kernel might have read instead of request r's: two pages swapped, the list reversed or
// rotated, the pool's pages in order from indptr[r], another request's pages of the same count.
std::vector<std::pair<std::string, std::vector<std::int32_t>>> page_candidates(const Side& s, int r) {
  const auto& pt = s.kv.pages;
  const auto b = pt.indptr[r], e = pt.indptr[r + 1];
  const std::vector<std::int32_t> p(pt.indices.begin() + b, pt.indices.begin() + e);
  const int n = static_cast<int>(p.size());
  std::vector<std::pair<std::string, std::vector<std::int32_t>>> out;
  auto add = [&](std::string what, std::vector<std::int32_t> q) {
    if (q == p) return;
    for (const auto& [w, x] : out)
      if (x == q) return;
    out.push_back({std::move(what), std::move(q)});
  };
  if (n <= 24)
    for (int a = 0; a < n; ++a)
      for (int c = a + 1; c < n; ++c) {
        auto q = p;
        std::swap(q[a], q[c]);
        add(fmt::format("its pages {} and {} (positions {} and {}) swapped", p[a], p[c], a, c), q);
      }
  if (n >= 3) {
    add("its page list reversed", std::vector<std::int32_t>(p.rbegin(), p.rend()));
    for (int k = 1; k < n; ++k) {
      auto q = p;
      std::rotate(q.begin(), q.begin() + k, q.end());
      add(fmt::format("its page list rotated by {}", k), q);
    }
  }
  {
    std::vector<std::int32_t> q(static_cast<std::size_t>(n));
    bool fits = true;
    for (int k = 0; k < n; ++k) {
      q[k] = b + k;
      fits &= b + k < s.kv.num_pages();
    }
    if (fits) add("the pool's pages read in order from indptr (page table ignored)", q);
  }
  for (int o = 0; o < s.num_requests(); ++o)
    if (o != r && pt.indptr[o + 1] - pt.indptr[o] == n)
      add(fmt::format("request {}'s pages read instead", o),
          std::vector<std::int32_t>(pt.indices.begin() + pt.indptr[o], pt.indices.begin() + pt.indptr[o + 1]));
  return out;
}

// What the page analysis found: a permutation that explains a request's errors (reported), or nothing.
struct PageResult {
  bool explained = false;  // a finding was reported
  bool tried = false;      // permutations were tried and none explains the errors
};

PageResult pages(const View& v, Case& work, std::vector<RankedFinding>& out) {
  PageResult res;
  if (!v.s.kv.paged || v.fail_reqs.empty() || v.fail_reqs.size() > 3) return res;
  // Errors follow pages only if every failing row sees keys and has every head wrong (a page holds all kv heads).
  for (std::int64_t row : v.fail_rows) {
    if (v.row_empty[row]) return res;
    for (int h = 0; h < v.H; ++h)
      if (!v.e.fails(row * v.H + h)) return res;
  }
  for (int r : v.fail_reqs) {
    const std::int64_t Q = v.s.qo_len(r), L = v.s.kv_len(r);
    const std::int64_t first = v.s.qo_indptr[r];
    std::vector<std::int64_t> order, rows_r;
    for (std::int64_t row : v.fail_rows)
      if (v.req[row] == r) {
        rows_r.push_back(row);
        for (int h = 0; h < v.H; ++h) order.push_back(row * v.H + h);
      }
    for (std::int64_t row = first; row < first + Q; ++row)
      if (!v.row_fail[row])
        for (int h = 0; h < v.H; ++h) order.push_back(row * v.H + h);
    const auto& pt = v.s.kv.pages;
    const std::vector<std::int32_t> mine(pt.indices.begin() + pt.indptr[r], pt.indices.begin() + pt.indptr[r + 1]);
    if (static_cast<double>(Q) * v.H * static_cast<double>(L) * v.D > 4e8) continue;  // too costly to try
    std::string found;
    std::vector<std::int32_t> found_pages;
    for (const auto& [what, cand] : page_candidates(v.s, r))
      if (request_agrees(v, work, r, cand, order)) {
        found = what;
        found_pages = cand;
        break;
      }
    if (found.empty()) {
      res.tried = true;
      continue;
    }
    std::vector<FindingRange> ranges = {{"request", r, r}};
    for (std::int32_t p : mine) ranges.push_back({"page", p, p});
    out.push_back({kRankExplains,
                   v.finding("page-permutation",
                             fmt::format("errors confined to {} request {} (rows {}..{}; kv_len {}, pages {}): every "
                                         "head of its {} failing row(s) is wrong and the reference with {} (pages {}) "
                                         "matches the kernel: a page-table or page-index bug",
                                         v.side(), r, first, first + Q - 1, L, pages_text(mine), rows_r.size(), found,
                                         pages_text(found_pages)),
                             ranges)});
    res.explained = true;
  }
  return res;
}

// ---- the LSE's base, sign or offset; an output scale --------------------------------------------------------

struct Pairs {
  std::vector<double> ob, rf, bd;
  std::vector<std::int64_t> cell;
  bool nonfinite_mismatch = false;
};

Pairs lse_pairs(const View& v) {
  Pairs p;
  for (std::int64_t cell = 0; cell < v.ref.rows * v.H; ++cell) {
    const double o = v.ob_lse().get(cell), r = v.ref.lse[cell];
    if (std::isnan(o)) continue;
    if (!std::isfinite(o) || !std::isfinite(r)) {
      p.nonfinite_mismatch |= o != r;
      continue;
    }
    p.ob.push_back(o);
    p.rf.push_back(r);
    p.bd.push_back(v.lse_b[cell]);
    p.cell.push_back(cell);
  }
  return p;
}

// Does observed == f(reference, group) hold within the bounds for every pair?
template <class F>
bool holds(const Pairs& p, F&& f) {
  for (std::size_t i = 0; i < p.ob.size(); ++i)
    if (!(std::abs(p.ob[i] - f(i)) <= p.bd[i])) return false;
  return !p.ob.empty();
}

void lse_shape(const View& v, std::vector<RankedFinding>& out) {
  if (!v.lse_fails || !v.e.lse_checked) return;
  const std::string name = tensor_name(v.kind, TensorKind::lse), oname = tensor_name(v.kind, TensorKind::out);
  const bool only = !v.out_fails;
  const std::string pre = only ? fmt::format("only {} is wrong ({} agrees): ", name, v.e.out_checked ? oname : "no output checked")
                               : fmt::format("{}: ", name);
  const Pairs p = lse_pairs(v);
  if (p.nonfinite_mismatch || p.ob.empty()) return;
  const bool base2 = v.c.lse_base == LseBase::base2;
  const double k = base2 ? kLn2 : 1.0 / kLn2;
  if (holds(p, [&](std::size_t i) { return k * p.rf[i]; })) {
    out.push_back({kRankExplains,
                   v.finding("lse-base",
                             pre + fmt::format("it is the LSE in base {} (observed = {} x reference on every row, "
                                               "{} values), the case asks for base {}",
                                               base2 ? "e" : "2", base2 ? "ln 2" : "1/ln 2", p.ob.size(),
                                               base2 ? "2" : "e"),
                             {}, name)});
    return;
  }
  if (holds(p, [&](std::size_t i) { return -p.rf[i]; })) {
    out.push_back({kRankExplains, v.finding("lse-sign", pre + fmt::format("its sign is flipped (observed = -reference "
                                                                          "on every row, {} values)", p.ob.size()),
                                            {}, name)});
    return;
  }
  std::vector<double> diff(p.ob.size());
  for (std::size_t i = 0; i < diff.size(); ++i) diff[i] = p.ob[i] - p.rf[i];
  const double c0 = median(diff);
  if (holds(p, [&](std::size_t i) { return p.rf[i] + c0; })) {
    const double nat = base2 ? c0 * kLn2 : c0;
    out.push_back({kRankExplains,
                   v.finding("lse-offset",
                             pre + fmt::format("observed = reference + {:.6g} on every row ({} values; {:.6g} in "
                                               "natural-log units, a factor {:.6g} inside the log-sum-exp)",
                                               c0, p.ob.size(), nat, std::exp(nat)),
                             {}, name)});
    return;
  }
  // An offset constant per head, or per (request, head) (e.g. a bias that depends on L - Q).
  auto grouped = [&](auto key, const char* what, const char* kind_dim) {
    std::map<std::int64_t, std::vector<double>> by;
    for (std::size_t i = 0; i < diff.size(); ++i) by[key(p.cell[i])].push_back(diff[i]);
    if (by.size() < 2 || by.size() * 2 > diff.size()) return false;
    std::map<std::int64_t, double> off, bound;
    for (auto& [g, d] : by) off[g] = median(d);
    for (std::size_t i = 0; i < diff.size(); ++i) {
      double& b = bound[key(p.cell[i])];
      b = std::max(b, p.bd[i]);
    }
    for (const auto& [g, o] : off)
      if (!(std::abs(o) > bound[g])) return false;  // some groups right: a where-pattern, not an offset law
    if (!holds(p, [&](std::size_t i) { return p.rf[i] + off[key(p.cell[i])]; })) return false;
    double lo = off.begin()->second, hi = lo;
    for (const auto& [g, o] : off) lo = std::min(lo, o), hi = std::max(hi, o);
    out.push_back({kRankExplains,
                   v.finding("lse-offset",
                             pre + fmt::format("observed = reference + an offset constant per {} (from {:.6g} to "
                                               "{:.6g}, {} {}s): a bias or scale applied per {} (e.g. ALiBi at "
                                               "another position, a per-head factor inside the log)",
                                               what, lo, hi, off.size(), what, what),
                             {{kind_dim, off.begin()->first, std::prev(off.end())->first}}, name)});
    return true;
  };
  if (grouped([&](std::int64_t cell) { return cell % v.H; }, "head", "head")) return;
  if (grouped([&](std::int64_t cell) { return static_cast<std::int64_t>(v.req[cell / v.H]) * v.H + cell % v.H; },
              "(request, head)", "cells"))
    return;
  if (only)
    out.push_back({kRankOnly, v.finding("lse-only",
                                        fmt::format("only {} is wrong; {} agrees: the softmax weights are right but "
                                                    "the LSE written is not ({} (row, head) pairs)",
                                                    name, v.e.out_checked ? oname : "no output checked", v.fail_cells),
                                        {}, name)});
}

void out_shape(const View& v, std::vector<RankedFinding>& out) {
  if (!v.out_fails || !v.e.out_checked) return;
  const std::string name = tensor_name(v.kind, TensorKind::out), lname = tensor_name(v.kind, TensorKind::lse);
  const bool only = !v.lse_fails && v.e.lse_checked;
  // A constant factor over every element?
  double rmax = 0;
  for (double r : v.ref.out) rmax = std::max(rmax, std::abs(r));
  std::vector<double> ratio;
  bool nonfinite = false;
  for (std::size_t i = 0; i < v.ref.out.size(); ++i) {
    const double o = v.ob_out().get(static_cast<std::int64_t>(i)), r = v.ref.out[i];
    if (std::isnan(o)) continue;
    if (!std::isfinite(o)) nonfinite = true;
    if (std::abs(r) >= 0.25 * rmax && r != 0) ratio.push_back(o / r);
  }
  if (!nonfinite && !ratio.empty()) {
    const double k = median(ratio);
    bool all = std::abs(k - 1.0) > 1e-3;
    for (std::size_t i = 0; i < v.ref.out.size() && all; ++i) {
      const double o = v.ob_out().get(static_cast<std::int64_t>(i));
      if (!std::isnan(o)) all = std::abs(o - k * v.ref.out[i]) <= v.out_b[i] * std::max(1.0, std::abs(k));
    }
    if (all) {
      const double vs = v.s.params.v_scale;
      std::string why = k == 0 ? "the output is all zeros" : "a scale applied once too often or not at all";
      if (vs != 1.0 && std::abs(k - vs) <= 1e-3 * std::abs(vs)) why = fmt::format("k = v_scale ({:.6g}): v_scale applied twice", vs);
      else if (vs != 1.0 && std::abs(k * vs - 1.0) <= 1e-3) why = fmt::format("k = 1 / v_scale ({:.6g}): v_scale not applied", vs);
      out.push_back({kRankExplains,
                     v.finding("out-scale",
                               (only ? fmt::format("only {} is wrong ({} agrees): ", name, lname) : name + ": ") +
                                   fmt::format("observed = k x reference on every element, k = {:.6g} ({})", k, why),
                               {}, name)});
      return;
    }
  }
  if (only)
    out.push_back({kRankOnly, v.finding("out-only",
                                        fmt::format("only {} is wrong; {} agrees: the softmax statistics are right, so "
                                                    "the error is on the V side (V values or their scale, P.V, the "
                                                    "final division) ({} (row, head) pairs)",
                                                    name, lname, v.fail_cells),
                                        {}, name)});
}

// ---- heads ------------------------------------------------------------------------------------------------

bool heads(const View& v, std::vector<RankedFinding>& out) {
  std::vector<std::int64_t> per_head(v.H, 0);
  for (std::int64_t row : v.fail_rows)
    for (int h = 0; h < v.H; ++h) per_head[h] += v.e.fails(row * v.H + h);
  std::vector<int> hf;
  for (int h = 0; h < v.H; ++h)
    if (per_head[h]) hf.push_back(h);
  if (hf.empty() || static_cast<int>(hf.size()) == v.H) return false;
  const int g = v.g;
  std::string in_req;
  std::vector<FindingRange> ranges;
  if (v.R > 1 && v.fail_reqs.size() == 1) {
    const int r = v.fail_reqs[0];
    in_req = fmt::format(" of {} request {} (the other {} requests agree)", v.side(), r, v.R - 1);
    ranges.push_back({"request", r, r});
  }
  // The same heads within every GQA group?
  if (g > 1) {
    std::vector<std::set<int>> within(v.Hkv);
    for (int h : hf) within[h / g].insert(h % g);
    bool same = true;
    for (int k = 1; k < v.Hkv; ++k) same &= within[k] == within[0];
    if (same && v.Hkv > 1 && !within[0].empty() && static_cast<int>(within[0].size()) < g) {
      const std::vector<int> w(within[0].begin(), within[0].end());
      const bool tail = w.back() == g - 1 && w.back() - w.front() + 1 == static_cast<int>(w.size());
      ranges.push_back({"head_in_group", w.front(), w.back()});
      out.push_back({kRankWhere,
                     v.finding("heads-in-group",
                               fmt::format("errors confined to {} heads {} of every group of {} (GQA group = {} query "
                                           "heads per kv head){}{}: {} (row, head) pairs; the other heads agree",
                                           v.tensors_text(), ranges_text(w), g, g,
                                           tail ? fmt::format(", i.e. heads >= {} within each group", w.front()) : "",
                                           in_req, v.fail_cells),
                               ranges)});
      return true;
    }
    // Whole groups: every query head of some kv heads.
    std::vector<int> kvs;
    bool whole = true;
    for (int k = 0; k < v.Hkv; ++k) {
      if (within[k].empty()) continue;
      whole &= static_cast<int>(within[k].size()) == g;
      kvs.push_back(k);
    }
    if (whole && static_cast<int>(kvs.size()) < v.Hkv) {
      ranges.push_back({"kv_head", kvs.front(), kvs.back()});
      out.push_back({kRankWhere,
                     v.finding("kv-head-group",
                               fmt::format("errors confined to the query heads of kv head(s) {} ({} heads {}){}: every "
                                           "query head reading them is wrong and the others agree, so that kv head's "
                                           "K/V (or the index that selects it) is suspect: {} (row, head) pairs",
                                           ranges_text(kvs), v.tensors_text(), ranges_text(hf), in_req, v.fail_cells),
                               ranges)});
      return true;
    }
  }
  std::string why;
  if (g > 1) {
    bool sibling_ok = true;  // another query head of the same kv head agrees wherever these fail
    for (int h : hf) {
      bool some = false;
      for (int o = (h / g) * g; o < (h / g + 1) * g; ++o) some |= per_head[o] == 0;
      sibling_ok &= some;
    }
    if (sibling_ok)
      why = "; query heads reading the same kv head agree, so the KV is read right: a per-query-head fault (its "
            "query, its ALiBi slope, or where its output goes), not the pages";
  } else {
    why = "; a per-head fault (its query, its output indexing, or its kv head's slice of the KV)";
  }
  ranges.push_back({"head", hf.front(), hf.back()});
  out.push_back({kRankWhere,
                 v.finding("heads", fmt::format("errors confined to {} head(s) {}{}: {} (row, head) pair(s) out of "
                                                "tolerance, the other heads agree{}",
                                                v.tensors_text(), ranges_text(hf), in_req, v.fail_cells, why),
                           ranges)});
  return true;
}

// ---- query rows: tiles of packed rows, RoPE positions -----------------------------------------------------

bool row_tiles(const View& v, std::vector<RankedFinding>& out) {
  bool any = false;
  int reported = 0;
  for (int r : v.fail_reqs) {
    const std::int64_t Q = v.s.qo_len(r), first = v.s.qo_indptr[r];
    if (Q < 2) continue;
    // Packed index of (local row i, head h): i * g + h % g (the rows x group layout of a GQA tile).
    std::set<std::int64_t> packed, rows;
    for (std::int64_t i = 0; i < Q; ++i)
      for (int h = 0; h < v.H; ++h)
        if (v.e.fails((first + i) * v.H + h)) {
          packed.insert(i * v.g + h % v.g);
          rows.insert(i);
        }
    if (rows.empty() || static_cast<std::int64_t>(rows.size()) == Q) continue;
    auto aligned = [](std::int64_t lo, std::int64_t hi, std::int64_t n, std::int64_t density_num) -> std::int64_t {
      if (2 * density_num < hi - lo + 1) return 0;
      for (std::int64_t T : {128, 64, 32, 16})
        if (lo % T == 0 && ((hi + 1) % T == 0 || hi + 1 == n) && hi - lo + 1 < n) return T;
      return 0;
    };
    const std::int64_t QG = Q * v.g;
    const std::int64_t pl = *packed.begin(), ph = *packed.rbegin(), il = *rows.begin(), ih = *rows.rbegin();
    std::int64_t T = aligned(pl, ph, QG, static_cast<std::int64_t>(packed.size()));
    bool by_packed = T > 0 && v.g > 1;
    if (T == 0 && v.g > 1) T = aligned(il, ih, Q, static_cast<std::int64_t>(rows.size()));
    if (T == 0) continue;
    const std::int64_t lo = by_packed || v.g == 1 ? pl : il, hi = by_packed || v.g == 1 ? ph : ih;
    const std::int64_t n = by_packed || v.g == 1 ? QG : Q;
    std::string which;
    if (lo == 0 && hi + 1 <= T) which = ", the first tile";
    else if (hi + 1 == n && lo == (n - 1) / T * T) which = n % T ? fmt::format(", the last tile (partial: {} of {})", n % T, T) : ", the last tile";
    std::string what = by_packed ? fmt::format("packed query rows {}-{} (row x group of {}: query rows {}-{})", lo, hi,
                                               v.g, il, ih)
                                 : fmt::format("query rows {}-{}", lo, hi);
    if (++reported > 3) continue;
    out.push_back({kRankWhere,
                   v.finding("row-tile",
                             fmt::format("errors confined to {} of {} request {} ({} of its {} rows): aligned to a tile "
                                         "of {} {}rows{}; the other rows agree",
                                         what, v.side(), r, rows.size(), Q, T, by_packed ? "packed " : "", which),
                             {{"request", r, r}, {by_packed ? "packed_row" : "row", lo, hi}, {"row", il, ih}})});
    any = true;
  }
  return any;
}

bool rope_positions(const View& v, std::vector<RankedFinding>& out) {
  if (v.s.params.pos_encoding != PosEncoding::rope_llama) return false;
  std::int64_t fail_min = std::numeric_limits<std::int64_t>::max(), fail_max = std::numeric_limits<std::int64_t>::min();
  std::int64_t pass_min = fail_min, pass_max = fail_max, pass_n = 0;
  for (std::int64_t row = 0; row < v.ref.rows; ++row) {
    const int r = v.req[row];
    const std::int64_t pos = v.local(row) + v.s.kv_len(r) - v.s.qo_len(r);
    if (v.row_fail[row]) fail_min = std::min(fail_min, pos), fail_max = std::max(fail_max, pos);
    else if (v.row_clean[row]) pass_min = std::min(pass_min, pos), pass_max = std::max(pass_max, pos), ++pass_n;
  }
  if (v.fail_rows.size() < 2 || pass_n == 0) return false;
  std::string text;
  std::vector<FindingRange> ranges;
  if (fail_max < 0 && pass_min >= 0) {
    text = fmt::format("errors on exactly the rows whose RoPE position i + L - Q is negative ({} rows, positions {} to "
                       "{}; {}): rows at positions >= 0 agree",
                       v.fail_rows.size(), fail_min, fail_max, v.rows_text(v.fail_rows));
    ranges.push_back({"rope_position", fail_min, fail_max});
  } else if (fail_min > pass_max && pass_max >= 0) {
    text = fmt::format("errors on exactly the rows whose RoPE position i + L - Q is >= {} ({} rows, positions {} to {}; "
                       "{}): rows at positions <= {} agree (a position or frequency bound)",
                       fail_min, v.fail_rows.size(), fail_min, fail_max, v.rows_text(v.fail_rows), pass_max);
    ranges.push_back({"rope_position", fail_min, fail_max});
  } else {
    return false;
  }
  out.push_back({kRankWhere, v.finding("rope-position", text, ranges)});
  return true;
}

// ---- KV positions: past a boundary, a length class, one page ----------------------------------------------

std::string boundary_hint(const View& v, std::int64_t a, std::int64_t b) {
  // Boundaries B in [a, b] with a row failing iff it sees key B: name the round ones.
  std::vector<std::string> hints;
  const int ps = v.s.kv.paged ? v.s.kv.pages.page_size : 0;
  if (ps > 1) {
    const std::int64_t m = (a + ps - 1) / ps * ps;
    if (m <= b && m > 0 && m + ps > b) hints.push_back(fmt::format("{} (page {} starts there, page size {})", m, m / ps, ps));
  }
  for (std::int64_t T = std::int64_t{1} << 20; T >= 16; T /= 2) {
    const std::int64_t m = (a + T - 1) / T * T;
    if (m <= b && m > 0) {
      hints.push_back(fmt::format("{} (a multiple of {}: a KV tile or split-KV chunk)", m, T));
      break;
    }
  }
  if (hints.empty()) return "";
  std::string s = "; e.g. B = ";
  for (std::size_t i = 0; i < hints.size(); ++i) s += (i ? " or " : "") + hints[i];
  return s;
}

bool kv_positions(const View& v, std::vector<RankedFinding>& out) {
  std::vector<Span> span(static_cast<std::size_t>(v.ref.rows));
  std::int64_t f_last_min = std::numeric_limits<std::int64_t>::max(), f_last_max = -1, p_last_min = f_last_min,
               p_last_max = -1, f_lo_max = -1, p_lo_min = f_last_min;
  std::int64_t nf = 0, np = 0;
  for (std::int64_t row = 0; row < v.ref.rows; ++row) {
    if (v.row_empty[row] || !(v.row_fail[row] || v.row_clean[row])) continue;
    span[row] = row_span(v.s, v.req[row], v.local(row));
    if (span[row].empty()) continue;
    const std::int64_t last = span[row].hi - 1;
    if (v.row_fail[row]) {
      ++nf;
      f_last_min = std::min(f_last_min, last), f_last_max = std::max(f_last_max, last);
      f_lo_max = std::max(f_lo_max, span[row].lo);
    } else {
      ++np;
      p_last_min = std::min(p_last_min, last), p_last_max = std::max(p_last_max, last);
      p_lo_min = std::min(p_lo_min, span[row].lo);
    }
  }
  if (nf != static_cast<std::int64_t>(v.fail_rows.size()) || nf < 2 || np == 0) return false;
  bool decode_like = true;  // one query row per request: a row's last key is its request's kv_len - 1
  for (int r = 0; r < v.R; ++r) decode_like &= v.s.qo_len(r) <= 1;
  const bool partial_window = v.s.params.window_left >= 0 || v.s.params.mask_mode == MaskMode::custom;
  if (p_last_max < f_last_min) {
    const std::int64_t a = p_last_max + 1, b = f_last_min;
    std::string text =
        decode_like
            ? fmt::format("errors confined to {} requests with kv_len >= {} ({} requests: {}); the {} requests with "
                          "kv_len <= {} agree: a boundary B in [{}, {}] past which the kernel reads KV differently{}",
                          v.side(), b + 1, nf, v.rows_text(v.fail_rows), np, a, a, b, boundary_hint(v, a, b))
            : fmt::format("errors only on rows that see keys at positions >= B for some B in [{}, {}] ({} rows: {}); the "
                          "{} rows that see only keys below {} agree{}",
                          a, b, nf, v.rows_text(v.fail_rows), np, a, boundary_hint(v, a, b));
    const FindingRange range = decode_like ? FindingRange{"kv_len", b + 1, f_last_max + 1} : FindingRange{"boundary", a, b};
    out.push_back({kRankWhere, v.finding(decode_like ? "kv-length-class" : "kv-boundary", text, {range})});
    return true;
  }
  if (f_last_max < p_last_min) {
    const std::int64_t a = f_last_max + 1, b = p_last_min;
    std::string text =
        decode_like
            ? fmt::format("errors confined to {} requests with kv_len <= {} ({} requests: {}); the {} longer requests "
                          "agree (a short-sequence path, e.g. a single page or a single tile)",
                          v.side(), a, nf, v.rows_text(v.fail_rows), np)
            : fmt::format("errors only on rows whose last visible key is below {} ({} rows: {}); rows that see keys at "
                          "{} and beyond agree",
                          a, nf, v.rows_text(v.fail_rows), b);
    const FindingRange range = decode_like ? FindingRange{"kv_len", f_last_min + 1, a} : FindingRange{"boundary", a, b};
    out.push_back({kRankWhere, v.finding(decode_like ? "kv-length-class" : "kv-boundary", text, {range})});
    return true;
  }
  if (partial_window && f_lo_max < p_lo_min) {
    out.push_back({kRankWhere,
                   v.finding("kv-boundary",
                             fmt::format("errors only on rows that see keys before position {} ({} rows: {}); rows whose "
                                         "visible keys all lie at {} and beyond agree",
                                         p_lo_min, nf, v.rows_text(v.fail_rows), p_lo_min),
                             {{"key", 0, p_lo_min - 1}})});
    return true;
  }
  // A length class of paged requests: last page partial vs full.
  if (v.s.kv.paged) {
    const auto& pt = v.s.kv.pages;
    bool f_partial = true, f_full = true, p_partial = true, p_full = true;
    std::int64_t nfr = 0, npr = 0;
    for (int r = 0; r < v.R; ++r) {
      if (v.s.qo_len(r) == 0 || v.s.kv_len(r) == 0) continue;
      bool fails = false, clean = true;
      for (std::int64_t row = v.s.qo_indptr[r]; row < v.s.qo_indptr[r + 1]; ++row) {
        fails |= v.row_fail[row] != 0;
        clean &= v.row_clean[row] != 0;
      }
      const bool partial = pt.last_page_len[r] < pt.page_size;
      if (fails) ++nfr, f_partial &= partial, f_full &= !partial;
      else if (clean) ++npr, p_partial &= partial, p_full &= !partial;
    }
    if (nfr >= 2 && npr >= 1 && ((f_partial && p_full) || (f_full && p_partial))) {
      out.push_back({kRankWhere,
                     v.finding("kv-length-class",
                               fmt::format("errors confined to the {} requests whose last page is {} ({}); the {} "
                                           "requests whose last page is {} agree: the last page's length "
                                           "(last_page_len, page size {}) is handled wrong",
                                           nfr, f_partial ? "partial (last_page_len < page_size)" : "full",
                                           v.rows_text(v.fail_rows), npr, f_partial ? "full" : "partial",
                                           pt.page_size),
                               {})});
      return true;
    }
  }
  // One page: a single request's failing rows are exactly its rows that see one of its pages.
  if (v.s.kv.paged && v.fail_reqs.size() == 1) {
    const int r = v.fail_reqs[0];
    const std::int64_t ps = v.s.kv.pages.page_size, L = v.s.kv_len(r), first = v.s.qo_indptr[r];
    std::vector<std::int64_t> fr;
    for (std::int64_t row : v.fail_rows) fr.push_back(row);
    for (std::int64_t k = 0; k * ps < L; ++k) {
      std::vector<std::int64_t> sees;
      for (std::int64_t row = first; row < v.s.qo_indptr[r + 1]; ++row) {
        const Span sp = row_span(v.s, r, row - first);
        if (!sp.empty() && sp.lo < (k + 1) * ps && sp.hi > k * ps) sees.push_back(row);
      }
      if (sees == fr && static_cast<std::int64_t>(sees.size()) < v.s.qo_len(r)) {
        const std::int32_t phys = v.s.kv.pages.indices[v.s.kv.pages.indptr[r] + k];
        out.push_back({kRankWhere,
                       v.finding("kv-page",
                                 fmt::format("errors on exactly the rows of {} request {} that see its page {} "
                                             "(physical page {}, keys {}..{}): {} rows ({}); that page's contents or "
                                             "its address is suspect",
                                             v.side(), r, k, phys, k * ps, std::min(L, (k + 1) * ps) - 1, sees.size(),
                                             v.rows_text(sees)),
                                 {{"request", r, r}, {"page", phys, phys}, {"key", k * ps, std::min(L, (k + 1) * ps) - 1}})});
        return true;
      }
    }
  }
  return false;
}

}  // namespace

std::vector<RankedFinding> side_patterns(const DiagnosisInput& in, SideKind side, const CellErrors& cells,
                                         const std::vector<Variant>& variants, Case& work) {
  std::vector<RankedFinding> out;
  const View v(in, side, cells);
  if (v.fail_cells == 0) return out;
  if (single_element(v, out)) return out;
  empty_rows(v, out);
  mask_bounds(v, variants, out);
  const PageResult paged = pages(v, work, out);
  lse_shape(v, out);
  out_shape(v, out);
  const bool by_head = heads(v, out);
  rope_positions(v, out);
  row_tiles(v, out);
  kv_positions(v, out);
  if (!paged.explained && !by_head && v.R > 1 && v.fail_reqs.size() == 1) {
    const int r = v.fail_reqs[0];
    const bool whole = v.fail_cells == v.s.qo_len(r) * v.H;
    out.push_back({kRankOnly,
                   v.finding("request",
                             fmt::format("errors confined to {} request {} (rows {}..{}; {}): {} (row, head) pairs out "
                                         "of tolerance{}; the other {} requests agree{}",
                                         v.side(), r, v.s.qo_indptr[r], v.s.qo_indptr[r + 1] - 1,
                                         locate_element(v.c, side, TensorKind::lse, v.s.qo_indptr[r] * v.H).kv,
                                         v.fail_cells, whole ? " (the whole request: every row and head)" : "", v.R - 1,
                                         paged.tried ? "; no permutation of its pages (swaps, reversal, rotations, pool "
                                                       "order, another request's pages) explains it"
                                                     : ""),
                             {{"request", r, r}})});
  }
  if (out.empty()) {
    std::set<int> hs;
    for (std::int64_t row : v.fail_rows)
      for (int h = 0; h < v.H; ++h)
        if (v.e.fails(row * v.H + h)) hs.insert(h);
    out.push_back({kRankSpread,
                   v.finding("spread",
                             fmt::format("{}: {} (row, head) pairs out of tolerance ({:.3g}% of {}) across {} request(s) "
                                         "and {} head(s), no structure found",
                                         v.tensors_text(), v.fail_cells,
                                         100.0 * double(v.fail_cells) / double(std::max<std::int64_t>(1, v.ref.rows * v.H)),
                                         v.ref.rows * v.H, v.fail_reqs.size(), hs.size()),
                             {{"cells", v.fail_cells, v.fail_cells}})});
  }
  return out;
}

}  // namespace podcheck::validation

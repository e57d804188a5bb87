// The reference's self-consistency checks (selfcheck.hpp).
#include "app/selfcheck.hpp"
#include "app/timing.hpp"

#include "app/errors.hpp"
#include "app/report.hpp"
#include "reference/naive.hpp"
#include "reference/reference.hpp"

#include <boost/multiprecision/cpp_bin_float.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>

namespace podcheck::app {

using namespace validation;

namespace {


// Adds one sampled (row, head) comparison to the side's two reports (output part, LSE part).
void add_sample(const Case& c, SideKind sk, std::int64_t row, int h, const SideResult& fast, const double* naive_out,
                double naive_lse, TensorReport& out_rep, TensorReport& lse_rep) {
  const int D = fast.head_dim;
  const std::size_t at = static_cast<std::size_t>(row * fast.heads + h);
  const double* fo = &fast.out[at * D];
  const double fl = fast.lse[at];
  const double e_out = out_rel_diff(fo, naive_out, D);
  const double e_lse = lse_rel_diff(fl, naive_lse);  // the -inf of empty rows included
  const std::pair<TensorReport*, double> parts[] = {{&out_rep, e_out}, {&lse_rep, e_lse}};
  for (auto [rep, e] : parts) {
    ++rep->numel;
    const double used = e / kFastVsNaiveBound;
    if (!(e <= kFastVsNaiveBound)) ++rep->over_tol;
    if (std::isfinite(e)) rep->max_rel = std::max(rep->max_rel, e);
    if (!rep->worst || used > rep->tol_used || !std::isfinite(used)) {
      rep->tol_used = std::max(rep->tol_used, used);
      const std::int64_t flat = rep->kind == TensorKind::out ? static_cast<std::int64_t>(at) * D
                                                             : static_cast<std::int64_t>(at);
      rep->worst = locate_element(c, sk, rep->kind, flat);
      rep->worst_error = e;
      rep->worst_bound = kFastVsNaiveBound;
    }
  }
}

}  // namespace

CaseResult selfcheck_sampled(const Case& c, int sampled_rows) {
  const auto t0 = Clock::now();
  CaseResult r;
  r.id = c.id;
  r.kind = "selfcheck";
  r.profile = "intended";
  r.policy = "selfcheck";
  try {
    const PodResult fast = reference_fast(c);
    bool bad = false;
    for (SideKind sk : {SideKind::prefill, SideKind::decode}) {
      const SideResult* fs = fast.side(sk);
      if (!fs || fs->rows == 0) continue;
      TensorReport out_rep, lse_rep;
      out_rep.name = std::string("out_") + (sk == SideKind::prefill ? "p" : "d");
      lse_rep.name = std::string("lse_") + (sk == SideKind::prefill ? "p" : "d");
      out_rep.side = lse_rep.side = sk;
      lse_rep.kind = TensorKind::lse;
      out_rep.checked = lse_rep.checked = true;
      std::set<std::int64_t> rows;
      const std::int64_t n = fs->rows;
      if (sampled_rows >= 1) rows.insert(0);
      if (sampled_rows >= 2) rows.insert(n - 1);
      for (int k = 2; k < sampled_rows; ++k) rows.insert((n * (k - 1)) / (sampled_rows - 1));
      std::vector<int> heads = {0};
      if (fs->heads > 1) heads.push_back(fs->heads - 1);
      std::vector<double> nout(fs->head_dim);
      for (std::int64_t row : rows)
        for (int h : heads) {
          double nlse = 0;
          reference_naive_row<double>(c, sk, row, h, Semantics{}, nout.data(), nlse);
          add_sample(c, sk, row, h, *fs, nout.data(), nlse, out_rep, lse_rep);
        }
      bad |= out_rep.failed() || lse_rep.failed();
      r.tensors.push_back(out_rep);
      r.tensors.push_back(lse_rep);
    }
    r.status = r.tensors.empty() ? Status::skipped : (bad ? Status::incorrect : Status::passed);
    if (r.tensors.empty()) r.message = "case has no query rows";
    if (bad) r.message = "reference self-consistency: fast and naive references disagree";
  } catch (const InvalidCase& e) {
    r.status = Status::invalid_case;
    r.message = e.what();
  }
  r.verdict = plain_verdict(r.status);
  if (r.verdict == Verdict::fail) r.reproduce = "podcheck selfcheck --case " + shell_quote(c.id);
  r.seconds = seconds_since(t0);
  return r;
}

std::vector<CaseResult> selfcheck_tier(const SelfcheckTierOptions& o) {
  std::vector<std::string> ids;
  try {
    ids = list_tier(o.tier, o.shard);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (!o.case_filter.empty()) std::erase_if(ids, [&](const std::string& id) { return id != o.case_filter; });
  std::vector<CaseResult> out;
  int done = 0;
  for (const auto& id : ids) {
    CaseResult r;
    try {
      const Case c = make_case(id);
      r = selfcheck_sampled(c, o.sampled_rows);
      if (o.on_case) o.on_case(r, c);
    } catch (const std::exception& e) {  // the generator refused its own id: a bug, reported, not skipped
      JudgeOptions jo;
      r = unjudged_result(id, jo, Status::invalid_case, e.what());
      r.kind = "selfcheck";
    }
    out.push_back(std::move(r));
    if (o.progress) o.progress(out.back(), ++done, static_cast<int>(ids.size()));
  }
  return out;
}

bool DeepCheck::passed() const {
  return fast_vs_naive <= kFastVsNaiveBound && naive_vs_mp <= kDoubleVsMultiprecisionBound;
}

namespace {

using Mp = boost::multiprecision::cpp_bin_float_50;

// (row, head) pairs sampled for the multiprecision check: first, last and two spread rows, varied heads.
std::vector<std::pair<std::int64_t, int>> sample_rows(std::int64_t rows, int heads, std::uint64_t salt) {
  std::vector<std::pair<std::int64_t, int>> out;
  if (rows == 0) return out;
  const std::int64_t picks[] = {0, rows - 1, rows / 2, static_cast<std::int64_t>((salt * 2654435761u) % rows)};
  for (int k = 0; k < 4; ++k) out.push_back({picks[k], static_cast<int>((salt + 3 * k) % heads)});
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

DeepCheck selfcheck_deep(const Case& c) {
  DeepCheck r;
  r.id = c.id;
  for (SideKind k : {SideKind::prefill, SideKind::decode}) {
    if (!c.side(k)) continue;
    const SideResult naive = reference_naive_side(c, k);
    r.fast_vs_naive = std::max(r.fast_vs_naive, max_rel_diff(reference_fast_side(c, k), naive));
    const auto samples = sample_rows(naive.rows, naive.heads, c.seed + (k == SideKind::decode ? 7 : 0));
    std::vector<double> diffs(samples.size(), 0.0);
#pragma omp parallel for schedule(dynamic, 1)
    for (std::size_t n = 0; n < samples.size(); ++n) {
      const auto [row, h] = samples[n];
      std::vector<Mp> out(c.head_dim);
      Mp lse;
      reference_naive_row<Mp>(c, k, row, h, Semantics{}, out.data(), lse);
      std::vector<double> outd(c.head_dim);
      for (int d = 0; d < c.head_dim; ++d) outd[d] = out[d].convert_to<double>();
      const std::size_t at = static_cast<std::size_t>(row * naive.heads + h);
      diffs[n] = row_rel_diff(&naive.out[at * naive.head_dim], naive.lse[at], outd.data(), lse.convert_to<double>(),
                              c.head_dim);
    }
    for (double d : diffs) r.naive_vs_mp = std::max(r.naive_vs_mp, d);
    r.mp_rows += static_cast<int>(samples.size());
  }
  return r;
}

int run_selfcheck(const SelfcheckOptions& o) {
  std::vector<std::string> ids = o.cases;
  if (ids.empty()) {
    try {
      ids = list_tier(o.tier);
    } catch (const std::exception& e) {
      throw UsageError("selfcheck: tier '" + o.tier + "': " + e.what());
    }
    if (ids.empty()) throw UsageError("selfcheck: tier '" + o.tier + "' has no cases");
  }
  std::size_t width = 4;
  for (const auto& id : ids) width = std::max(width, id.size());
  const auto t0 = Clock::now();
  auto last_progress = t0;
  int passed = 0, failed = 0, mp_rows = 0;
  double worst_fast = 0.0, worst_mp = 0.0;
  std::vector<std::string> failures;
  for (std::size_t n = 0; n < ids.size(); ++n) {
    Case c;
    try {
      c = make_case(ids[n]);
    } catch (const std::exception& e) {
      throw UsageError("selfcheck: case '" + ids[n] + "': " + e.what());
    }
    if (n == 0) fmt::print("{:<{}}  {:>12}  {:>12}  {}\n", "case", width, "fast/naive", "naive/mp50", "verdict");
    DeepCheck r;
    try {
      r = selfcheck_deep(c);
    } catch (const InvalidCase& e) {
      throw UsageError(std::string("selfcheck: ") + e.what());
    }
    const bool ok = r.passed();
    (ok ? passed : failed) += 1;
    if (!ok) failures.push_back(ids[n]);
    worst_fast = std::max(worst_fast, r.fast_vs_naive);
    worst_mp = std::max(worst_mp, r.naive_vs_mp);
    mp_rows += r.mp_rows;
    fmt::print("{:<{}}  {:>12.3e}  {:>12.3e}  {}\n", ids[n], width, r.fast_vs_naive, r.naive_vs_mp, ok ? "PASS" : "FAIL");
    std::fflush(stdout);
    const auto now = Clock::now();
    if (std::chrono::duration<double>(now - last_progress).count() > 2.0 || n + 1 == ids.size()) {
      last_progress = now;
      std::fprintf(stderr, "selfcheck: %zu/%zu cases, %d failed, %.1f s\n", n + 1, ids.size(), failed,
                   seconds_since(t0));
    }
  }
  fmt::print("\nselfcheck: {} cases, {} passed, {} failed; max rel diff fast/naive {:.3e} (bound {:.0e}), "
             "naive/mp50 {:.3e} over {} sampled rows (bound {:.0e})\n",
             ids.size(), passed, failed, worst_fast, kFastVsNaiveBound, worst_mp, mp_rows,
             kDoubleVsMultiprecisionBound);
  for (const auto& id : failures) fmt::print("FAILED: podcheck selfcheck --case {}\n", shell_quote(id));
  return failed == 0 ? 0 : 1;
}

}  // namespace podcheck::app

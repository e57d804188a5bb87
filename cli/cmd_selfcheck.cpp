// podcheck selfcheck: checks the float64 reference against itself over a tier of small cases: the fast
// reference against the naive one (double) on every row, and the naive double reference against the same
// code in 50-digit arithmetic (Boost cpp_bin_float_50) on sampled rows. Exit 0 only if everything agrees.
#include "cli/commands.hpp"
#include "fixtures/sweep.hpp"
#include "reference/naive.hpp"
#include "reference/reference.hpp"

#include <boost/multiprecision/cpp_bin_float.hpp>
#include <fmt/core.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace podcheck::cli {
namespace {

using Mp = boost::multiprecision::cpp_bin_float_50;

struct CaseCheck {
  double fast_vs_naive = 0.0;
  double naive_vs_mp = 0.0;
  int mp_rows = 0;
  bool pass() const { return fast_vs_naive <= kFastVsNaiveBound && naive_vs_mp <= kDoubleVsMultiprecisionBound; }
};

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

CaseCheck check_case(const Case& c) {
  CaseCheck r;
  const Semantics sem;  // intended semantics; the LSE base is the case's
  for (SideKind k : {SideKind::prefill, SideKind::decode}) {
    const Side* s = c.side(k);
    if (!s) continue;
    const SideResult naive = reference_naive_side(c, k, sem);
    r.fast_vs_naive = std::max(r.fast_vs_naive, max_rel_diff(reference_fast_side(c, k, sem), naive));
    const auto samples = sample_rows(naive.rows, naive.heads, c.seed + (k == SideKind::decode ? 7 : 0));
    std::vector<double> diffs(samples.size(), 0.0);
#pragma omp parallel for schedule(dynamic, 1)
    for (std::size_t n = 0; n < samples.size(); ++n) {
      const auto [row, h] = samples[n];
      std::vector<Mp> out(c.head_dim);
      Mp lse;
      reference_naive_row<Mp>(c, k, row, h, sem, out.data(), lse);
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

struct Opts {
  std::string tier = "selfcheck";
  std::vector<std::string> cases;
  int jobs = 0;
};

int run_selfcheck(const Opts& o) {
  if (o.jobs < 0) throw UsageError("-j must be >= 1");
  if (o.jobs > 0) omp_set_num_threads(o.jobs);
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
  const auto t0 = std::chrono::steady_clock::now();
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
    CaseCheck r;
    try {
      r = check_case(c);
    } catch (const InvalidCase& e) {
      throw UsageError(std::string("selfcheck: ") + e.what());
    }
    const bool ok = r.pass();
    (ok ? passed : failed) += 1;
    if (!ok) failures.push_back(ids[n]);
    worst_fast = std::max(worst_fast, r.fast_vs_naive);
    worst_mp = std::max(worst_mp, r.naive_vs_mp);
    mp_rows += r.mp_rows;
    fmt::print("{:<{}}  {:>12.3e}  {:>12.3e}  {}\n", ids[n], width, r.fast_vs_naive, r.naive_vs_mp, ok ? "PASS" : "FAIL");
    std::fflush(stdout);
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_progress).count() > 2.0 || n + 1 == ids.size()) {
      last_progress = now;
      std::fprintf(stderr, "selfcheck: %zu/%zu cases, %d failed, %.1f s\n", n + 1, ids.size(), failed,
                   std::chrono::duration<double>(now - t0).count());
    }
  }
  fmt::print("\nselfcheck: {} cases, {} passed, {} failed; max rel diff fast/naive {:.3e} (bound {:.0e}), "
             "naive/mp50 {:.3e} over {} sampled rows (bound {:.0e})\n",
             ids.size(), passed, failed, worst_fast, kFastVsNaiveBound, worst_mp, mp_rows,
             kDoubleVsMultiprecisionBound);
  for (const auto& id : failures) fmt::print("FAILED: podcheck selfcheck --case '{}'\n", id);
  return failed == 0 ? 0 : 1;
}

}  // namespace

void add_selfcheck(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("selfcheck",
                                 "Check the float64 reference against itself (fast vs naive, double vs 50 digits)");
  auto o = std::make_shared<Opts>();
  cmd->add_option("--tier", o->tier, "Tier of cases to check")->capture_default_str();
  cmd->add_option("--case", o->cases, "Check only this case id (repeatable); overrides --tier");
  cmd->add_option("-j,--jobs", o->jobs, "OpenMP threads (default: all)");
  cmd->callback([o, &result] { result.exit_code = run_selfcheck(*o); });
}

}  // namespace podcheck::cli

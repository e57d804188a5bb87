// podcheck bench reference: times the fast float64 reference on POD-shaped problems against a roofline measured in
// the same run on the same threads, right around each case (the better of two runs of each, since the machine
// may be shared): useful throughput (4*D FLOPs per visible (row, head, key)) against OpenBLAS dgemm, and the
// bytes the case must move (reference::min_bytes: visible KV once in its storage dtype, Q, float64 O and LSE)
// against the machine's read bandwidth. The case's bound is max(flops / dgemm, bytes / bandwidth); the ratio
// printed last is that bound over the measured time.
#include "app/bench_reference.hpp"
#include "app/timing.hpp"

#include "app/errors.hpp"
#include "app/selfcheck.hpp"
#include "fixtures/sweep.hpp"
#include "app/report_target.hpp"
#include "reference/reference.hpp"

#include <cblas.h>
#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace podcheck::app {
namespace {



// OpenBLAS dgemm GFLOP/s for an n^3 product on `threads` threads (best of 3).
double dgemm_gflops(int n, int threads) {
  std::vector<double> a(static_cast<std::size_t>(n) * n), b(a.size()), c(a.size());
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& x : a) x = u(rng);
  for (auto& x : b) x = u(rng);
  const int saved = openblas_get_num_threads();
  openblas_set_num_threads(threads);
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = Clock::now();
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
    best = std::min(best, seconds_since(t0));
  }
  openblas_set_num_threads(saved);
  return 2.0 * n * n * static_cast<double>(n) / best / 1e9;
}

// Read bandwidth in GB/s of `threads` OpenMP threads summing a 512 MiB buffer (16x the 32 MiB LLC here), each
// its own static half, best of 3. 64-bit integer adds keep the loop load-bound rather than add-latency-bound.
// The buffer is allocated and first touched in parallel once, then kept.
double read_bandwidth_gbs(int threads) {
  constexpr std::size_t kWords = std::size_t{64} << 20;  // 512 MiB of uint64
  static std::unique_ptr<std::uint64_t[]> buf;
  if (!buf) {
    buf.reset(new std::uint64_t[kWords]);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::size_t i = 0; i < kWords; ++i) buf[i] = i * 0x9E3779B97F4A7C15ull;
  }
  const std::uint64_t* p = buf.get();
  double best = 1e30;
  std::uint64_t sink = 0;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = Clock::now();
    std::uint64_t sum = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : sum) num_threads(threads)
    for (std::size_t i = 0; i < kWords; ++i) sum += p[i];
    best = std::min(best, seconds_since(t0));
    sink += sum;
  }
  if (sink == 42) std::fprintf(stderr, " ");  // keeps the sums alive
  return static_cast<double>(kWords * 8) / best / 1e9;
}

struct BenchRow {
  std::string name;
  double seconds, useful_gflops, dgemm_gflops, ratio;
  double bytes, gbs, bandwidth_gbs, ratio_bw;
  std::string bound;     // "dgemm" or "bandwidth": which side of the roofline binds
  double ratio_roofline;  // max(flops / dgemm, bytes / bandwidth) / seconds
};

}  // namespace

void run_bench_reference(const BenchReferenceOptions& o) {
  const std::string& json_path = o.json;
  const bool quick = o.quick, force = o.force;
  const std::string& only = o.only;
  if (!json_path.empty()) check_report_target(json_path, force);
  const int threads = omp_get_max_threads();
  const int dgemm_n = quick ? 1024 : 2048;
  std::fprintf(stderr,
               "bench reference: %d OpenMP threads; dgemm %d^3 and a 512 MiB read are measured before and after each "
               "case\n",
               threads, dgemm_n);

  // Canonical sweep ids (docs/SWEEPS.md), bf16, D 128: the shapes of DESIGN §9. A prefill is timed as the
  // prefill side of a single POD (dense KV) whose decode side is one token.
  struct Spec {
    std::string name;
    SideKind side;
  };
  std::vector<Spec> specs;
  specs.push_back({"pod_bf16_h32kv8d128_ps16_nhd(qo_p=2048,kv_p=2048,causal,bs_d=1,kv_d=1,seed=0)", SideKind::prefill});
  if (!quick)
    specs.push_back({"pod_bf16_h8kv8d128_ps16_nhd(qo_p=12288,kv_p=12288,causal,bs_d=1,kv_d=1,seed=0)", SideKind::prefill});
  specs.push_back({quick ? "decode_bf16_h32kv8d128_ps16_nhd_stacked(bs_d=32,kv_d=4096,seed=0)"
                         : "decode_bf16_h32kv8d128_ps16_nhd_stacked(bs_d=128,kv_d=4096,seed=0)",
                   SideKind::decode});
  // The problem the numpy float64 comparison uses (reference/tools/numpy_attention.py).
  specs.push_back({"pod_bf16_h8kv8d128_ps16_nhd(qo_p=2048,kv_p=2048,causal,bs_d=1,kv_d=1,seed=0)", SideKind::prefill});
  if (!only.empty()) {
    std::erase_if(specs, [&](const Spec& s) { return s.name.find(only) == std::string::npos; });
    if (specs.empty()) throw UsageError("no bench case id contains '" + only + "'");
  }
  std::vector<BenchRow> rows;
  for (const Spec& s : specs) {
    std::fprintf(stderr, "  %s: building inputs...\n", s.name.c_str());
    Case c;
    try {
      c = make_case(s.name);
    } catch (const std::exception& e) {
      throw UsageError("bench reference: case '" + s.name + "': " + e.what());
    }
    // Validated before it is timed: the fast reference agrees with the naive one on sampled rows of this case.
    const CaseResult check = selfcheck_sampled(c, 3);
    if (check.status != validation::Status::passed)
      throw InputError("bench reference: the fast reference disagrees with the naive one on " + s.name + ": " +
                       check.message);
    std::fprintf(stderr, "  %s: fast == naive on sampled rows (worst %.1e of the bound); timing\n", s.name.c_str(),
                 check.headline() ? check.headline()->tol_used : 0.0);
    const double flops = useful_flops(c, s.side);
    const double bytes = min_bytes(c, s.side);
    reference_fast_side(c, s.side);  // warm-up (page faults, decode tables)
    // The machine may be shared: the dgemm and bandwidth figures are the better of two runs taken right around
    // the case.
    double dgemm = dgemm_gflops(dgemm_n, threads);
    double bw = read_bandwidth_gbs(threads);
    double best = 1e30;
    const int reps = quick ? 1 : 2;
    for (int rep = 0; rep < reps; ++rep) {
      auto t0 = Clock::now();
      SideResult r = reference_fast_side(c, s.side);
      best = std::min(best, seconds_since(t0));
    }
    dgemm = std::max(dgemm, dgemm_gflops(dgemm_n, threads));
    bw = std::max(bw, read_bandwidth_gbs(threads));
    BenchRow row;
    row.name = s.name;
    row.seconds = best;
    row.useful_gflops = flops / best / 1e9;
    row.dgemm_gflops = dgemm;
    row.ratio = row.useful_gflops / dgemm;
    row.bytes = bytes;
    row.gbs = bytes / best / 1e9;
    row.bandwidth_gbs = bw;
    row.ratio_bw = row.gbs / bw;
    const double t_flops = flops / (dgemm * 1e9), t_bytes = bytes / (bw * 1e9);
    row.bound = t_flops >= t_bytes ? "dgemm" : "bandwidth";
    row.ratio_roofline = std::max(t_flops, t_bytes) / best;
    rows.push_back(row);
    std::fprintf(stderr, "  %s: %.3f s, dgemm %.1f GFLOP/s, read bandwidth %.1f GB/s\n", s.name.c_str(), best, dgemm,
                 bw);
  }

  fmt::print("{:<72} {:>8} {:>9} {:>8} {:>7} {:>8} {:>8} {:>8} {:>7} {:>10} {:>6}\n", "case", "seconds", "GFLOP/s",
             "dgemm", "/dgemm", "MB", "GB/s", "bw GB/s", "/bw", "bound", "ratio");
  for (const BenchRow& r : rows)
    fmt::print("{:<72} {:>8.3f} {:>9.2f} {:>8.2f} {:>7.3f} {:>8.1f} {:>8.2f} {:>8.2f} {:>7.3f} {:>10} {:>6.3f}\n", r.name,
               r.seconds, r.useful_gflops, r.dgemm_gflops, r.ratio, r.bytes / 1e6, r.gbs, r.bandwidth_gbs, r.ratio_bw,
               r.bound, r.ratio_roofline);
  if (!json_path.empty()) {
    nlohmann::json j;
    j["threads"] = threads;
    j["cases"] = nlohmann::json::array();
    for (const BenchRow& r : rows)
      j["cases"].push_back({{"name", r.name},
                            {"seconds", r.seconds},
                            {"useful_gflops", r.useful_gflops},
                            {"dgemm_gflops", r.dgemm_gflops},
                            {"ratio_to_dgemm", r.ratio},
                            {"bytes", r.bytes},
                            {"gbytes_per_s", r.gbs},
                            {"read_bandwidth_gbs", r.bandwidth_gbs},
                            {"ratio_to_bandwidth", r.ratio_bw},
                            {"bound", r.bound},
                            {"ratio_to_roofline", r.ratio_roofline}});
    write_text_file(json_path, j.dump(2) + "\n", force);
  }
}


}  // namespace podcheck::app

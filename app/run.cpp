// podcheck run (run.hpp).
#include "app/run.hpp"

#include "app/errors.hpp"
#include "app/gpu.hpp"
#include "app/report_maps.hpp"
#include "app/report_target.hpp"
#include "fixtures/fixture_io.hpp"
#include "fixtures/sweep.hpp"
#include "traces/trace_io.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>

namespace podcheck::app {

namespace {

std::string utc_iso8601_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

void fill_scheduling(const pod_run_stats& s, std::map<std::string, std::string>& m) {
  m["grid_ctas"] = std::to_string(s.grid_ctas);
  m["threads_per_cta"] = std::to_string(s.threads_per_cta);
  m["smem_bytes"] = std::to_string(s.smem_bytes);
  m["tile_q_prefill"] = std::to_string(s.tile_q_prefill);
  m["tile_q_decode"] = std::to_string(s.tile_q_decode);
  m["tile_kv"] = std::to_string(s.tile_kv);
  m["items_prefill"] = std::to_string(s.items_prefill);
  m["items_decode"] = std::to_string(s.items_decode);
  m["max_splits_prefill"] = std::to_string(s.max_splits_prefill);
  m["max_splits_decode"] = std::to_string(s.max_splits_decode);
  m["kv_chunk_prefill"] = std::to_string(s.kv_chunk_prefill);
  m["kv_chunk_decode"] = std::to_string(s.kv_chunk_decode);
  m["merge_kernel"] = s.merge_launched ? "yes" : "no";
}

}  // namespace

Provenance run_provenance(const kernels::GpuModule& gpu, const kernels::KernelRunner& kernel, const std::string& source) {
  Provenance p;
  p.kernel_name = kernel.name();
  p.kernel_version = kernel.version();
  p.device = gpu.device_description();
  p.driver = gpu.driver_version();
  p.date = utc_iso8601_now();
  p.source = source;
  return p;
}

void run_into(Trace& t, kernels::KernelRunner& kernel, int kv_chunk_tokens, const Provenance& base) {
  kernels::RunOutcome r = kernel.run(t.kase, kv_chunk_tokens);
  t.provenance = base;
  if (r.run.status != RunStatus::not_supported) fill_scheduling(r.stats, t.provenance.scheduling);
  t.observed = std::move(r.outputs);
  t.run = std::move(r.run);
}

void check_run_options(const RunOptions& o) {
  const int sources = !o.tier.empty() + !o.fixtures.empty() + !o.cases.empty();
  if (sources != 1) throw UsageError("give exactly one of --tier, --fixtures, --case");
  if (!o.shard.empty() && o.tier.empty()) throw UsageError("--shard needs --tier");
  if (o.output.empty() && !o.check) throw UsageError("give -o TRACE.h5 (or --check to only judge the cases)");
  if ((!o.judge.reports.json.empty() || !o.judge.reports.junit.empty() || !o.judge.reports.html.empty()) && !o.check)
    throw UsageError("--json / --junit / --html report verdicts: give --check too");
  if (o.inputs_by_id && !o.fixtures.empty())
    throw UsageError("--inputs-by-id needs generated cases (--tier or --case); fixture inputs are stored as they are");
  if (!o.output.empty()) {  // an HDF5 trace: a regular file, never a stream
    try {
      (void)check_output(o.output, o.force, /*allow_stream=*/false);
    } catch (const OutputError& e) {
      throw UsageError(e.what());
    }
  }
  o.judge.reports.check();
  if (!o.judge.fib_trace.empty()) {
    if (!o.check) throw UsageError("--fib-trace reports verdicts: give --check too");
    check_report_target(o.judge.fib_trace, o.force);
  }
}

int run_kernel(const RunOptions& o) {
  check_run_options(o);
  const kernels::GpuModule& gpu = gpu_module("run");
  std::unique_ptr<kernels::KernelRunner> kernel;
  if (!o.kernel_lib.empty()) {
    try {
      kernel = gpu.load_kernel(o.kernel_lib);
    } catch (const std::exception& e) {
      throw UsageError(e.what());
    }
  } else {
    if (o.kernel != "podcheck-cuda")
      throw UsageError("unknown kernel '" + o.kernel + "' (built in: podcheck-cuda; a port: --kernel-lib PATH.so)");
    kernel = gpu.builtin_kernel();
  }

  // Case list (ids) or fixtures (cases + maybe references).
  std::vector<std::string> ids;
  std::vector<Fixture> fixtures;
  std::string source_desc;
  try {
    if (!o.tier.empty()) {
      ids = list_tier(o.tier, o.shard.empty() ? Shard{} : parse_shard(o.shard));
      source_desc = "tier " + o.tier + (o.shard.empty() ? "" : " shard " + o.shard);
    } else if (!o.cases.empty()) {
      ids = o.cases;
      source_desc = "case list";
    } else {
      fixtures = read_fixtures(o.fixtures);
      source_desc = "fixtures " + o.fixtures;
    }
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const std::size_t n_all = fixtures.empty() ? ids.size() : fixtures.size();
  const std::size_t n = o.limit > 0 ? std::min<std::size_t>(n_all, o.limit) : n_all;
  if (n < n_all) source_desc += ", first " + std::to_string(n);

  const Provenance base = run_provenance(
      gpu, *kernel, "podcheck run --kernel " + (o.kernel_lib.empty() ? o.kernel : o.kernel_lib) + " (" + source_desc + ")");
  std::printf("podcheck run: %s on %s, driver %s: %zu cases (%s)\n", base.kernel_version.c_str(), base.device.c_str(),
              base.driver.c_str(), n, source_desc.c_str());

  // Traces are written case by case (one case in memory); the file appears only when the run completes.
  std::unique_ptr<TraceWriter> writer;
  if (!o.output.empty()) {
    TraceWriteOptions wo;
    wo.force = o.force;
    wo.inputs_by_id = o.inputs_by_id;
    writer = std::make_unique<TraceWriter>(o.output, wo);
  }
  long ok = 0, unsupported = 0, failed = 0;
  const auto t0 = std::chrono::steady_clock::now();
  double last_progress = 0;
  std::vector<CaseResult> verdicts;
  ReportExtras extras;  // case attributes and heat maps for --json / --html, made while the outputs are here
  TraceReports trace_reports(o.judge);  // --fib-trace
  validation::JudgeOptions jo;  // the verdict `podcheck replay` gives on the trace this run records
  jo.policy = o.judge.replay.policy;
  jo.required = o.judge.replay.required;
  for (std::size_t i = 0; i < n; ++i) {
    Trace t;
    if (fixtures.empty()) {
      try {
        t.kase = make_case(ids[i]);
      } catch (const std::exception& e) {
        throw UsageError("case '" + ids[i] + "': " + e.what());
      }
    } else {
      t.kase = std::move(fixtures[i].kase);
    }
    try {
      validate_case(t.kase);
    } catch (const InvalidCase& e) {
      throw UsageError(std::string("case '") + t.kase.id + "' is invalid: " + e.what());
    }
    run_into(t, *kernel, o.kv_chunk, base);
    if (t.run.status == RunStatus::not_supported) {
      ++unsupported;
      std::printf("[NS]   %s: %s\n", t.kase.id.c_str(), t.run.message.c_str());
    } else if (t.run.status == RunStatus::ran) {
      ++ok;
    } else {
      ++failed;
      if (!o.check)
        std::printf("[FAIL] %s: %s: %s\n", t.kase.id.c_str(), std::string(run_status_name(t.run.status)).c_str(),
                    t.run.message.c_str());
    }
    if (o.check) {
      CaseResult cr = validation::judge(t.kase, t.observed, t.run, jo);
      cr.source = base.source;
      if (cr.verdict == Verdict::fail) print_case(stdout, cr);
      if (o.judge.reports.wants_extras()) extras.add(cr, t.kase, t.observed);
      trace_reports.add(t, cr);
      verdicts.push_back(std::move(cr));
    }
    if (writer) writer->add(t);
    // progress every 50 cases or 30 s: a run stopped by a time box still shows how far it got
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if ((i + 1) % 50 == 0 || s - last_progress >= 30.0) {
      last_progress = s;
      const Summary so_far = summarize(verdicts, s);
      std::printf("  ... %zu / %zu cases (%.0f s): %ld ran, %ld not-supported, %ld failed to run", i + 1, n, s, ok,
                  unsupported, failed);
      if (o.check) std::printf("; checked %d passed, %d not passed", so_far.passed, so_far.failed);
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  if (writer) writer->commit();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("podcheck run: %zu cases in %.1f s: %ld ran, %ld not-supported, %ld failed to run\n", n, secs, ok,
              unsupported, failed);
  if (!o.output.empty())
    std::printf("trace written to %s (judge with: podcheck replay %s)\n", o.output.c_str(), o.output.c_str());
  if (!o.check) return failed > 0 ? 1 : 0;
  const Summary s = summarize(verdicts, secs);
  std::printf("%s\n", summary_line("run --check", s).c_str());
  o.judge.reports.write(verdicts, s, &extras, "podcheck run --check");
  trace_reports.finish(stdout);
  return s.exit_code();
}

}  // namespace podcheck::app

// podcheck run: run cases through a GPU kernel (podcheck's own "podcheck-cuda", or a port loaded from a
// shared library that implements kernels/include/podcheck_kernel_abi.h) and record a trace file.
// Per case: build inputs (sweep id or fixture), upload, poison outputs (NaN + guard bands), run, check the
// guards, download, and keep the observed outputs with provenance. Cases the kernel does not support are
// recorded without outputs and with provenance scheduling["not_supported"] = reason.
// --check also judges each case on the spot as `podcheck replay TRACE.h5` would (calibrated policy); with
// --check and no -o nothing is written or kept (whole tiers on a GPU machine without traces piling up).
#include "cli/commands.hpp"

#include "validation/cli_support.hpp"
#include "validation/judge.hpp"
#include "validation/report.hpp"

#include "fixtures/fixture_io.hpp"
#include "fixtures/sweep.hpp"
#include "reference/reference.hpp"
#include "traces/trace_io.hpp"

#if PODCHECK_WITH_KERNELS
#include "kernels/host/kernel_runner.hpp"
#include "kernels/pod/pod_launch.hpp"
#endif

#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace podcheck::cli {

namespace {

struct RunOpts {
  std::string kernel = "podcheck-cuda", kernel_lib, tier, shard, fixtures, output;
  validation::ReportFiles reports;  // --json / --junit (with --check)
  std::vector<std::string> cases;
  bool force = false, check = false, inputs_by_id = false;
  long limit = 0;
  int kv_chunk = 0;
};

// Option combinations, checked before anything else (also where no GPU is present). Throws UsageError.
void check_usage(const RunOpts& o) {
  const int sources = !o.tier.empty() + !o.fixtures.empty() + !o.cases.empty();
  if (sources != 1) throw UsageError("give exactly one of --tier, --fixtures, --case");
  if (!o.shard.empty() && o.tier.empty()) throw UsageError("--shard needs --tier");
  if (o.output.empty() && !o.check) throw UsageError("give -o TRACE.h5 (or --check to only judge the cases)");
  if (!o.output.empty() && std::filesystem::exists(o.output) && !o.force)
    throw UsageError("output '" + o.output + "' exists (use --force to overwrite)");
  if ((!o.reports.json.empty() || !o.reports.junit.empty()) && !o.check)
    throw UsageError("--json / --junit report verdicts: give --check too");
  try {
    o.reports.check();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (o.inputs_by_id && !o.fixtures.empty())
    throw UsageError("--inputs-by-id needs generated cases (--tier or --case); fixture inputs are stored as they are");
}

#if PODCHECK_WITH_KERNELS
std::string utc_now() {
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

void run_command(const RunOpts& o, CommandResult& result) {
  namespace k = podcheck::kernels;
  const bool keep_traces = !o.output.empty();
  const bool want_reports = !o.reports.json.empty() || !o.reports.junit.empty();

  k::KernelHandle kernel = [&] {
    if (!o.kernel_lib.empty()) {
      try {
        return k::KernelHandle::load(o.kernel_lib);
      } catch (const std::exception& e) {
        throw UsageError(e.what());
      }
    }
    if (o.kernel != k::kKernelName)
      throw UsageError("unknown kernel '" + o.kernel + "' (built in: podcheck-cuda; a port: --kernel-lib PATH.so)");
    return k::KernelHandle::builtin();
  }();
  const bool builtin = o.kernel_lib.empty();

  // Case list (ids) or fixtures (cases + maybe references).
  std::vector<std::string> ids;
  std::vector<Fixture> fixtures;
  std::string source_desc;
  try {
    if (!o.tier.empty()) {
      const Shard sh = o.shard.empty() ? Shard{} : parse_shard(o.shard);
      ids = list_tier(o.tier, sh);
      source_desc = "tier " + o.tier + (o.shard.empty() ? "" : " shard " + o.shard);
    } else if (!o.cases.empty()) {
      ids = o.cases;
      source_desc = "case list";
    } else {
      fixtures = read_fixtures(o.fixtures);
      source_desc = "fixtures " + o.fixtures;
    }
  } catch (const FormatError& e) {
    throw UsageError(e.what());
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const std::size_t n_all = fixtures.empty() ? ids.size() : fixtures.size();
  const std::size_t n = o.limit > 0 ? std::min<std::size_t>(n_all, o.limit) : n_all;
  if (n < n_all) source_desc += ", first " + std::to_string(n);

  Provenance base;
  base.kernel_name = kernel.name();
  base.kernel_version = builtin ? k::build_version() : kernel.version();
  base.device = k::device_description();
  base.driver = k::driver_version();
  base.date = utc_now();
  base.source = "podcheck run --kernel " + (builtin ? o.kernel : o.kernel_lib) + " (" + source_desc + ")";
  std::printf("podcheck run: %s on %s, driver %s: %zu cases (%s)\n", base.kernel_version.c_str(), base.device.c_str(),
              base.driver.c_str(), n, source_desc.c_str());

  // Traces are written case by case (one case in memory); the file appears only when the run completes.
  std::unique_ptr<TraceWriter> writer;
  if (keep_traces) {
    TraceWriteOptions wo;
    wo.force = o.force;
    wo.inputs_by_id = o.inputs_by_id;
    try {
      writer = std::make_unique<TraceWriter>(o.output, wo);
    } catch (const FormatError& e) {
      throw UsageError(e.what());
    }
  }
  long ok = 0, unsupported = 0, failed = 0, passed = 0, incorrect = 0;
  const auto t0 = std::chrono::steady_clock::now();
  double last_progress = 0;
  std::vector<validation::CaseResult> verdicts;  // for --json / --junit
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
    t.provenance = base;
    k::RunOutcome r;
    try {
      r = k::run_case(kernel, t.kase, o.kv_chunk);
    } catch (const std::exception& e) {  // CUDA failure outside the kernel (allocation, copy)
      r.run = {RunStatus::launch_failed, e.what()};
    }
    fill_scheduling(r.stats, t.provenance.scheduling);
    validation::JudgeOptions jo;  // the verdict `podcheck replay` gives: calibrated policy, intended semantics
    jo.diagnose = true;           // where it breaks (request, head, token, page), failing cases only
    auto record = [&](validation::CaseResult cr) {  // a verdict for --json / --junit
      cr.source = base.source;
      if (want_reports) verdicts.push_back(std::move(cr));
    };
    t.observed = r.outputs;
    t.run = r.run;
    if (t.run.status == RunStatus::not_supported) {
      ++unsupported;
      t.provenance.scheduling.clear();
      std::printf("[NS]   %s: %s\n", t.kase.id.c_str(), t.run.message.c_str());
    } else if (t.run.status != RunStatus::ran) {
      ++failed;
      std::printf("[FAIL] %s: %s: %s\n", t.kase.id.c_str(), std::string(run_status_name(t.run.status)).c_str(),
                  t.run.message.c_str());
    } else {
      ++ok;
    }
    if (o.check) {
      // the verdict `podcheck replay` gives on the trace this records: the same function, the same inputs
      validation::CaseResult cr = validation::judge(t.kase, t.observed, t.run, jo);
      cr.source = base.source;  // print_case names it
      if (cr.status == validation::Status::passed) {
        ++passed;
      } else if (cr.status != validation::Status::not_supported) {
        ++incorrect;
        if (t.run.status == RunStatus::ran) validation::print_case(stdout, cr);
      }
      record(std::move(cr));
    }
    if (writer) writer->add(t);
    // progress every 50 cases or 30 s: a run stopped by a time box still shows how far it got
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if ((i + 1) % 50 == 0 || s - last_progress >= 30.0) {
      last_progress = s;
      std::printf("  ... %zu / %zu cases (%.0f s): %ld ran, %ld not-supported, %ld failed; checked %ld passed, %ld incorrect\n",
                  i + 1, n, s, ok, unsupported, failed, passed, incorrect);
      std::fflush(stdout);
    }
  }
  if (writer) writer->commit();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (want_reports) o.reports.write(verdicts, validation::summarize(verdicts, secs));
  std::printf("podcheck run: %zu cases in %.1f s: %ld ran, %ld not-supported, %ld failed to run", n, secs, ok,
              unsupported, failed);
  if (o.check)
    std::printf("; checked (calibrated policy): %ld passed, %ld not passed", passed, incorrect);
  std::printf("\n");
  if (keep_traces) std::printf("trace written to %s (judge with: podcheck replay %s)\n", o.output.c_str(), o.output.c_str());
  result.exit_code = (failed > 0 || incorrect > 0) ? 1 : 0;
}
#endif

}  // namespace

void add_run(CLI::App& app, CommandResult& result) {
  auto o = std::make_shared<RunOpts>();
  auto* cmd = app.add_subcommand("run", "Run cases through a GPU kernel and record a trace (GPU)");
  cmd->add_option("--kernel", o->kernel, "built-in kernel name (default podcheck-cuda)");
  cmd->add_option("--kernel-lib", o->kernel_lib, "shared library implementing the podcheck kernel ABI");
  cmd->add_option("--tier", o->tier, "run a tier (quick, default, full, ...) or a sweep file");
  cmd->add_option("--shard", o->shard, "k/n: only cases i with i % n == k (with --tier)");
  cmd->add_option("--fixtures", o->fixtures, "run the cases of a fixture file")->check(CLI::ExistingFile);
  cmd->add_option("--case", o->cases, "run these case ids");
  cmd->add_option("--limit", o->limit, "run only the first N cases of the list");
  cmd->add_option("--kv-chunk", o->kv_chunk, "force the split-KV chunk size (tokens, multiple of 32)");
  cmd->add_option("-o,--output", o->output, "trace file to write (optional with --check)");
  cmd->add_flag("--force", o->force, "overwrite the output file");
  cmd->add_flag("--inputs-by-id", o->inputs_by_id,
                "store each case's id and an inputs digest instead of its input tensors (small traces; readers "
                "rebuild the inputs with the generator and check the digest)");
  cmd->add_flag("--check", o->check, "also judge each case against the reference (calibrated policy, as replay does)");
  cmd->add_option("--json", o->reports.json, "with --check: write the verdicts as a JSON report (podcheck merge joins shards)");
  cmd->add_option("--junit", o->reports.junit, "with --check: write the verdicts as JUnit XML");
  cmd->callback([o, &result] {
    o->reports.force = o->force;
    check_usage(*o);
#if PODCHECK_WITH_KERNELS
    if (const std::string why = podcheck::kernels::gpu_unavailable_reason(); !why.empty())
      throw UsageError("'run' needs a GPU: " + why);
    run_command(*o, result);
#else
    (void)result;
    throw UsageError("'run' needs the CUDA kernels: this podcheck was built without nvcc (kernels/ not built)");
#endif
  });
}

}  // namespace podcheck::cli

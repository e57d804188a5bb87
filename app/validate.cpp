// replay, validate and merge as jobs that print (validate.hpp).
#include "app/validate.hpp"
#include "app/timing.hpp"

#include "app/errors.hpp"
#include "app/html_report.hpp"
#include "app/golden.hpp"
#include "app/report_maps.hpp"
#include "app/selfcheck.hpp"
#include "app/report_target.hpp"
#include "traces/fib_trace.hpp"
#include "traces/flashinfer_dump.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>

namespace podcheck::app {

namespace {


// Failures again, together, so that they are not lost in a long table; then the summary line.
int finish(const char* command, const std::vector<CaseResult>& results, const JudgeJobOptions& o,
           const ReportExtras& extras, Clock::time_point t0) {
  const Summary s = summarize(results, seconds_since(t0));
  if (s.failed > 0 && results.size() > 1) {
    std::printf("failures:\n");
    for (const auto& r : results)
      if (r.verdict == Verdict::fail) std::printf("  %s\n", console_line(r).c_str());
  }
  std::printf("%s\n", summary_line(command, s).c_str());
  o.reports.write(results, s, &extras, std::string("podcheck ") + command);
  return s.exit_code();
}

}  // namespace

TraceReports::TraceReports(const JudgeJobOptions& o) : options_(o) {
  if (!o.fib_trace.empty()) check_report_target(o.fib_trace, o.reports.force);
}

void TraceReports::add(const Trace& t, const CaseResult& r) {
  if (!options_.fib_trace.empty())
    if (auto line = fib_trace_line(r, t.kase, fib_environment(t.provenance, "0.1.0"))) fib_lines_.push_back(*line);
  if (dump_call_info(t)) {
    Trace head;
    head.kase.id = t.kase.id;
    head.provenance = t.provenance;
    dump_calls_.push_back(std::move(head));
    dump_results_.push_back(r);
  }
}

void TraceReports::finish(std::FILE* out) const {
  if (!dump_calls_.empty()) {
    std::fprintf(out, "capture summary (FlashInfer API-logging dump, calls in capture order):\n");
    for (const auto& line : format_dump_summary(summarize_dump_replay(dump_calls_, dump_results_)))
      std::fprintf(out, "  %s\n", line.c_str());
  }
  if (!options_.fib_trace.empty()) {
    std::string text;
    for (const auto& l : fib_lines_) text += l + "\n";
    write_text_file(options_.fib_trace, text, options_.reports.force);
  }
}

int run_replay(const std::vector<std::string>& files, const JudgeJobOptions& o) {
  o.reports.check();
  TraceReports trace_reports(o);
  const auto t0 = Clock::now();
  ReplayOptions ro = o.replay;
  const bool quiet = o.quiet;
  ro.progress = [quiet](const CaseResult& r, int, int) {
    if (!quiet || r.verdict == Verdict::fail) print_case(stdout, r);
  };
  ReportExtras extras;
  const bool maps = o.reports.wants_extras();
  ro.on_trace = [&](const CaseResult& r, const Trace& t) {
    if (maps) extras.add(r, t.kase, t.observed);
    trace_reports.add(t, r);
  };
  const auto results = replay_files(files, ro);
  trace_reports.finish(stdout);
  return finish("replay", results, o, extras, t0);
}

int run_validate(const ValidateOptions& o) {
  namespace fs = std::filesystem;
  o.job.reports.check();
  TraceReports trace_reports(o.job);
  if (o.no_golden && !o.traces.empty()) throw UsageError("give --traces DIR or --no-golden, not both");
  std::string dir = o.traces;
  if (!dir.empty() && !fs::is_directory(dir)) throw UsageError("--traces " + dir + ": not a folder");
  if (dir.empty() && !o.no_golden) {
    const GoldenLocation g = find_golden_traces();
    if (g.dir.empty())
      throw UsageError("validate: no golden traces found (looked in " + g.tried +
                       "); pass --traces DIR, or --no-golden to check only the reference");
    dir = g.dir;
    std::printf("validate: golden traces from %s (%s)\n", dir.c_str(), g.where.c_str());
  }
  const auto t0 = Clock::now();
  auto progress = [&](const char* what) {
    return [&, what](const CaseResult& r, int done, int total) {
      if (!o.job.quiet || r.verdict == Verdict::fail) {
        std::printf("%s %4d/%-4d %5.0fs ", what, done, total, seconds_since(t0));
        print_case(stdout, r);
      }
    };
  };
  std::vector<CaseResult> results;
  ReportExtras extras;
  const bool extra = o.job.reports.wants_extras();
  if (o.tier != "none") {
    SelfcheckTierOptions so;
    so.tier = o.tier;
    so.shard = o.job.replay.shard;
    so.case_filter = o.job.replay.case_filter;
    so.progress = progress("self");
    if (extra) so.on_case = [&](const CaseResult& r, const Case& c) { extras.add_info(r, c); };
    results = selfcheck_tier(so);
  }
  if (!dir.empty()) {
    const auto files = trace_files_under(dir);
    if (files.empty()) throw UsageError("validate: no *.h5 traces under " + dir);
    ReplayOptions ro = o.job.replay;
    ro.progress = progress("trace");
    ro.on_trace = [&](const CaseResult& r, const Trace& t) {
      if (extra) extras.add(r, t.kase, t.observed);
      trace_reports.add(t, r);
    };
    auto replayed = replay_files(files, ro);
    trace_reports.finish(stdout);
    results.insert(results.end(), replayed.begin(), replayed.end());
  }
  return finish("validate", results, o.job, extras, t0);
}

int run_merge(const MergeOptions& o) {
  check_report_target(o.output, o.force);
  if (!o.junit.empty()) check_report_target(o.junit, o.force);
  if (!o.html.empty()) {
    check_report_target(o.html, o.force);
    if (o.html == o.output || o.html == o.junit) throw UsageError("--html names the same file as another output: '" + o.html + "'");
  }
  const auto merged = merge_reports(o.inputs);
  std::string page;
  if (!o.html.empty()) {  // made before anything is written: a malformed map in an input writes nothing
    HtmlOptions ho;
    ho.title = "podcheck merge";
    try {
      page = html_report(merged, ho);
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("merge: ") + e.what());
    }
  }
  write_text_file(o.output, merged.dump(2) + "\n", o.force);
  const Summary s = summary_from_json_cases(merged["cases"]);
  if (!o.junit.empty()) {
    std::vector<nlohmann::json> cases(merged["cases"].begin(), merged["cases"].end());
    write_text_file(o.junit, junit_xml(cases, s), o.force);
  }
  if (!o.html.empty()) write_text_file(o.html, page, o.force);
  Summary shown = s;
  shown.seconds = merged["summary"].value("seconds", 0.0);
  std::printf("%s\n", summary_line("merge", shown).c_str());
  return s.exit_code();
}

}  // namespace podcheck::app

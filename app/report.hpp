// Reports of a run: one console line per case, a summary line and the run's exit status, JSON (summary +
// cases), JUnit XML, and the merge of sharded JSON reports. Report files go through the atomic writer
// (checked before any work, temp file + rename, never over an existing file unless asked).
#pragma once

#include "validation/judge.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace podcheck::app {

using validation::CaseResult;
using validation::Status;
using validation::Verdict;

struct Summary {
  int passed = 0, incorrect = 0, launch_failed = 0, not_supported = 0, invalid_case = 0, skipped = 0;  // by status
  int ok = 0, xfail = 0, failed = 0, skip = 0;                                                         // by verdict
  int not_checked = 0;  // cases with outputs that were expected but not recorded (each named in its line)
  double seconds = 0;
  int total() const { return ok + xfail + failed + skip; }
  // The run's exit status (docs/CLI.md): 1 when a case failed (parity, launch, guards, expectation) or had
  // nothing checkable (skipped); else 2 when an input could not be read or is invalid (invalid-case); else 1
  // when nothing at all was judged; else 0. Not-supported cases are counted apart and do not fail a run.
  int exit_code() const;
};
Summary summarize(const std::vector<CaseResult>& results, double seconds);

// "[OK]    id [intended]  out_d max_abs 3.1e-04 (62% tol) @ (decode, req 3, ...)  (not checked: lse_p)"
std::string console_line(const CaseResult& r);
// Further lines for a failure: message, diagnosis, reproduce command, artifact.
std::vector<std::string> console_details(const CaseResult& r);
// Prints console_line and, for failures and xfails, console_details.
void print_case(std::FILE* out, const CaseResult& r);

// "validate: 553 passed, 2 xfail, 0 failed, 0 skipped, 0 not supported in 94 s"
std::string summary_line(std::string_view command, const Summary& s);

nlohmann::json case_json(const CaseResult& r);
nlohmann::json report_json(const std::vector<CaseResult>& results, const Summary& s);
std::string junit_xml(const std::vector<nlohmann::json>& cases, const Summary& s);

// Joins sharded JSON reports (their `cases` lists; summaries are recomputed). Throws InputError naming the
// file on unreadable input.
nlohmann::json merge_reports(const std::vector<std::string>& paths);
Summary summary_from_json_cases(const nlohmann::json& cases);

// 'text' quoted for a POSIX shell (reproduce commands).
std::string shell_quote(const std::string& text);
// Text for an XML or HTML attribute or element: & < > " ' as entities (&#39;, valid in both), control
// characters other than newline and tab as spaces (XML 1.0 has no way to write them).
std::string markup_escape(const std::string& text);

class ReportExtras;  // report_maps.hpp

// The report files a command was asked for (--json, --junit, --html). check() runs before any work: a target
// that exists (without force), is not a regular file, or sits in a missing or read-only folder is refused then.
struct ReportFiles {
  std::string json, junit, html;
  bool force = false;
  // The JSON and HTML reports carry case attributes and heat maps (report_maps.hpp): collect them while judging.
  bool wants_extras() const { return !json.empty() || !html.empty(); }
  void check() const;  // throws UsageError
  // `command` titles the HTML page ("podcheck validate").
  void write(const std::vector<CaseResult>& results, const Summary& s, const ReportExtras* extras = nullptr,
             const std::string& command = "podcheck") const;
};

}  // namespace podcheck::app

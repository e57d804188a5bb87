// Reports of a run: one console line per case, a summary line, JSON (summary + cases), JUnit XML, and the
// merge of sharded JSON results. Files are written to a temp file then renamed, never over an existing
// file unless asked.
#pragma once

#include "validation/judge.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace podcheck::validation {

struct Summary {
  int passed = 0, incorrect = 0, not_supported = 0, invalid_case = 0, skipped = 0;  // by status
  int ok = 0, xfail = 0, failed = 0, skip = 0;                                      // by verdict
  double seconds = 0;
  int total() const { return ok + xfail + failed + skip; }
  // 0 when every case passed or matched its expectation (and at least one was judged), else 1.
  int exit_code() const { return failed > 0 || ok + xfail == 0 ? 1 : 0; }
};
Summary summarize(const std::vector<CaseResult>& results, double seconds);

// "[OK]    id  out_d max_abs 3.1e-04 (62% tol) @ (decode, req 3, ...)" (one line, no newline).
std::string console_line(const CaseResult& r);
// Further lines for a failure: message, diagnosis, reproduce command, artifact.
std::vector<std::string> console_details(const CaseResult& r);
// Prints console_line and, for failures and xfails, console_details.
void print_case(std::FILE* out, const CaseResult& r);

// "validate: 553 passed, 2 xfail, 0 failed, 0 skipped in 94 s"
std::string summary_line(std::string_view command, const Summary& s);

nlohmann::json case_json(const CaseResult& r);
nlohmann::json report_json(const std::vector<CaseResult>& results, const Summary& s);
std::string junit_xml(const std::vector<nlohmann::json>& cases, const Summary& s);

// Joins sharded JSON reports (their `cases` lists; summaries are recomputed). Throws std::runtime_error
// naming the file on unreadable input.
nlohmann::json merge_reports(const std::vector<std::string>& paths);
Summary summary_from_json_cases(const nlohmann::json& cases);

// Writes text to path through a temp file + rename; refuses to replace an existing file unless force.
void write_text_file(const std::string& path, const std::string& text, bool force);

}  // namespace podcheck::validation

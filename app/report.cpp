// Console, JSON and JUnit reports; merge of sharded JSON reports; report files.
#include "app/report.hpp"

#include "app/errors.hpp"
#include "app/html_report.hpp"
#include "app/report_maps.hpp"
#include "app/report_target.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace podcheck::app {

using namespace validation;

Summary summarize(const std::vector<CaseResult>& results, double seconds) {
  Summary s;
  s.seconds = seconds;
  for (const auto& r : results) {
    if (!r.not_checked.empty()) ++s.not_checked;
    switch (r.status) {
      case Status::passed: ++s.passed; break;
      case Status::incorrect: ++s.incorrect; break;
      case Status::launch_failed: ++s.launch_failed; break;
      case Status::not_supported: ++s.not_supported; break;
      case Status::invalid_case: ++s.invalid_case; break;
      case Status::skipped: ++s.skipped; break;
    }
    switch (r.verdict) {
      case Verdict::ok: ++s.ok; break;
      case Verdict::xfail: ++s.xfail; break;
      case Verdict::fail: ++s.failed; break;
      case Verdict::skip: ++s.skip; break;
    }
  }
  return s;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'') out += "'\\''";
    else out += ch;
  }
  return out + "'";
}

int Summary::exit_code() const {
  if (failed - invalid_case > 0 || skipped > 0) return 1;
  if (invalid_case > 0) return 2;
  return ok + xfail == 0 ? 1 : 0;
}

namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
  return out;
}

std::string metric_text(const TensorReport& t) {
  if (!t.shape_ok) return t.note;
  if (!t.checked) return t.name + " " + t.note;
  std::string s;
  if (t.unwritten + t.nan > 0) s += fmt::format("{} NaN/unwritten of {} in {}; ", t.unwritten + t.nan, t.numel, t.name);
  if (t.inf + t.neginf_extra + t.neginf_missing > 0)
    s += fmt::format("{} inf/-inf mismatches in {}; ", t.inf + t.neginf_extra + t.neginf_missing, t.name);
  s += fmt::format("{} max_abs {:.2e} ({:.0f}% tol)", t.name, t.max_abs, 100.0 * t.tol_used);
  if (t.over_tol > 0) s += fmt::format(", {} over tol", t.over_tol);
  if (t.worst) s += " @ " + t.worst->text();
  return s;
}

}  // namespace

std::string console_line(const CaseResult& r) {
  std::string line = fmt::format("{:<8}{}", verdict_tag(r.verdict), r.id);
  if (r.kind == "trace") line += fmt::format(" [{}]", r.profile);
  if (const TensorReport* h = r.headline()) line += "  " + metric_text(*h);
  else if (!r.message.empty()) line += "  " + r.message;
  if (r.status != Status::passed && r.status != Status::incorrect) line += fmt::format("  ({})", status_name(r.status));
  if (!r.not_checked.empty()) line += "  (not checked: " + joined(r.not_checked) + ")";
  return line;
}

std::vector<std::string> console_details(const CaseResult& r) {
  std::vector<std::string> out;
  if (r.verdict != Verdict::fail && r.verdict != Verdict::xfail) return out;
  if (!r.message.empty() && r.status != Status::invalid_case) out.push_back("  " + r.message);
  else if (!r.message.empty()) out.push_back("  invalid case: " + r.message);
  for (const auto& t : r.tensors)
    if (t.failed() && &t != r.headline()) out.push_back("  also: " + metric_text(t));
  for (const auto& d : r.diagnosis) out.push_back("  diagnosis: " + d);
  if (!r.reproduce.empty()) out.push_back("  reproduce: " + r.reproduce);
  if (!r.artifact.empty()) out.push_back("  data: " + r.artifact);
  return out;
}

void print_case(std::FILE* out, const CaseResult& r) {
  std::fprintf(out, "%s\n", console_line(r).c_str());
  for (const auto& l : console_details(r)) std::fprintf(out, "%s\n", l.c_str());
  std::fflush(out);
}

std::string summary_line(std::string_view command, const Summary& s) {
  std::string line = fmt::format("{}: {} passed, {} xfail, {} failed, {} skipped, {} not supported in {:.0f} s", command,
                                 s.ok, s.xfail, s.failed, s.skipped, s.not_supported, s.seconds);
  std::vector<std::string> notes;
  if (s.launch_failed > 0) notes.push_back(fmt::format("{} failed to run", s.launch_failed));
  if (s.invalid_case > 0) notes.push_back(fmt::format("{} unreadable or invalid", s.invalid_case));
  if (s.not_checked > 0) notes.push_back(fmt::format("{} with outputs not checked", s.not_checked));
  if (s.skipped > 0) notes.push_back("skipped cases had nothing to check: not a success");
  if (s.total() == 0) notes.push_back("no cases: not a success");
  else if (s.ok + s.xfail == 0) notes.push_back("nothing was judged: not a success");
  if (!notes.empty()) line += " (" + joined(notes) + ")";
  return line;
}

namespace {

nlohmann::json num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json tensor_json(const TensorReport& t) {
  nlohmann::json j;
  j["checked"] = t.checked;
  if (!t.note.empty()) j["note"] = t.note;
  if (!t.checked) return j;
  j["passed"] = t.passed();
  j["numel"] = t.numel;
  j["max_abs"] = num(t.max_abs);
  j["max_rel"] = num(t.max_rel);
  j["rel_l2"] = num(t.rel_l2);
  j["cosine"] = num(t.cosine);
  j["max_ulp"] = num(t.max_ulp);
  j["over_tol"] = t.over_tol;
  j["over_fraction"] = t.over_fraction;
  j["unwritten"] = t.unwritten;
  j["nan"] = t.nan;
  j["inf"] = t.inf;
  j["neginf_missing"] = t.neginf_missing;
  j["neginf_extra"] = t.neginf_extra;
  j["tol_used"] = num(t.tol_used);
  return j;
}

nlohmann::json location_json(const TensorReport& t) {
  nlohmann::json j;
  j["tensor"] = t.name;
  const Location& l = *t.worst;
  j["side"] = std::string(side_name(l.side));
  j["request"] = l.request;
  j["row"] = l.row;
  j["global_row"] = l.global_row;
  j["head"] = l.head;
  if (l.dim >= 0) j["dim"] = l.dim;
  j["kv"] = l.kv;
  j["observed"] = num(t.worst_observed);
  j["reference"] = num(t.worst_reference);
  j["error"] = num(t.worst_error);
  j["bound"] = num(t.worst_bound);
  j["text"] = l.text();
  return j;
}

// The structured diagnosis (validation/finding.hpp): [{kind, side, tensor, ranges: [{dim, lo, hi}], text}].
nlohmann::json findings_json(const std::vector<Finding>& findings) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : findings) {
    nlohmann::json ranges = nlohmann::json::array();
    for (const auto& x : f.ranges) ranges.push_back({{"dim", x.dim}, {"lo", x.lo}, {"hi", x.hi}});
    out.push_back({{"kind", f.kind},
                   {"side", f.side ? nlohmann::json(std::string(side_name(*f.side))) : nlohmann::json(nullptr)},
                   {"tensor", f.tensor},
                   {"ranges", ranges},
                   {"text", f.text}});
  }
  return out;
}

}  // namespace

nlohmann::json case_json(const CaseResult& r) {
  nlohmann::json j;
  j["id"] = r.id;
  j["kind"] = r.kind;
  if (!r.source.empty()) j["source"] = r.source;
  j["profile"] = r.profile;
  j["policy"] = r.policy;
  j["status"] = std::string(status_name(r.status));
  j["verdict"] = std::string(verdict_name(r.verdict));
  j["run"] = r.run_status;
  j["not_checked"] = r.not_checked;
  if (!r.message.empty()) j["message"] = r.message;
  j["seconds"] = r.seconds;
  nlohmann::json m = nlohmann::json::object();
  for (const auto& t : r.tensors) m[t.name] = tensor_json(t);
  j["metrics"] = m;
  if (const TensorReport* h = r.headline(); h && h->worst) j["worst"] = location_json(*h);
  else j["worst"] = nullptr;
  j["diagnosis"] = r.diagnosis;
  if (!r.findings.empty()) j["findings"] = findings_json(r.findings);
  if (!r.profile_notes.empty()) j["profile_notes"] = r.profile_notes;
  if (r.expectation)
    j["expected"] = {{"profile", std::string(profile_name(r.expectation->profile))},
                     {"status", std::string(status_name(r.expectation->status))},
                     {"diagnosis", r.expectation->diagnosis}, {"reason", r.expectation->reason}};
  if (!r.reproduce.empty()) j["reproduce"] = r.reproduce;
  if (!r.artifact.empty()) j["artifact"] = r.artifact;
  j["line"] = console_line(r);
  return j;
}

namespace {

nlohmann::json summary_json(const Summary& s) {
  return {{"passed", s.passed},
          {"incorrect", s.incorrect},
          {"launch-failed", s.launch_failed},
          {"not-supported", s.not_supported},
          {"invalid-case", s.invalid_case},
          {"skipped", s.skipped},
          {"ok", s.ok},
          {"xfail", s.xfail},
          {"failed", s.failed},
          {"skip", s.skip},
          {"not_checked", s.not_checked},
          {"total", s.total()},
          {"seconds", s.seconds},
          {"exit_code", s.exit_code()},
          {"success", s.exit_code() == 0}};
}

}  // namespace

nlohmann::json report_json(const std::vector<CaseResult>& results, const Summary& s) {
  nlohmann::json j;
  j["format"] = "podcheck-report";
  j["version"] = 1;
  j["summary"] = summary_json(s);
  j["cases"] = nlohmann::json::array();
  for (const auto& r : results) j["cases"].push_back(case_json(r));
  return j;
}

Summary summary_from_json_cases(const nlohmann::json& cases) {
  Summary s;
  for (const auto& c : cases) {
    const std::string st = c.value("status", ""), v = c.value("verdict", "");
    if (c.contains("not_checked") && c["not_checked"].is_array() && !c["not_checked"].empty()) ++s.not_checked;
    if (st == "passed") ++s.passed;
    else if (st == "incorrect") ++s.incorrect;
    else if (st == "launch-failed") ++s.launch_failed;
    else if (st == "not-supported") ++s.not_supported;
    else if (st == "invalid-case") ++s.invalid_case;
    else ++s.skipped;
    if (v == "ok") ++s.ok;
    else if (v == "xfail") ++s.xfail;
    else if (v == "fail") ++s.failed;
    else ++s.skip;
    s.seconds += c.value("seconds", 0.0);
  }
  return s;
}

std::string markup_escape(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (char ch : in) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t') out += ' ';
        else out += ch;
    }
  }
  return out;
}

namespace {

// A case's structured findings as testcase properties, one `finding.N` each: kind=K;side=S;tensor=T;DIM=LO-HI...
std::string junit_findings(const nlohmann::json& c) {
  std::string props;
  int n = 0;
  for (const auto& f : c.value("findings", nlohmann::json::array())) {
    std::string val = "kind=" + f.value("kind", "");
    if (f.contains("side") && f["side"].is_string()) val += ";side=" + f["side"].get<std::string>();
    if (!f.value("tensor", "").empty()) val += ";tensor=" + f.value("tensor", "");
    for (const auto& r : f.value("ranges", nlohmann::json::array()))
      val += fmt::format(";{}={}-{}", r.value("dim", ""), r.value("lo", 0), r.value("hi", 0));
    props += fmt::format("        <property name=\"finding.{}\" value=\"{}\"/>\n", n++, markup_escape(val));
  }
  return props.empty() ? props : "      <properties>\n" + props + "      </properties>\n";
}

}  // namespace

std::string junit_xml(const std::vector<nlohmann::json>& cases, const Summary& s) {
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x << fmt::format("<testsuites tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n", s.total(), s.failed,
                   s.skip, s.seconds);
  x << fmt::format("  <testsuite name=\"podcheck\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
                   s.total(), s.failed, s.skip, s.seconds);
  for (const auto& c : cases) {
    const std::string cls = c.value("kind", "trace") == "trace"
                                ? fmt::format("{}.{}", c.value("source", std::string("trace")), c.value("profile", ""))
                                : "selfcheck";
    x << fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"", markup_escape(cls),
                     markup_escape(c.value("id", "")), c.value("seconds", 0.0));
    const std::string v = c.value("verdict", "");
    std::string body = c.value("line", "");
    for (const auto& d : c.value("diagnosis", nlohmann::json::array())) body += "\ndiagnosis: " + d.get<std::string>();
    if (c.contains("reproduce")) body += "\nreproduce: " + c["reproduce"].get<std::string>();
    const std::string props = v == "fail" || v == "xfail" ? junit_findings(c) : "";
    if (v == "fail") {
      x << ">\n" << props << "      <failure message=\"" << markup_escape(c.value("message", c.value("status", "failed"))) << "\">"
        << markup_escape(body) << "</failure>\n    </testcase>\n";
    } else if (v == "skip") {
      x << ">\n      <skipped message=\"" << markup_escape(c.value("message", c.value("status", "skipped")))
        << "\"/>\n    </testcase>\n";
    } else if (v == "xfail") {
      x << ">\n" << props << "      <system-out>" << markup_escape("expected failure: " + body) << "</system-out>\n    </testcase>\n";
    } else {
      x << "/>\n";
    }
  }
  x << "  </testsuite>\n</testsuites>\n";
  return x.str();
}

nlohmann::json merge_reports(const std::vector<std::string>& paths) {
  nlohmann::json cases = nlohmann::json::array();
  double seconds = 0;
  for (const auto& p : paths) {
    std::ifstream in(p);
    if (!in) throw InputError(fmt::format("{}: cannot open", p));
    nlohmann::json j;
    try {
      in >> j;
    } catch (const std::exception& e) {
      throw InputError(fmt::format("{}: not JSON ({})", p, e.what()));
    }
    if (!j.is_object() || !j.contains("cases") || !j["cases"].is_array())
      throw InputError(fmt::format("{}: not a podcheck report (expected an object with a 'cases' list)", p));
    for (auto& c : j["cases"]) cases.push_back(c);
    if (j.contains("summary") && j["summary"].contains("seconds") && j["summary"]["seconds"].is_number())
      seconds = std::max(seconds, j["summary"]["seconds"].get<double>());
  }
  Summary s = summary_from_json_cases(cases);
  s.seconds = seconds;
  nlohmann::json out;
  out["format"] = "podcheck-report";
  out["version"] = 1;
  out["summary"] = summary_json(s);
  out["summary"]["merged_from"] = paths;
  out["cases"] = cases;
  return out;
}

void ReportFiles::check() const {
  for (const auto& p : {json, junit, html})
    if (!p.empty()) check_report_target(p, force);
  if (!json.empty() && json == junit) throw UsageError("--json and --junit name the same file '" + json + "'");
  if (!html.empty() && (html == json || html == junit))
    throw UsageError("--html names the same file as --" + std::string(html == json ? "json" : "junit") + ": '" + html + "'");
}

void ReportFiles::write(const std::vector<CaseResult>& results, const Summary& s, const ReportExtras* extras,
                        const std::string& command) const {
  if (json.empty() && junit.empty() && html.empty()) return;
  nlohmann::json rep = report_json(results, s);
  if (extras) extras->attach(rep);
  if (!json.empty()) write_text_file(json, rep.dump(2) + "\n", force);
  if (!junit.empty()) {
    std::vector<nlohmann::json> cases(rep["cases"].begin(), rep["cases"].end());
    write_text_file(junit, junit_xml(cases, s), force);
  }
  if (!html.empty()) {
    HtmlOptions ho;
    ho.title = command;
    write_text_file(html, html_report(rep, ho), force);
  }
}

}  // namespace podcheck::app

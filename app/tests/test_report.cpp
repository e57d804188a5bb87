// Reports of a run: console lines, the summary and exit status, JSON, JUnit and the merge of shards, on
// verdicts of hand-built cases.
#include "testing/catch.hpp"

#include "app/report.hpp"
#include "app/report_target.hpp"
#include "validation/tests/helpers.hpp"

#include <filesystem>
#include <string>
#include <unistd.h>

using namespace podcheck;
using namespace podcheck::app;
using namespace podcheck::validation;
using podcheck::testhelp::make_pod;
using podcheck::testhelp::PodSpec;
using podcheck::testhelp::rounded_reference;

namespace {

CaseResult run(const Case& c, const KernelOutputs& o, const RunRecord& rec = {}) {
  return judge(c, o, rec, JudgeOptions{});
}

}  // namespace

TEST_CASE("reports: JSON summary and cases, JUnit failure/skip elements, merge of shards", "[app][report]") {
  const Case c = make_pod(PodSpec{});
  CaseResult good = run(c, rounded_reference(c));
  auto bad_obs = rounded_reference(c);
  bad_obs.out_d->set(3, bad_obs.out_d->get(3) + 1.0);
  CaseResult bad = run(c, bad_obs);
  bad.reproduce = "podcheck replay 'x.h5' --case 'test' --profile intended";
  CaseResult skipped = run(c, KernelOutputs{});
  const Summary s1 = summarize({good, bad}, 1.0), s2 = summarize({skipped}, 2.0);
  CHECK(s1.ok == 1);
  CHECK(s1.failed == 1);
  CHECK(s1.exit_code() == 1);
  const auto j1 = report_json({good, bad}, s1), j2 = report_json({skipped}, s2);
  CHECK(j1["summary"]["passed"] == 1);
  CHECK(j1["summary"]["incorrect"] == 1);
  REQUIRE(j1["cases"].size() == 2);
  CHECK(j1["cases"][1]["status"] == "incorrect");
  CHECK(j1["cases"][1]["worst"]["tensor"] == "out_d");
  CHECK(j1["cases"][1]["metrics"]["out_d"]["over_tol"] == 1);
  CHECK(j1["cases"][1]["diagnosis"].size() >= 1);

  std::vector<nlohmann::json> cases(j1["cases"].begin(), j1["cases"].end());
  const std::string xml = junit_xml(cases, s1);
  CHECK(xml.find("<failure") != std::string::npos);
  CHECK(xml.find("tests=\"2\"") != std::string::npos);

  const auto dir = std::filesystem::temp_directory_path() / ("podcheck_report_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string a = (dir / "a.json").string(), b = (dir / "b.json").string();
  write_text_file(a, j1.dump(), true);
  write_text_file(b, j2.dump(), true);
  CHECK_THROWS_WITH(write_text_file(a, "{}", false), HasSubstring("exists"));  // never replaced without force
  const auto merged = merge_reports({a, b});
  CHECK(merged["cases"].size() == 3);
  CHECK(merged["summary"]["ok"] == 1);
  CHECK(merged["summary"]["failed"] == 1);
  CHECK(merged["summary"]["skip"] == 1);
  std::vector<nlohmann::json> mc(merged["cases"].begin(), merged["cases"].end());
  CHECK(junit_xml(mc, summary_from_json_cases(merged["cases"])).find("<skipped") != std::string::npos);
  write_text_file((dir / "bad.json").string(), "not json", true);
  std::string err;
  try {
    merge_reports({(dir / "bad.json").string()});
  } catch (const std::exception& e) {
    err = e.what();
  }
  CHECK(err.find("bad.json") != std::string::npos);
  std::filesystem::remove_all(dir);
}


TEST_CASE("exit status: parity failures and skips give 1, unreadable inputs alone give 2, not-supported is counted apart", "[app][report]") {
  const Case c = make_pod(PodSpec{});
  const CaseResult good = run(c, rounded_reference(c));
  auto bad_obs = rounded_reference(c);
  bad_obs.out_d->set(3, bad_obs.out_d->get(3) + 1.0);
  const CaseResult bad = run(c, bad_obs);
  const CaseResult skipped = run(c, KernelOutputs{});
  const CaseResult ns = run(c, KernelOutputs{}, {RunStatus::not_supported, "no RoPE"});
  const CaseResult crashed = run(c, rounded_reference(c), {RunStatus::launch_failed, "illegal address"});
  const CaseResult invalid = unjudged_result("x.h5", JudgeOptions{}, Status::invalid_case, "x.h5: truncated");
  CHECK(summarize({good}, 0).exit_code() == 0);
  CHECK(summarize({good, ns}, 0).exit_code() == 0);
  CHECK(summarize({ns}, 0).exit_code() == 1);  // nothing judged
  CHECK(summarize({good, bad}, 0).exit_code() == 1);
  CHECK(summarize({good, crashed}, 0).exit_code() == 1);
  CHECK(summarize({good, skipped}, 0).exit_code() == 1);  // something that should be judged was skipped
  CHECK(summarize({skipped}, 0).exit_code() == 1);
  CHECK(summarize({good, invalid}, 0).exit_code() == 2);
  CHECK(summarize({good, invalid, bad}, 0).exit_code() == 1);
  const Summary s = summarize({good, ns, crashed, skipped, invalid}, 0);
  CHECK(s.launch_failed == 1);
  CHECK(s.not_supported == 1);
  CHECK(s.invalid_case == 1);
  CHECK(s.skipped == 1);
  const std::string line = summary_line("replay", s);
  CHECK(line.find("1 failed to run") != std::string::npos);
  CHECK(line.find("1 unreadable or invalid") != std::string::npos);
  CHECK(line.find("not a success") != std::string::npos);
  CHECK(console_line(crashed).rfind("[FAIL]", 0) == 0);
  CHECK(console_line(crashed).find("launch-failed") != std::string::npos);
}

TEST_CASE("a case with outputs not recorded says so in its console line, the summary and the JSON", "[app][report]") {
  const Case c = make_pod(PodSpec{});
  KernelOutputs one = rounded_reference(c);
  one.out_p.reset();
  one.lse_p.reset();
  one.lse_d.reset();
  const CaseResult r = run(c, one);
  CHECK(r.status == Status::passed);
  CHECK(console_line(r).find("(not checked: out_p, lse_p, lse_d)") != std::string::npos);
  const Summary s = summarize({r}, 0);
  CHECK(s.not_checked == 1);
  CHECK(summary_line("replay", s).find("1 with outputs not checked") != std::string::npos);
  const auto j = report_json({r}, s);
  CHECK(j["cases"][0]["not_checked"].size() == 3);
  CHECK(j["summary"]["not_checked"] == 1);
}

TEST_CASE("report targets are checked before any work: folders, non-regular files, existing files", "[app][report]") {
  const auto dir = std::filesystem::temp_directory_path() / ("podcheck_target_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "sub");
  CHECK_THROWS_WITH(check_report_target((dir / "missing" / "r.json").string(), false), HasSubstring("does not exist"));
  CHECK_THROWS_WITH(check_report_target((dir / "sub").string(), true), HasSubstring("it is a directory"));
  write_text_file((dir / "r.json").string(), "{}", false);
  CHECK_THROWS_WITH(check_report_target((dir / "r.json").string(), false), HasSubstring("exists"));
  CHECK_NOTHROW(check_report_target((dir / "r.json").string(), true));
  CHECK_FALSE(std::filesystem::exists(dir / "sub.tmp"));
  ReportFiles rf;
  rf.json = (dir / "sub").string();
  rf.force = true;
  CHECK_THROWS(rf.check());
  std::filesystem::remove_all(dir);
}

TEST_CASE("findings reach the JSON and JUnit reports beside the text", "[app][report][diagnosis]") {
  // one wrong head (5) of one decode request (3), as in validation/tests/test_diagnose.cpp
  CaseRecipe cs;
  cs.num_qo_heads = 8;
  cs.num_kv_heads = 2;
  cs.head_dim = 32;
  cs.seed = 3;
  SideRecipe d;
  d.qo_lens.assign(6, 1);
  d.kv_lens = {40, 70, 33, 90, 16, 51};
  d.spare_pages = 3;
  cs.decode = d;
  const Case c = build_case(cs);
  auto obs = rounded_reference(c);
  const std::int64_t row = 3;
  for (int dim = 0; dim < c.head_dim; ++dim) {
    const auto k = (row * c.num_qo_heads + 5) * c.head_dim + dim;
    obs.out_d->set(k, obs.out_d->get(k) * 1.3 + 0.05);
  }
  obs.lse_d->set(row * c.num_qo_heads + 5, obs.lse_d->get(row * c.num_qo_heads + 5) + 0.7);
  const CaseResult r = run(c, obs);
  REQUIRE(r.findings.size() == r.diagnosis.size());
  for (std::size_t i = 0; i < r.findings.size(); ++i) CHECK(r.findings[i].text == r.diagnosis[i]);
  const auto j = case_json(r);
  REQUIRE(j.contains("findings"));
  REQUIRE(j["findings"].size() == r.findings.size());
  const auto& f0 = j["findings"][0];
  CHECK(f0["kind"] == "heads");
  CHECK(f0["side"] == "decode");
  CHECK(f0["tensor"] == "out_d,lse_d");
  CHECK(f0["text"] == r.diagnosis[0]);
  bool head_range = false;
  for (const auto& x : f0["ranges"]) head_range |= x["dim"] == "head" && x["lo"] == 5 && x["hi"] == 5;
  CHECK(head_range);
  const std::string xml = junit_xml({j}, summarize({r}, 0));
  CHECK(xml.find("<property name=\"finding.0\" value=\"kind=heads;side=decode;tensor=out_d,lse_d;") != std::string::npos);
  CHECK(xml.find("head=5-5") != std::string::npos);
}


// The validation engine on hand-built cases: a good kernel (reference rounded once) passes under every
// policy; planted faults give the right verdict, counts and location; diagnosis names the flipped semantics.
#include "testing/catch.hpp"

#include "validation/diagnose.hpp"
#include "validation/judge.hpp"
#include "validation/tests/helpers.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <iterator>
#include <string>

using namespace podcheck;
using namespace podcheck::validation;
using podcheck::testhelp::tensor;
using podcheck::testhelp::make_pod;
using podcheck::testhelp::out_index;
using podcheck::testhelp::PodSpec;
using podcheck::testhelp::rounded_reference;
using podcheck::testhelp::verdict_text;

namespace {

bool mentions(const CaseResult& r, const std::string& phrase) {
  for (const auto& d : r.diagnosis)
    if (d.find(phrase) != std::string::npos) return true;
  return false;
}

std::string all_diagnosis(const CaseResult& r) {
  std::string s;
  for (const auto& d : r.diagnosis) s += d + "\n";
  return s;
}

CaseResult run(const Case& c, const KernelOutputs& o, Policy p = Policy::calibrated, Profile prof = Profile::intended) {
  JudgeOptions jo;
  jo.policy = p;
  jo.profile = prof;
  return judge(c, o, RunRecord{}, jo);
}

}  // namespace

TEST_CASE("a good kernel passes under every policy, every tensor checked", "[validation]") {
  for (DType dt : {DType::float16, DType::bfloat16}) {
    PodSpec s;
    s.dtype = dt;
    const Case c = make_pod(s);
    const auto obs = rounded_reference(c);
    for (Policy p : {Policy::calibrated, Policy::flashinfer, Policy::flashinfer_bench}) {
      const CaseResult r = run(c, obs, p);
      CAPTURE(dtype_name(dt), policy_name(p), verdict_text(r));
      CHECK(r.status == Status::passed);
      CHECK(r.verdict == Verdict::ok);
      REQUIRE(r.tensors.size() == 4);
      for (const auto& t : r.tensors) {
        CHECK(t.checked);
        CHECK(t.tol_used < 1.0);
        CHECK(t.cosine > 0.999);
      }
    }
  }
}

TEST_CASE("one element off: incorrect, counted once, located exactly", "[validation]") {
  const Case c = make_pod(PodSpec{});
  auto obs = rounded_reference(c);
  const std::int64_t row = 2;  // decode request 2 (one row per request)
  const int head = 5, dim = 17;
  const std::int64_t k = out_index(c, row, head, dim);
  obs.out_d->set(k, obs.out_d->get(k) + 0.25);
  const CaseResult r = run(c, obs);
  CAPTURE(verdict_text(r), all_diagnosis(r));
  CHECK(r.status == Status::incorrect);
  CHECK(r.verdict == Verdict::fail);
  const auto& t = tensor(r, "out_d");
  CHECK(t.over_tol == 1);
  REQUIRE(t.worst);
  CHECK(t.worst->side == SideKind::decode);
  CHECK(t.worst->request == 2);
  CHECK(t.worst->row == 0);
  CHECK(t.worst->head == head);
  CHECK(t.worst->dim == dim);
  CHECK(t.worst->kv.find("last page") != std::string::npos);
  CHECK(tensor(r, "out_p").passed());
  CHECK(mentions(r, "a single element"));
}

TEST_CASE("NaN where the reference is finite always fails; poison tells unwritten apart", "[validation]") {
  const Case c = make_pod(PodSpec{});
  for (Policy p : {Policy::calibrated, Policy::flashinfer, Policy::flashinfer_bench}) {
    auto obs = rounded_reference(c);
    obs.out_p->set_bits(out_index(c, 3, 1, 0), kPoisonF16);  // never written
    obs.out_p->set_bits(out_index(c, 4, 1, 0), 0x7E00u);     // a computed (canonical) NaN
    const CaseResult r = run(c, obs, p);
    CAPTURE(policy_name(p), verdict_text(r));
    CHECK(r.status == Status::incorrect);
    const auto& t = tensor(r, "out_p");
    CHECK(t.unwritten == 1);
    CHECK(t.nan == 1);
    REQUIRE(t.worst);
    CHECK(t.worst->row == 3);
    CHECK(t.worst->head == 1);
  }
}

TEST_CASE("empty rows: LSE -inf must agree in both directions", "[validation]") {
  PodSpec s;
  s.mask_p = MaskMode::custom;
  s.qo_p = 6;
  s.kv_p = 9;
  Case c = make_pod(s);
  // Custom mask: row 0 sees nothing, others see everything.
  auto& p = c.prefill->params;
  p.custom_mask.assign((6 * 9 + 7) / 8, 0);
  for (int i = 1; i < 6; ++i)
    for (int j = 0; j < 9; ++j) p.custom_mask[(i * 9 + j) / 8] |= static_cast<std::uint8_t>(1u << ((i * 9 + j) % 8));
  p.custom_mask_indptr = {0, static_cast<std::int64_t>(p.custom_mask.size())};
  const auto good = rounded_reference(c);
  REQUIRE(std::isinf(good.lse_p->get(0)));
  CHECK(run(c, good).status == Status::passed);

  auto finite = good;
  finite.lse_p->set(0, 0.0);  // reference -inf, observed finite
  const CaseResult r1 = run(c, finite);
  CHECK(r1.status == Status::incorrect);
  CHECK(tensor(r1, "lse_p").neginf_missing == 1);

  auto extra = good;
  extra.lse_p->set(c.num_qo_heads * 2 + 3, -INFINITY);  // reference finite, observed -inf
  const CaseResult r2 = run(c, extra);
  CHECK(r2.status == Status::incorrect);
  CHECK(tensor(r2, "lse_p").neginf_extra == 1);
  REQUIRE(tensor(r2, "lse_p").worst);
  CHECK(tensor(r2, "lse_p").worst->row == 2);
  CHECK(tensor(r2, "lse_p").worst->head == 3);
}

TEST_CASE("missing tensors are not checked, never a silent pass; shape mismatch is incorrect", "[validation]") {
  const Case c = make_pod(PodSpec{});
  auto obs = rounded_reference(c);
  obs.lse_p.reset();
  obs.lse_d.reset();
  const CaseResult r = run(c, obs);
  CHECK(r.status == Status::passed);
  CHECK(!tensor(r, "lse_p").checked);
  CHECK(r.not_checked == std::vector<std::string>{"lse_p", "lse_d"});

  const CaseResult none = run(c, KernelOutputs{});
  CHECK(none.status == Status::skipped);
  CHECK(none.verdict == Verdict::skip);

  auto bad = rounded_reference(c);
  bad.out_d = Tensor::zeros(c.dtype_o, {3, c.num_qo_heads, c.head_dim});
  const CaseResult rb = run(c, bad);
  CHECK(rb.status == Status::incorrect);
  CHECK(rb.message.find("shape mismatch") != std::string::npos);
}

TEST_CASE("policy bounds follow the table: assert_close vs exceed-both", "[validation]") {
  const Case c = make_pod(PodSpec{});
  const SideResult ref = reference_fast_side(c, SideKind::decode);
  const auto fi = out_bounds(Policy::flashinfer, c, ref, nullptr);
  const auto fb = out_bounds(Policy::flashinfer_bench, c, ref, nullptr);
  const double a = tolerance_value("flashinfer.float16.atol"), rt = tolerance_value("flashinfer.float16.rtol");
  const double ba = tolerance_value("flashinfer-bench.atol"), br = tolerance_value("flashinfer-bench.rtol");
  for (std::size_t i = 0; i < ref.out.size(); i += 97) {
    CHECK(fi[i] == a + rt * std::abs(ref.out[i]));
    CHECK(fb[i] == std::max(ba, br * std::abs(ref.out[i])));
  }
  // Every row of the table carries a reason.
  for (const auto& row : tolerance_table()) CHECK(!row.reason.empty());
}

TEST_CASE("expectations: matching failure is xfail, any change fails", "[validation]") {
  const Case c = make_pod(PodSpec{});
  auto obs = rounded_reference(c);
  obs.out_d->set(0, obs.out_d->get(0) + 1.0);
  CaseResult r = run(c, obs);
  REQUIRE(r.status == Status::incorrect);
  apply_expectations(r, {Expectation{Profile::intended, Status::incorrect, "single element", "planted"}});
  CHECK(r.verdict == Verdict::xfail);
  apply_expectations(r, {Expectation{Profile::intended, Status::incorrect, "heads 16-31", "planted"}});
  CHECK(r.verdict == Verdict::fail);
  apply_expectations(r, {Expectation{Profile::flashinfer, Status::passed, "", ""}});  // other profile: not applicable
  CHECK(r.verdict == Verdict::fail);
  CaseResult good = run(c, rounded_reference(c));
  apply_expectations(good, {Expectation{Profile::intended, Status::incorrect, "", "known defect"}});
  CHECK(good.verdict == Verdict::fail);  // fixed defect: the expectation must be updated
}

TEST_CASE("diagnosis: LSE base e, v_scale twice, one head, one request's pages, whole request", "[validation][diagnosis]") {
  SECTION("LSE in base e") {
    const Case c = make_pod(PodSpec{});
    Case base_e = c;
    base_e.lse_base = LseBase::base_e;
    const auto obs = rounded_reference(base_e);
    const CaseResult r = run(c, obs);
    CAPTURE(all_diagnosis(r));
    CHECK(r.status == Status::incorrect);
    CHECK(tensor(r, "out_p").passed());
    CHECK(mentions(r, "LSE in base e"));
  }
  SECTION("v_scale applied twice") {
    Case c = make_pod(PodSpec{});
    c.decode->params.v_scale = 0.5;
    Case twice = c;
    twice.decode->params.v_scale = 0.25;
    const auto obs = rounded_reference(twice);
    const CaseResult r = run(c, obs);
    CAPTURE(all_diagnosis(r));
    CHECK(r.status == Status::incorrect);
    CHECK(mentions(r, "decode: v_scale applied twice"));
  }
  SECTION("one head off") {
    const Case c = make_pod(PodSpec{});
    auto obs = rounded_reference(c);
    for (std::int64_t row = 0; row < c.prefill->num_rows(); ++row)
      for (int d = 0; d < c.head_dim; ++d) {
        const auto k = out_index(c, row, 6, d);
        obs.out_p->set(k, obs.out_p->get(k) * 1.5 + 0.01);
      }
    const CaseResult r = run(c, obs);
    CAPTURE(all_diagnosis(r));
    CHECK(r.status == Status::incorrect);
    CHECK(tensor(r, "out_p").worst->head == 6);
    CHECK(mentions(r, "head(s) 6"));
  }
  SECTION("one request's pages shuffled") {
    const Case c = make_pod(PodSpec{});
    Case shuffled = c;
    auto& pt = shuffled.decode->kv.pages;
    // request 3 (70 keys over 5 pages) reads request 1's first (full) page instead of its own: other keys. (Swapping two
    // of its own full pages would change nothing a decode row sees; its last page's unused slots hold NaN.)
    const int r3 = 3;
    pt.indices[pt.indptr[r3]] = pt.indices[pt.indptr[1]];
    auto obs = rounded_reference(c);
    const auto wrong = rounded_reference(shuffled);
    obs.out_d = wrong.out_d;
    obs.lse_d = wrong.lse_d;
    const CaseResult r = run(c, obs);
    CAPTURE(all_diagnosis(r));
    CHECK(r.status == Status::incorrect);
    REQUIRE(tensor(r, "out_d").worst);
    CHECK(tensor(r, "out_d").worst->request == r3);
    CHECK(mentions(r, "confined to decode request 3"));
  }
  SECTION("a whole request missing (never written)") {
    const Case c = make_pod(PodSpec{});
    auto obs = rounded_reference(c);
    for (int h = 0; h < c.num_qo_heads; ++h) {
      for (int d = 0; d < c.head_dim; ++d) obs.out_d->set_bits(out_index(c, 1, h, d), kPoisonF16);
      obs.lse_d->set_bits(1 * c.num_qo_heads + h, kPoisonF32);
    }
    const CaseResult r = run(c, obs);
    CAPTURE(all_diagnosis(r));
    CHECK(r.status == Status::incorrect);
    CHECK(tensor(r, "out_d").unwritten == c.num_qo_heads * c.head_dim);
    CHECK(mentions(r, "whole request missing"));
  }
  SECTION("never written heads of every GQA group") {
    PodSpec s;
    s.heads = 16;
    s.kv_heads = 2;  // group of 8
    const Case c = make_pod(s);
    auto obs = rounded_reference(c);
    for (std::int64_t row = 0; row < c.decode->num_rows(); ++row)
      for (int h = 0; h < 16; ++h)
        if (h % 8 >= 4) {
          for (int d = 0; d < c.head_dim; ++d) obs.out_d->set_bits(out_index(c, row, h, d), 0x7E00u);
          obs.lse_d->set(row * 16 + h, NAN);
        }
    for (Profile p : {Profile::intended, Profile::flashinfer, Profile::flashinfer_pod}) {
      const CaseResult r = run(c, obs, Policy::calibrated, p);
      CAPTURE(all_diagnosis(r));
      CHECK(r.status == Status::incorrect);  // a profile never excuses unwritten elements
      CHECK(mentions(r, "out_d heads 4-7 of every group of 8"));
      CHECK(tensor(r, "out_p").passed());
    }
  }
}

TEST_CASE("profiles: ALiBi + soft cap double sm_scale; POD ignoring RoPE", "[validation][diagnosis]") {
  SECTION("ALiBi + soft cap") {
    PodSpec s;
    s.kv_d.clear();
    s.kv_p = 50;
    s.qo_p = 20;
    Case c = make_pod(s);
    c.prefill->params.pos_encoding = PosEncoding::alibi;
    c.prefill->params.logits_soft_cap = 30.0;
    const auto obs = rounded_reference(c, Semantics{.alibi_softcap_double_sm_scale = true});
    const CaseResult intended = run(c, obs);
    CAPTURE(all_diagnosis(intended));
    CHECK(intended.status == Status::incorrect);
    CHECK(mentions(intended, "sm_scale applied twice"));
    CHECK(run(c, obs, Policy::calibrated, Profile::flashinfer).status == Status::passed);
  }
  SECTION("RoPE asked, POD ignores it") {
    const Case plain = make_pod(PodSpec{});
    const auto obs = rounded_reference(plain);
    Case asked = plain;
    asked.prefill->params.pos_encoding = PosEncoding::rope_llama;
    const CaseResult intended = run(asked, obs);
    CAPTURE(all_diagnosis(intended));
    CHECK(intended.status == Status::incorrect);
    CHECK(mentions(intended, "prefill: RoPE not applied"));
    const CaseResult pod = run(asked, obs, Policy::calibrated, Profile::flashinfer_pod);
    CHECK(pod.status == Status::passed);
    CHECK(!pod.profile_notes.empty());
  }
}

TEST_CASE("docs/TOLERANCES.md mirrors every row of the tolerance table", "[validation]") {
  std::ifstream in(std::string(PODCHECK_SOURCE_DIR) + "/docs/TOLERANCES.md");
  REQUIRE(in);
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& row : tolerance_table()) {
    CAPTURE(row.key);
    CHECK(doc.find("`" + std::string(row.key) + "`") != std::string::npos);
  }
}

TEST_CASE("the run record decides before the outputs: not supported, launch failed, guards overwritten", "[validation]") {
  const Case c = make_pod({});
  const KernelOutputs good = rounded_reference(c);
  const JudgeOptions jo;
  // nothing recorded and the kernel ran: nothing checkable -> skipped, never passed
  const CaseResult skipped = judge(c, KernelOutputs{}, RunRecord{}, jo);
  CHECK(skipped.status == Status::skipped);
  CHECK(skipped.verdict == Verdict::skip);
  // the kernel declared the case unsupported: not-supported with its reason
  const CaseResult ns = judge(c, KernelOutputs{}, RunRecord{RunStatus::not_supported, "RoPE-LLaMA is not in v1"}, jo);
  CHECK(ns.status == Status::not_supported);
  CHECK(ns.verdict == Verdict::skip);
  CHECK(ns.message.find("RoPE-LLaMA is not in v1") != std::string::npos);
  // ... and outputs beside that claim are a contradiction in the record: an input error, not a verdict
  const CaseResult lie = judge(c, good, RunRecord{RunStatus::not_supported, "no"}, jo);
  CHECK(lie.status == Status::invalid_case);
  CHECK(lie.verdict == Verdict::fail);
  // a launch that failed is a failure even when the outputs it left look right
  const CaseResult crashed = judge(c, good, RunRecord{RunStatus::launch_failed, "illegal memory access"}, jo);
  CHECK(crashed.status == Status::launch_failed);
  CHECK(crashed.verdict == Verdict::fail);
  CHECK(crashed.message.find("illegal memory access") != std::string::npos);
  CHECK(crashed.run_status == "launch-failed");
  // guards overwritten: outputs judged (metrics reported) and the case incorrect whatever they say
  const CaseResult oob = judge(c, good, RunRecord{RunStatus::guards_overwritten, "out_d: 12 guard elements overwritten"}, jo);
  CHECK(oob.status == Status::incorrect);
  CHECK(oob.verdict == Verdict::fail);
  CHECK(oob.message.find("guard bands overwritten") != std::string::npos);
  REQUIRE_FALSE(oob.tensors.empty());
  for (const auto& t : oob.tensors) CHECK(t.passed());
  REQUIRE_FALSE(oob.diagnosis.empty());
  CHECK(oob.diagnosis[0].find("out-of-bounds writes") != std::string::npos);
  // the same outputs from a run that went well pass
  CHECK(judge(c, good, RunRecord{}, jo).status == Status::passed);
}

TEST_CASE("outputs not recorded are named, and a required one missing is a failure", "[validation]") {
  const Case c = make_pod({});
  KernelOutputs some = rounded_reference(c);
  some.lse_p.reset();
  some.lse_d.reset();
  some.out_p.reset();
  JudgeOptions jo;
  const CaseResult r = judge(c, some, RunRecord{}, jo);
  CHECK(r.status == Status::passed);  // what was recorded is right ...
  CHECK(r.not_checked == std::vector<std::string>{"out_p", "lse_p", "lse_d"});  // ... and the rest is named
  jo.required = OutputSet::parse("out_p,out_d,lse_p,lse_d");
  const CaseResult req = judge(c, some, RunRecord{}, jo);
  CHECK(req.status == Status::incorrect);
  CHECK(req.message.find("required output(s) not recorded: out_p, lse_p, lse_d") != std::string::npos);
  jo.required = OutputSet::parse("out");
  CHECK(judge(c, some, RunRecord{}, jo).status == Status::incorrect);  // out_p is missing
  jo.required = OutputSet::parse("out_d");
  CHECK(judge(c, some, RunRecord{}, jo).status == Status::passed);
  CHECK_THROWS_WITH(OutputSet::parse("out_q"), HasSubstring("unknown output 'out_q'"));
  // one-sided case: outputs of the absent side are never required
  const Case dec = make_pod({.qo_p = 0});
  KernelOutputs d = rounded_reference(dec);
  jo.required = OutputSet::all();
  CHECK(judge(dec, d, RunRecord{}, jo).status == Status::passed);
}

// Verdict lines in flashinfer-bench's Trace shape, checked field by field against the rules of its pydantic
// models (flashinfer_bench/data/trace.py and workload.py at 40e6ca78: required fields, the status enum, which
// statuses carry correctness and performance, non-negative-or-NaN errors, input specs) for every outcome.
#include "fixtures/sweep.hpp"
#include "reference/reference.hpp"
#include "testing/catch.hpp"
#include "traces/fib.hpp"
#include "traces/fib_trace.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <set>

using namespace podcheck;
using nlohmann::json;
namespace v = podcheck::validation;

namespace {

bool nonneg_or_nan(const json& x) {
  if (x.is_string()) return x == "NaN" || x == "Infinity";  // how flashinfer-bench writes them
  return x.is_number() && !x.is_boolean() && x.get<double>() >= 0;
}

// The rules of flashinfer-bench's Trace model, transcribed; each failure names the rule.
std::vector<std::string> schema_errors(const json& t) {
  std::vector<std::string> e;
  auto need = [&](bool ok, const char* rule) {
    if (!ok) e.push_back(rule);
  };
  need(t.is_object(), "Trace is an object");
  if (!t.is_object()) return e;
  need(t.contains("definition") && t["definition"].is_string() && !t["definition"].get<std::string>().empty(), "definition: NonEmptyString");
  need(t.contains("solution") && (t["solution"].is_null() || t["solution"].is_string()), "solution: Optional[str]");
  need(t.contains("workload") && t["workload"].is_object(), "workload: Workload");
  if (t.contains("workload") && t["workload"].is_object()) {
    const json& w = t["workload"];
    need(w.contains("uuid") && w["uuid"].is_string() && !w["uuid"].get<std::string>().empty(), "workload.uuid: NonEmptyString");
    need(w.contains("axes") && w["axes"].is_object(), "workload.axes: Dict[str, NonNegativeInt]");
    if (w.contains("axes") && w["axes"].is_object())
      for (const auto& a : w["axes"]) need(a.is_number_integer() && a.get<std::int64_t>() >= 0, "workload.axes values: NonNegativeInt");
    need(w.contains("inputs") && w["inputs"].is_object(), "workload.inputs: Dict[str, InputSpec]");
    if (w.contains("inputs") && w["inputs"].is_object())
      for (const auto& i : w["inputs"]) {
        const std::string type = i.value("type", std::string());
        if (type == "random") continue;
        if (type == "scalar") {
          need(i.contains("value") && (i["value"].is_number() || i["value"].is_boolean()), "ScalarInput.value: int | float | bool");
          continue;
        }
        need(type == "safetensors", "InputSpec.type: random | scalar | safetensors");
        need(i.contains("path") && i["path"].is_string() && !i["path"].get<std::string>().empty(), "SafetensorsInput.path");
        need(i.contains("tensor_key") && i["tensor_key"].is_string() && !i["tensor_key"].get<std::string>().empty(), "SafetensorsInput.tensor_key");
      }
  }
  need(t.contains("evaluation") && t["evaluation"].is_object(), "evaluation: Evaluation");
  if (!t.contains("evaluation") || !t["evaluation"].is_object()) return e;
  const json& ev = t["evaluation"];
  static const std::set<std::string> statuses = {"PASSED", "INCORRECT_SHAPE", "INCORRECT_NUMERICAL", "INCORRECT_DTYPE",
                                                 "RUNTIME_ERROR", "COMPILE_ERROR", "TIMEOUT"};
  need(ev.contains("status") && ev["status"].is_string() && statuses.count(ev["status"].get<std::string>()), "evaluation.status: EvaluationStatus");
  need(ev.contains("environment") && ev["environment"].is_object(), "evaluation.environment: Environment");
  if (ev.contains("environment") && ev["environment"].is_object()) {
    const json& env = ev["environment"];
    need(env.contains("hardware") && env["hardware"].is_string() && !env["hardware"].get<std::string>().empty(), "Environment.hardware: NonEmptyString");
    if (env.contains("libs")) {
      need(env["libs"].is_object(), "Environment.libs: Dict[str, str]");
      for (const auto& l : env["libs"]) need(l.is_string(), "Environment.libs values: str");
    }
  }
  need(ev.contains("timestamp") && ev["timestamp"].is_string() && !ev["timestamp"].get<std::string>().empty(), "evaluation.timestamp: NonEmptyString");
  need(!ev.contains("log") || ev["log"].is_string(), "evaluation.log: str");
  const std::string st = ev.value("status", std::string());
  const bool corr = ev.contains("correctness") && !ev["correctness"].is_null();
  const bool perf = ev.contains("performance") && !ev["performance"].is_null();
  need(corr == (st == "PASSED" || st == "INCORRECT_NUMERICAL"), "correctness present iff PASSED or INCORRECT_NUMERICAL");
  need(perf == (st == "PASSED"), "performance present iff PASSED");
  if (corr) {
    const json& c = ev["correctness"];
    for (const char* k : {"max_relative_error", "max_absolute_error"})
      need(!c.contains(k) || nonneg_or_nan(c[k]), "Correctness errors: non-negative or NaN");
    need(!c.contains("extra") || c["extra"].is_null() || c["extra"].is_object(), "Correctness.extra: Optional[Dict[str, Any]]");
  }
  if (perf)
    for (const char* k : {"latency_ms", "reference_latency_ms", "speedup_factor"}) {
      const json& p = ev["performance"];
      need(!p.contains(k) || (p[k].is_number() && p[k].get<double>() >= 0), "Performance fields: float >= 0");
    }
  return e;
}

json line_of(const v::CaseResult& r, const Case& c) {
  FibEnvironment env;
  env.hardware = "NVIDIA H200";
  env.libs = {{"podcheck", "0.1.0"}, {"flashinfer", "0.6.1"}};
  env.solution = "flashinfer-batch-decode";
  env.timestamp = "2026-12-01T10:00:00Z";
  auto s = fib_trace_line(r, c, env);
  REQUIRE(s);
  CHECK(s->find('\n') == std::string::npos);
  json j = json::parse(*s);
  CHECK(schema_errors(j) == std::vector<std::string>{});
  return j;
}

KernelOutputs reference_outputs(const Case& c) {
  PodResult ref = reference_fast(c);
  KernelOutputs o;
  const SideResult& d = *ref.decode;
  o.out_d = Tensor::from_doubles(c.dtype_o, {d.rows, d.heads, d.head_dim}, d.out);
  o.lse_d = Tensor::from_doubles(DType::float32, {d.rows, d.heads}, d.lse);
  return o;
}

}  // namespace

TEST_CASE("fib trace lines: every outcome in flashinfer-bench's Trace shape", "[traces][fib]") {
  const Case c = make_case("decode_f16_h32kv4d128_ps1_nhd(bs_d=7,kv_d=15,seed=0)");
  v::JudgeOptions o;
  KernelOutputs good = reference_outputs(c);

  v::CaseResult pass = v::judge(c, good, RunRecord{}, o);
  REQUIRE(pass.status == v::Status::passed);
  json p = line_of(pass, c);
  CHECK(p["definition"] == "gqa_paged_decode_h32_kv4_d128_ps1");
  CHECK(p["workload"]["uuid"] == fib_workload_of(c).uuid);
  CHECK(p["workload"]["axes"]["batch_size"] == 7);
  CHECK(p["workload"]["inputs"]["sm_scale"]["type"] == "scalar");
  CHECK(p["workload"]["inputs"]["kv_indices"]["tensor_key"] == "kv_indices");
  CHECK(p["solution"] == "flashinfer-batch-decode");
  const json& ev = p["evaluation"];
  CHECK(ev["status"] == "PASSED");
  CHECK(ev["environment"]["hardware"] == "NVIDIA H200");
  CHECK(ev["environment"]["libs"]["flashinfer"] == "0.6.1");
  CHECK(ev["timestamp"] == "2026-12-01T10:00:00Z");
  CHECK(ev["performance"]["latency_ms"] == 0.0);
  CHECK(ev["correctness"]["max_absolute_error"].get<double>() < 1e-2);
  CHECK(ev["correctness"]["extra"]["podcheck"]["tensors"]["out_d"]["checked"] == true);
  CHECK(ev["correctness"]["extra"]["podcheck"]["case_id"] == c.id);

  KernelOutputs bad = good;
  bad.out_d->set(5, bad.out_d->get(5) + 1.0);
  v::CaseResult wrong = v::judge(c, bad, RunRecord{}, o);
  REQUIRE(wrong.status == v::Status::incorrect);
  json w = line_of(wrong, c);
  CHECK(w["evaluation"]["status"] == "INCORRECT_NUMERICAL");
  CHECK_FALSE(w["evaluation"].contains("performance"));
  CHECK(std::abs(w["evaluation"]["correctness"]["max_absolute_error"].get<double>() - 1.0) < 0.01);
  CHECK(w["evaluation"]["log"].get<std::string>().find("podcheck incorrect") != std::string::npos);

  KernelOutputs hole = good;
  hole.out_d->set_bits(3, kPoisonF16);  // never written
  json h = line_of(v::judge(c, hole, RunRecord{}, o), c);
  CHECK(h["evaluation"]["status"] == "INCORRECT_NUMERICAL");
  CHECK(h["evaluation"]["correctness"]["max_absolute_error"] == "NaN");
  CHECK(h["evaluation"]["correctness"]["extra"]["podcheck"]["tensors"]["out_d"]["unwritten"] == 1);

  KernelOutputs cut = good;
  cut.out_d = Tensor::zeros(c.dtype_o, {6, 32, 128});
  json s = line_of(v::judge(c, cut, RunRecord{}, o), c);
  CHECK(s["evaluation"]["status"] == "INCORRECT_SHAPE");
  CHECK_FALSE(s["evaluation"].contains("correctness"));

  json ns = line_of(v::judge(c, KernelOutputs{}, RunRecord{RunStatus::not_supported, "page_size 1"}, o), c);
  CHECK(ns["evaluation"]["status"] == "RUNTIME_ERROR");
  CHECK(ns["evaluation"]["log"].get<std::string>().find("not-supported") != std::string::npos);
  json lf = line_of(v::unjudged_result(c.id, o, v::Status::launch_failed, "the kernel failed to run: launch error"), c);
  CHECK(lf["evaluation"]["status"] == "RUNTIME_ERROR");

  CHECK_FALSE(fib_trace_line(v::unjudged_result(c.id, o, v::Status::skipped, "filtered"), c, {}).has_value());

  // a case no definition expresses still gets a valid line, and the log says why
  Case rope = c;
  rope.decode->params.pos_encoding = PosEncoding::rope_llama;
  json u = line_of(v::judge(rope, reference_outputs(rope), RunRecord{}, o), rope);
  CHECK(u["definition"] == "podcheck_unmapped");
  CHECK(u["evaluation"]["log"].get<std::string>().find("pos encoding ROPE_LLAMA") != std::string::npos);
  // an empty environment: hardware "unknown", timestamp now
  auto bare = json::parse(*fib_trace_line(pass, c, {}));
  CHECK(bare["evaluation"]["environment"]["hardware"] == "unknown");
  CHECK(bare["solution"].is_null());
  CHECK(schema_errors(bare).empty());
}

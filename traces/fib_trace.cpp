// Verdicts as flashinfer-bench Trace lines (fib_trace.hpp).
#include "traces/fib_trace.hpp"

#include "traces/fib.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <ctime>
#include <stdexcept>

namespace podcheck {

namespace {

using ojson = nlohmann::ordered_json;
namespace v = validation;

// flashinfer-bench serialises non-finite floats as strings (ser_json_inf_nan="strings").
ojson number(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  return x;
}

std::string now_utc() {
  const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

ojson tensor_metrics(const v::TensorReport& t) {
  ojson m;
  m["checked"] = t.checked;
  if (!t.note.empty()) m["note"] = t.note;
  m["shape_ok"] = t.shape_ok;
  m["numel"] = t.numel;
  m["max_abs"] = number(t.max_abs);
  m["max_rel"] = number(t.max_rel);
  m["rel_l2"] = number(t.rel_l2);
  m["cosine"] = number(t.cosine);
  m["max_ulp"] = number(t.max_ulp);
  m["over_tol"] = t.over_tol;
  m["unwritten"] = t.unwritten;
  m["nan"] = t.nan;
  m["inf"] = t.inf;
  m["neginf_missing"] = t.neginf_missing;
  m["neginf_extra"] = t.neginf_extra;
  m["tol_used"] = number(t.tol_used);
  if (t.worst) m["worst"] = t.worst->text();
  return m;
}

}  // namespace

FibEnvironment fib_environment(const Provenance& p, const std::string& podcheck_version) {
  FibEnvironment e;
  e.hardware = p.device;
  e.libs["podcheck"] = podcheck_version;
  if (!p.kernel_name.empty()) e.libs[p.kernel_name] = p.kernel_version.empty() ? "unknown" : p.kernel_version;
  if (!p.driver.empty()) e.libs["driver"] = p.driver;
  e.solution = p.kernel_name;
  return e;
}

std::optional<std::string> fib_trace_line(const v::CaseResult& r, const Case& c, const FibEnvironment& env) {
  if (r.status == v::Status::skipped) return std::nullopt;
  ojson line;
  std::string unmapped;
  ojson workload;
  try {
    const FibWorkload w = fib_workload_of(c);
    line["definition"] = w.definition;
    workload = ojson::parse(fib_workload_json(c).dump());
  } catch (const std::invalid_argument& e) {
    unmapped = e.what();
    line["definition"] = "podcheck_unmapped";
    workload = {{"uuid", c.id}, {"axes", ojson::object()}, {"inputs", ojson::object()}};
  }
  // flashinfer-bench's workload: uuid, axes, inputs (the order its model declares them)
  line["workload"] = {{"axes", workload["axes"]}, {"inputs", workload["inputs"]}, {"uuid", workload["uuid"]}};
  line["solution"] = env.solution.empty() ? ojson(nullptr) : ojson(env.solution);

  bool shape_bad = false, any_checked = false, nonfinite = false, inf = false;
  double max_abs = 0, max_rel = 0;
  for (const auto& t : r.tensors) {
    shape_bad |= !t.shape_ok;
    any_checked |= t.checked;
    if (!t.checked) continue;
    if (t.bad_nonfinite() > 0) {
      nonfinite = true;
      inf |= t.inf > 0;
    }
    max_abs = std::max(max_abs, t.max_abs);
    max_rel = std::max(max_rel, t.max_rel);
  }
  std::string status;
  switch (r.status) {
    case v::Status::passed: status = "PASSED"; break;
    case v::Status::incorrect: status = shape_bad ? "INCORRECT_SHAPE" : !any_checked ? "RUNTIME_ERROR" : "INCORRECT_NUMERICAL"; break;
    default: status = "RUNTIME_ERROR"; break;  // not-supported, invalid-case
  }
  std::string log = "podcheck " + std::string(v::status_name(r.status)) + " (" + r.profile + " profile, " + r.policy + " policy)";
  if (!r.message.empty()) log += ": " + r.message;
  for (const auto& d : r.diagnosis) log += "\ndiagnosis: " + d;
  if (!r.reproduce.empty()) log += "\nreproduce: " + r.reproduce;
  if (!unmapped.empty()) log += "\nno flashinfer-bench definition expresses this case: " + unmapped;
  if (status == "PASSED") log += "\nperformance: not measured by podcheck (zeros)";

  ojson ev;
  ev["status"] = status;
  ojson libs = ojson::object();
  for (const auto& [k, val] : env.libs) libs[k] = val;
  ev["environment"] = {{"hardware", env.hardware.empty() ? std::string("unknown") : env.hardware}, {"libs", libs}};
  ev["timestamp"] = env.timestamp.empty() ? now_utc() : env.timestamp;
  ev["log"] = log;
  if (status == "PASSED" || status == "INCORRECT_NUMERICAL") {
    ojson extra;
    extra["case_id"] = r.id.empty() ? c.id : r.id;
    extra["status"] = std::string(v::status_name(r.status));
    extra["verdict"] = std::string(v::verdict_name(r.verdict));
    extra["profile"] = r.profile;
    extra["policy"] = r.policy;
    ojson ts = ojson::object();
    for (const auto& t : r.tensors) ts[t.name] = tensor_metrics(t);
    extra["tensors"] = ts;
    extra["diagnosis"] = r.diagnosis;
    if (!r.reproduce.empty()) extra["reproduce"] = r.reproduce;
    const double bad = inf ? INFINITY : NAN;
    ev["correctness"] = {{"max_relative_error", number(nonfinite ? bad : max_rel)},
                         {"max_absolute_error", number(nonfinite ? bad : max_abs)},
                         {"extra", {{"podcheck", extra}}}};
  }
  if (status == "PASSED") ev["performance"] = {{"latency_ms", 0.0}, {"reference_latency_ms", 0.0}, {"speedup_factor", 0.0}};
  line["evaluation"] = ev;
  return line.dump();
}

}  // namespace podcheck

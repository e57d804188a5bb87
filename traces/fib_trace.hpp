// Verdicts in flashinfer-bench's Trace shape (flashinfer_bench/data/trace.py at 40e6ca78), one JSON line per
// judged case, so that its tooling (TraceSet, report) can read podcheck's results:
//   {"definition", "workload": {uuid, axes, inputs}, "solution", "evaluation": {status, environment{hardware,
//    libs}, timestamp, log, correctness{max_relative_error, max_absolute_error, extra}, performance{...}}}
// The definition and workload are the ones `podcheck export fib` writes for the case (traces/fib.hpp); a case
// imported from flashinfer-bench keeps its definition and uuid. Status: passed -> PASSED (with performance,
// which the schema requires: zeros, podcheck does not time); a failure with a shape mismatch ->
// INCORRECT_SHAPE; a failure with nothing judged (the kernel did not run) -> RUNTIME_ERROR; other failures ->
// INCORRECT_NUMERICAL; not-supported and invalid cases -> RUNTIME_ERROR (the log says which); skipped -> no
// line. Errors over all checked outputs (out and LSE); "NaN" / "Infinity" (flashinfer-bench's own spelling)
// when an output holds NaN or Inf where the reference is finite. correctness.extra.podcheck holds podcheck's
// metrics per tensor, the diagnosis and the reproduce command.
#pragma once

#include "reference/case.hpp"
#include "traces/trace.hpp"
#include "validation/judge.hpp"

#include <map>
#include <optional>
#include <string>

namespace podcheck {

struct FibEnvironment {
  std::string hardware;                      // e.g. "NVIDIA H200"; "unknown" when empty
  std::map<std::string, std::string> libs;   // e.g. {"podcheck": "0.1.0", "flashinfer": "0.6.1"}
  std::string solution;                      // the kernel judged (Trace.solution); "" -> null
  std::string timestamp;                     // ISO 8601; "" -> now, UTC
};

// The environment a trace records: its device, kernel name and version, and podcheck's version.
FibEnvironment fib_environment(const Provenance& p, const std::string& podcheck_version);

// One line (no trailing newline), or nullopt for a skipped result.
std::optional<std::string> fib_trace_line(const validation::CaseResult& r, const Case& c, const FibEnvironment& env);

}  // namespace podcheck

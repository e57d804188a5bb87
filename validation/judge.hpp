// Judging one case: profile -> reference -> emulator envelope -> per-tensor comparison -> outcome ->
// diagnosis of failures -> expectation. This is the one path replay, validate and tests go through.
#pragma once

#include "reference/case.hpp"
#include "reference/outputs.hpp"
#include "reference/profile.hpp"
#include "traces/trace.hpp"
#include "validation/compare.hpp"
#include "validation/finding.hpp"
#include "validation/status.hpp"
#include "validation/tolerance.hpp"

#include <optional>
#include <string>
#include <vector>

namespace podcheck::validation {

struct JudgeOptions {
  Policy policy = Policy::calibrated;
  Profile profile = Profile::intended;
  bool diagnose = true;  // run the diagnosis on failing cases
};

struct CaseResult {
  std::string id;
  std::string source;   // file the case came from ("" for built-in cases)
  std::string kind = "trace";  // "trace" or "selfcheck"
  std::string profile;  // profile name
  std::string policy;   // policy name
  Status status = Status::skipped;
  Verdict verdict = Verdict::skip;
  std::string message;  // one line: why skipped / invalid / not supported / expectation mismatch
  std::vector<TensorReport> tensors;     // out_p, out_d, lse_p, lse_d (those of existing sides)
  std::vector<std::string> profile_notes;  // what the profile changed
  std::vector<std::string> diagnosis;    // one finding per line (the texts of `findings`, in order)
  std::vector<Finding> findings;         // the same, structured: kind, side, tensor, ranges (finding.hpp)
  std::optional<Expectation> expectation;  // the one that applied
  std::string reproduce;  // one-line command (failures)
  std::string artifact;   // file holding the failure's data (failures, when written)
  double seconds = 0;

  // The tensor the headline is about: a failing one first, else the one with the largest tol_used.
  const TensorReport* headline() const;
};

// Judges observed outputs of a case. Never throws for a bad case: InvalidCase gives Status::invalid_case.
// Reference outputs are returned through `reference_out` when given (for failure artifacts).
CaseResult judge(const Case& c, const KernelOutputs& observed, const JudgeOptions& options,
                 PodResult* reference_out = nullptr);

// Applies the expectation (if any) that names `result.profile` and sets result.verdict:
// matching an expected failure -> xfail; any mismatch (status, or diagnosis phrase absent) -> fail.
void apply_expectations(CaseResult& result, const std::vector<Expectation>& expected);

// Verdict of a result without expectations.
Verdict plain_verdict(Status s);

// A result decided without judging outputs (no tensor reports): status, plain verdict and message.
CaseResult unjudged_result(const std::string& id, const JudgeOptions& options, Status status, std::string message);
// The result for a case the kernel did not run because it does not support it (`reason` as the kernel gave
// it): Status::not_supported, the same from `podcheck run --check` and from replaying the trace it records.
CaseResult not_supported_result(const std::string& id, const JudgeOptions& options, const std::string& reason);

}  // namespace podcheck::validation

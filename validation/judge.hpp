// Judging one recorded case: run record -> profile -> reference -> emulator envelope -> per-tensor comparison ->
// outcome -> diagnosis of failures -> expectation. judge() is the one path that `podcheck run --check`,
// replay, validate, the Python module and the tests go through; it sees a case, what the kernel wrote and how
// its run went, never a file.
#pragma once

#include "reference/case.hpp"
#include "reference/outputs.hpp"
#include "reference/profile.hpp"
#include "validation/compare.hpp"
#include "validation/finding.hpp"
#include "validation/status.hpp"
#include "validation/tolerance.hpp"

#include <optional>
#include <string>
#include <vector>

namespace podcheck::validation {

// A set of the four outputs, by name: out_p, out_d, lse_p, lse_d.
struct OutputSet {
  bool out_p = false, out_d = false, lse_p = false, lse_d = false;
  static OutputSet all() { return {true, true, true, true}; }
  bool has(SideKind side, bool lse) const;
  bool empty() const { return !(out_p || out_d || lse_p || lse_d); }
  // "out_p,out_d,lse_p,lse_d", "all", "out" (out_p,out_d), "lse" (lse_p,lse_d), "none"; comma-separated union.
  // Throws std::invalid_argument naming the choices.
  static OutputSet parse(std::string_view text);
};

struct JudgeOptions {
  Policy policy = Policy::calibrated;
  Profile profile = Profile::intended;
  bool diagnose = true;  // run the diagnosis on failing cases
  // Outputs the kernel must have recorded (for the sides the case has): one that is missing makes the case
  // incorrect. Outputs not required and not recorded are listed in CaseResult::not_checked.
  OutputSet required;
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
  std::string run_status = "ran";  // the run record's status (run_status_name)
  std::vector<TensorReport> tensors;     // out_p, out_d, lse_p, lse_d (those of existing sides)
  std::vector<std::string> not_checked;  // outputs of existing sides that were not recorded (never a pass)
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

// Judges a recorded case: what the kernel wrote (`observed`, any subset) and how its run went (`run`).
//   ran                 the outputs are judged; nothing checkable -> skipped; a required output missing -> incorrect
//   guards_overwritten  the outputs are judged (metrics reported) and the case is incorrect whatever they say
//   launch_failed       launch-failed: nothing it wrote is judged
//   not_supported       not-supported; recorded outputs beside it are a contradiction -> invalid-case
// Never throws for a bad case: InvalidCase gives Status::invalid_case. Reference outputs are returned through
// `reference_out` when given (for failure artifacts).
CaseResult judge(const Case& c, const KernelOutputs& observed, const RunRecord& run, const JudgeOptions& options,
                 PodResult* reference_out = nullptr);

// Applies the expectation (if any) that names `result.profile` and sets result.verdict:
// matching an expected failure -> xfail; any mismatch (status, or diagnosis phrase absent) -> fail.
void apply_expectations(CaseResult& result, const std::vector<Expectation>& expected);

// Verdict of a result without expectations.
Verdict plain_verdict(Status s);

// A result decided without judging outputs (no tensor reports): status, plain verdict and message. For a case
// that could not even be read (the caller names the file and the problem in `message`).
CaseResult unjudged_result(const std::string& id, const JudgeOptions& options, Status status, std::string message);

}  // namespace podcheck::validation

// Outcomes of judging one case, expected verdicts, and how a verdict relates to an expectation.
//
// Six outcomes (DESIGN §5, STYLE E10): a case that could not be judged is never counted as passed, and a run
// where anything that should have been judged was skipped or invalid is not a success. A recorded trace may
// carry an expected verdict per profile; a verdict that matches an expected failure is an "xfail" (success),
// a verdict that differs from its expectation either way is a failure.
#pragma once

#include "reference/profile.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace podcheck::validation {

enum class Status : std::uint8_t {
  passed,         // every recorded output within its bound, and every required output recorded
  incorrect,      // an output out of bounds, unwritten, of the wrong shape; guards overwritten; a required
                  // output not recorded
  launch_failed,  // the kernel did not complete (CUDA error, crash): nothing it wrote can be trusted
  not_supported,  // the kernel declared the case outside what it computes (nothing launched)
  invalid_case,   // the case itself could not be read or is inconsistent: an input error
  skipped,        // nothing checkable was recorded
};

std::string_view status_name(Status);      // "passed" | "incorrect" | "launch-failed" | "not-supported" | "invalid-case" | "skipped"
Status status_from_name(std::string_view);  // throws std::invalid_argument naming the choices

// What the run makes of a verdict once expectations are taken into account.
enum class Verdict : std::uint8_t {
  ok,     // passed, no expectation (or expected to pass)
  xfail,  // failed as expected (status and diagnosis phrase match the expectation)
  fail,   // a parity failure, or a verdict that differs from its expectation
  skip,   // not supported, or nothing to check: counted apart, never as success on their own
};
std::string_view verdict_name(Verdict);  // "ok" | "xfail" | "fail" | "skip"
std::string_view verdict_tag(Verdict);   // "[OK]" | "[XFAIL]" | "[FAIL]" | "[SKIP]"

// An expected verdict carried by a recorded trace: a known defect of the kernel that produced it (or a known
// pass). Parsed from the file at read time, so an unknown profile or status is an input error there.
struct Expectation {
  Profile profile = Profile::intended;  // the profile the expectation holds under
  Status status = Status::passed;
  std::string diagnosis;  // a phrase the diagnosis must contain, case-insensitive (empty: not checked)
  std::string reason;     // why (for people)
  bool operator==(const Expectation&) const = default;
};

}  // namespace podcheck::validation

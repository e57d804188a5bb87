// Outcomes of judging one case, and how a verdict relates to an expectation.
//
// Five outcomes (DESIGN §5, STYLE E10): a case that could not be judged is never counted as passed, and a
// run where everything was skipped is not a success. A recorded trace may carry an expected verdict per
// profile; a verdict that matches an expected failure is an "xfail" (success), a verdict that differs from
// its expectation either way is a failure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace podcheck::validation {

enum class Status : std::uint8_t { passed, incorrect, not_supported, invalid_case, skipped };

std::string_view status_name(Status);      // "passed" | "incorrect" | "not-supported" | "invalid-case" | "skipped"
Status status_from_name(std::string_view);  // throws std::invalid_argument naming the choices

// What the run makes of a verdict once expectations are taken into account.
enum class Verdict : std::uint8_t {
  ok,     // passed, no expectation (or expected to pass)
  xfail,  // failed as expected (status and diagnosis phrase match the expectation)
  fail,   // a parity failure, or a verdict that differs from its expectation
  skip,   // skipped, not supported: counted apart, never as success on their own
};
std::string_view verdict_name(Verdict);  // "ok" | "xfail" | "fail" | "skip"
std::string_view verdict_tag(Verdict);   // "[OK]" | "[XFAIL]" | "[FAIL]" | "[SKIP]"

}  // namespace podcheck::validation

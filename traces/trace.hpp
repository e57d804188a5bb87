// A trace: a case (its inputs), what some kernel produced on it, and where that came from.
#pragma once

#include "reference/case.hpp"
#include "reference/outputs.hpp"

#include <map>
#include <string>
#include <vector>

namespace podcheck {

struct Provenance {
  std::string kernel_name;     // e.g. "flashinfer-pod", "podcheck-cuda"
  std::string kernel_version;  // e.g. a commit
  std::string device;          // e.g. "NVIDIA H200 (sm_90, 132 SMs)"
  std::string driver;          // e.g. "580.159.04"
  std::string date;            // ISO 8601 UTC
  std::string source;          // how it was recorded (importer, file it came from)
  std::map<std::string, std::string> scheduling;  // split counts, tile sizes, ... where the kernel knows them
};

// A recorded trace may carry expected verdicts: a known defect of the kernel that produced it. validate
// succeeds when every verdict matches its expectation and fails when one changes, either way.
struct Expectation {
  std::string profile;    // profile name the expectation holds under ("intended", "flashinfer", ...)
  std::string status;     // "passed" | "incorrect" | "not-supported" | ...
  std::string diagnosis;  // a phrase the diagnosis must contain (empty: not checked)
  std::string reason;     // why (for people)
};

struct Trace {
  Case kase;
  KernelOutputs observed;
  Provenance provenance;
  std::vector<Expectation> expected;
};

}  // namespace podcheck

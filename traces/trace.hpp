// A trace: a case (its inputs), what some kernel produced on it and how its run went, where that came from,
// and the verdicts it is expected to get.
#pragma once

#include "reference/case.hpp"
#include "reference/outputs.hpp"
#include "validation/status.hpp"

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
                                                  // (facts only: how the run went is Trace::run)
};

using validation::Expectation;  // expected verdicts: a known defect of the kernel (validation/status.hpp)

struct Trace {
  Case kase;
  KernelOutputs observed;
  RunRecord run;  // how the kernel's run went (ran, not supported, launch failed, guards overwritten)
  Provenance provenance;
  std::vector<Expectation> expected;
};

}  // namespace podcheck

// Diagnosis of a failing case: which single semantic change the kernel matches, and what structure the
// failures have (elements never written grouped by head/request, a whole request missing, errors confined
// to one request, NaN positions). Findings are plain sentences; tests and expectations match phrases.
#pragma once

#include "reference/outputs.hpp"
#include "reference/profile.hpp"
#include "reference/reference.hpp"
#include "validation/compare.hpp"
#include "validation/tolerance.hpp"
#include "validation/variants.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace podcheck::validation {

struct DiagnosisInput {
  const ProfiledCase& profiled;
  const KernelOutputs& observed;
  Policy policy;
  const PodResult& reference;
  const std::map<SideKind, Envelope>& envelopes;  // calibrated only
  const std::vector<TensorReport>& reports;
};

std::vector<std::string> diagnose(const DiagnosisInput& in);

// "16-31" / "0, 4, 9-11" for a sorted list of integers.
std::string ranges_text(const std::vector<int>& v);

}  // namespace podcheck::validation

// Diagnosis of a failing case: what shape the errors have and which structure explains it, most specific
// first, with the evidence (counts, ranges), and which single semantic change (validation/variants.hpp) the
// kernel matches. Every finding is a sentence (tests and expectations match phrases) and a structured record
// (validation/finding.hpp) for the JSON and JUnit reports. docs/VALIDATION.md lists the patterns.
#pragma once

#include "reference/outputs.hpp"
#include "reference/profile.hpp"
#include "reference/reference.hpp"
#include "validation/compare.hpp"
#include "validation/finding.hpp"
#include "validation/tolerance.hpp"
#include "validation/variants.hpp"

#include <map>
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

// Findings in order, most specific first: elements never written (their structure), then the patterns of
// the wrong values (one element; empty rows; a mask bound; a page permutation; the LSE's base, sign or
// offset; an output scale), full semantic matches, where the errors are confined (heads, tiles of query rows,
// RoPE positions, KV past a boundary, a length class, one page), what is wrong only (LSE only, output only,
// one side), and last partial matches or the statement that no single variant explains it.
std::vector<Finding> diagnose(const DiagnosisInput& in);

// "16-31" / "0, 4, 9-11" for a sorted list of integers.
std::string ranges_text(const std::vector<int>& v);

}  // namespace podcheck::validation

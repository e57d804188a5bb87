// Tolerance policies and the one reviewed table of their constants (docs/TOLERANCES.md mirrors it).
//
// Every policy turns into a per-element bound: an element passes when |observed - reference| <= bound.
//   calibrated        bound = factor * envelope + floor, where the envelope is what honest low-precision
//                     arithmetic gets wrong on THIS case (validation/emulator.hpp: |emulated - reference|,
//                     taken as the max over the element's (row, head) for outputs and over the row for LSE)
//                     and the floor is a few ULPs of the output dtype at |reference| plus a small absolute term.
//   flashinfer        FlashInfer's own test tolerances, assert_close style: atol + rtol * |reference|.
//   flashinfer-bench  atol = rtol = 1e-2; an element fails only if it exceeds both: max(atol, rtol * |reference|).
// A NaN, an Inf or a -inf mismatch where the reference says otherwise always fails, whatever the policy.
// No literal tolerance appears anywhere else (tests included): look constants up with tolerance_value().
#pragma once

#include "reference/case.hpp"
#include "reference/reference.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace podcheck::validation {

enum class Policy : std::uint8_t { calibrated, flashinfer, flashinfer_bench };

std::string_view policy_name(Policy);       // "calibrated" | "flashinfer" | "flashinfer-bench"
Policy policy_from_name(std::string_view);  // throws std::invalid_argument naming the choices

// One row of the reviewed table.
struct ToleranceRow {
  std::string_view key;     // e.g. "calibrated.out.factor"
  double value;
  std::string_view reason;  // why this value (mechanism, evidence)
};
const std::vector<ToleranceRow>& tolerance_table();
double tolerance_value(std::string_view key);  // throws std::out_of_range for an unknown key

// Envelope of one side: what the emulator gets wrong, spread over the unit the verdict should be robust on.
//   out[e] = max( max over e's (row, head) of |emu - ref|,  k_out * RMS over the side of |emu - ref| )
//   lse[e] = max( max over e's row (all heads) of |emu - ref|, k_lse * RMS over the side )
// plus, with a soft cap, the error of a hardware tanh (tanh.approx.f32) that the emulator does not model.
// The side-wide RMS term keeps the verdict robust where the kernel's tiling or split points differ from
// the emulator's for a few rows: the emulator then shows an unusually small error on exactly those rows.
struct Envelope {
  std::vector<double> out;
  std::vector<double> lse;
};
Envelope make_envelope(const Case& c, SideKind side, const SideResult& reference, const SideResult& emulated);

// Per-element bounds of one side's outputs. `envelope` is required for the calibrated policy and ignored
// otherwise; it may come from another reference variant than `reference` (diagnosis reuses the base case's).
std::vector<double> out_bounds(Policy policy, const Case& c, const SideResult& reference, const Envelope* envelope);
std::vector<double> lse_bounds(Policy policy, const Case& c, const SideResult& reference, const Envelope* envelope);

}  // namespace podcheck::validation

// Interim parity check of kernel outputs against the float64 reference: per-dtype relative-L2 bounds,
// an LSE bound, "every element written", exact 0 / -inf for empty rows. The validation module owns the
// real tolerance policies; this table is what kernels/ uses until they exist (and in its own GPU tests).
#pragma once

#include "reference/outputs.hpp"
#include "reference/reference.hpp"

#include <string>

namespace podcheck::kernels {

// Tolerances by the dtype that limits precision (the query/PV operand dtype), with the reason.
struct ParityTolerance {
  double out_rel_l2;  // ||out - ref|| / ||ref||
  double lse_abs;     // |lse - ref| / (1 + |ref| / 16) (base of the case), finite rows
  const char* reason;
};
ParityTolerance parity_tolerance(DType dtype_q);

struct SideParity {
  double out_rel_l2 = 0, lse_max_abs = 0;  // lse_max_abs: max |lse - ref| / (1 + |ref| / 16)
  long long unwritten = 0;    // elements still holding the poison pattern
  long long nonfinite = 0;    // NaN/Inf in out, or NaN / wrong-signed inf in lse, where the reference is finite
  long long empty_rows_bad = 0;  // empty rows not exactly 0 / -inf
  bool passed = false;
  std::string summary;  // one line
};

struct CaseParity {
  SideParity side[2];
  bool passed = false;
  std::string summary;
};

CaseParity check_parity(const Case& c, const KernelOutputs& observed, const PodResult& reference);

}  // namespace podcheck::kernels

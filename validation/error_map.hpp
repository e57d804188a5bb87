// Errors per (query row, head) of one side: the unit the diagnosis reasons on, and the heat maps a report
// draws (error / bound over query row x head, per request, for the output and for the LSE).
//
// A cell is one (row, head). For the output its ratio is the largest |observed - reference| / bound over the
// head's dims; for the LSE it is that of the one element. A non-finite mismatch (Inf where the reference is
// finite, -inf on a row that sees keys, a value on a row that sees none) is +inf; a NaN observed where the
// reference is finite (never written, or computed) is flagged apart and is NaN in a heat map. The failure
// flags use exactly compare_tensor's rule (|err| > bound), not the rounded ratio.
#pragma once

#include "reference/case.hpp"
#include "reference/outputs.hpp"
#include "reference/profile.hpp"
#include "reference/reference.hpp"
#include "validation/compare.hpp"
#include "validation/tolerance.hpp"

#include <cstdint>
#include <vector>

namespace podcheck::validation {

struct CellErrors {
  SideKind side = SideKind::prefill;
  std::int64_t rows = 0;
  int heads = 0;
  bool out_checked = false, lse_checked = false;  // the tensor was recorded with the reference's shape
  std::vector<float> out_ratio, lse_ratio;        // [rows * heads]; 0 where not checked
  // Per cell: kOutFail / kLseFail (a non-NaN element over its bound or a non-finite mismatch),
  // kOutNan / kLseNan (NaN observed where the reference is finite).
  std::vector<std::uint8_t> flags;
  static constexpr std::uint8_t kOutFail = 1, kLseFail = 2, kOutNan = 4, kLseNan = 8;

  bool fails(std::int64_t cell) const { return flags[cell] & (kOutFail | kLseFail); }
  bool has_nan(std::int64_t cell) const { return flags[cell] & (kOutNan | kLseNan); }
};

// The cells of one side. `envelope` is required for the calibrated policy (as for out_bounds).
CellErrors cell_errors(Policy policy, const Case& c, SideKind side, const KernelOutputs& observed,
                       const SideResult& reference, const Envelope* envelope);

// One heat map: a request's query rows x query heads, binned to at most the asked size. Each cell is the
// largest ratio of the cells it covers (a NaN, never written, counts above +inf).
struct HeatMap {
  SideKind side = SideKind::prefill;
  int request = 0;
  TensorKind kind = TensorKind::out;
  std::int64_t rows = 0;         // the request's query rows (unbinned)
  int heads = 0;                 // query heads (unbinned)
  std::int64_t row_bins = 0;     // map height
  int head_bins = 0;             // map width
  std::int64_t rows_per_bin = 1; // bin i covers rows [i * rows_per_bin, (i + 1) * rows_per_bin)
  int heads_per_bin = 1;
  std::vector<float> cells;      // [row_bins][head_bins]
  float at(std::int64_t row_bin, int head_bin) const { return cells[row_bin * head_bins + head_bin]; }
};

// Maps for every (side, request with query rows, checked tensor) of the sides given, binned to at most
// max_rows x max_heads cells (both >= 1).
std::vector<HeatMap> heat_maps(const Case& c, const std::vector<CellErrors>& sides, std::int64_t max_rows,
                               int max_heads);

// The same for a case and the outputs a kernel wrote, recomputing what judge() computes to get the bounds
// (the profiled case, its reference and, for calibrated, the emulator's envelope). Throws InvalidCase for a
// case the model refuses and std::invalid_argument where the emulator cannot run it.
std::vector<HeatMap> heat_maps(const Case& c, const KernelOutputs& observed, Policy policy, Profile profile,
                               std::int64_t max_rows, int max_heads);

}  // namespace podcheck::validation

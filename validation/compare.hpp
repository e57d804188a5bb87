// One comparison routine, a report per output tensor (out_p, out_d, lse_p, lse_d; STYLE E8).
//
// Non-finite values are checked first: a NaN where the reference is finite is either an element never
// written (the poison bit patterns of reference/outputs.hpp, or a recording's NaN sentinel) or a computed
// NaN; both always fail and are counted apart where the bits allow. An LSE of -inf (an empty row) must be
// matched exactly, both directions. Finite elements then go through the per-element bound of the policy.
#pragma once

#include "reference/case.hpp"
#include "reference/reference.hpp"
#include "reference/tensor.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace podcheck::validation {

// Where an element sits: side, request, query row within the request, head, dim (-1 for LSE), and the KV
// it reads where that matters (decode: last page of the request; masks/windows: the visible key range).
struct Location {
  SideKind side = SideKind::prefill;
  int request = -1;
  std::int64_t row = -1;         // query row within the request
  std::int64_t global_row = -1;  // row in the side's q tensor
  int head = -1;
  int dim = -1;
  std::string kv;  // e.g. "kv_len 300, last page 17 (slot 11)" or "keys 27..127 visible"
  std::string text() const;  // "(decode, req 3, row 0, head 17, dim 5; kv_len 1000, last page 412)"
};

enum class TensorKind : std::uint8_t { out, lse };

// "out_p", "out_d", "lse_p", "lse_d": the tensor's name in traces, reports and diagnoses
std::string tensor_name(SideKind side, TensorKind kind);

struct TensorReport {
  std::string name;     // "out_p", "out_d", "lse_p", "lse_d"
  SideKind side = SideKind::prefill;
  TensorKind kind = TensorKind::out;
  bool checked = false;       // false: not checked (see note), never counted as a pass
  bool shape_ok = true;
  std::string note;           // why not checked, or the shape problem
  std::int64_t numel = 0;
  double max_abs = 0, max_rel = 0, rel_l2 = 0, cosine = 1, max_ulp = 0;
  std::int64_t over_tol = 0;      // finite elements over their bound
  double over_fraction = 0;
  std::int64_t unwritten = 0;     // NaN carrying a poison pattern where the reference is finite
  std::int64_t nan = 0;           // any other NaN where the reference is finite ("never written or NaN")
  std::int64_t inf = 0;           // +-Inf where the reference is finite (LSE -inf counted in neginf_extra)
  std::int64_t neginf_missing = 0;  // LSE: reference -inf (empty row), observed something else
  std::int64_t neginf_extra = 0;    // LSE: observed -inf, reference finite
  double tol_used = 0;            // max over finite elements of |err| / bound (1 = at the bound)
  // The worst element: first by non-finite failure, else by |err| / bound.
  std::optional<Location> worst;
  double worst_observed = 0, worst_reference = 0, worst_error = 0, worst_bound = 0;

  std::int64_t bad_nonfinite() const { return unwritten + nan + inf + neginf_missing + neginf_extra; }
  bool passed() const { return checked && shape_ok && over_tol == 0 && bad_nonfinite() == 0; }
  bool failed() const { return (checked || !shape_ok) && !passed(); }
};

// Compares an observed tensor with the reference of one side. `observed` may be absent (not checked).
// `bounds` has one entry per reference element. ULPs are counted in `ulp_dtype` (dtype_o, float32 for LSE).
TensorReport compare_tensor(const Case& c, SideKind side, TensorKind kind, const std::optional<Tensor>& observed,
                            const SideResult& reference, const std::vector<double>& bounds);

// Per element of an observed tensor: true when it failed (non-finite mismatch or over its bound).
// Used by diagnosis to find structure in the failures. Empty when the shapes differ.
std::vector<std::uint8_t> failure_mask(TensorKind kind, const Tensor& observed, const SideResult& reference,
                                       const std::vector<double>& bounds);
// True where the observed element is NaN and the reference finite.
std::vector<std::uint8_t> nan_mask(TensorKind kind, const Tensor& observed, const SideResult& reference);

// Location of a flat element index of an out (kind out: [rows, H, D]) or lse ([rows, H]) tensor.
Location locate_element(const Case& c, SideKind side, TensorKind kind, std::int64_t flat);

// True for the poison patterns of reference/outputs.hpp in a tensor of dtype t.
bool is_poison(DType t, std::uint32_t bits);

}  // namespace podcheck::validation

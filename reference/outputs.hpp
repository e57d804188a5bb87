// What a kernel wrote: its outputs as stored tensors (out_* in dtype_o, lse_* in float32), any subset.
// Outputs are poisoned with NaN before a kernel runs, so a NaN where the reference is finite is either
// a computed NaN or an element never written; the poison bit patterns below tell them apart when the
// writer used them.
#pragma once

#include "reference/case.hpp"
#include "reference/tensor.hpp"

#include <cstdint>
#include <optional>

namespace podcheck {

struct KernelOutputs {
  std::optional<Tensor> out_p, out_d;  // [rows, H_qo, D], dtype_o
  std::optional<Tensor> lse_p, lse_d;  // [rows, H_qo], float32, base Case::lse_base
  const std::optional<Tensor>& out(SideKind k) const { return k == SideKind::prefill ? out_p : out_d; }
  const std::optional<Tensor>& lse(SideKind k) const { return k == SideKind::prefill ? lse_p : lse_d; }
  std::optional<Tensor>& out(SideKind k) { return k == SideKind::prefill ? out_p : out_d; }
  std::optional<Tensor>& lse(SideKind k) { return k == SideKind::prefill ? lse_p : lse_d; }
};

// Quiet-NaN payloads podcheck writes before a launch (distinct from the canonical NaN a computation yields).
inline constexpr std::uint32_t kPoisonF16 = 0x7E5Au;
inline constexpr std::uint32_t kPoisonBF16 = 0x7FA5u;
inline constexpr std::uint32_t kPoisonF32 = 0x7FC0DEADu;

}  // namespace podcheck

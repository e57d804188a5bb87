// What a kernel wrote: its outputs as stored tensors (out_* in dtype_o, lse_* in float32), any subset, and how
// its run went (the run record, written by whoever ran it: podcheck run, an importer, a Python caller).
// Outputs are poisoned with NaN before a kernel runs, so a NaN where the reference is finite is either
// a computed NaN or an element never written; the poison bit patterns below tell them apart when the
// writer used them.
#pragma once

#include "reference/case.hpp"
#include "reference/tensor.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace podcheck {

struct KernelOutputs {
  std::optional<Tensor> out_p, out_d;  // [rows, H_qo, D], dtype_o
  std::optional<Tensor> lse_p, lse_d;  // [rows, H_qo], float32, base Case::lse_base
  const std::optional<Tensor>& out(SideKind k) const { return k == SideKind::prefill ? out_p : out_d; }
  const std::optional<Tensor>& lse(SideKind k) const { return k == SideKind::prefill ? lse_p : lse_d; }
  std::optional<Tensor>& out(SideKind k) { return k == SideKind::prefill ? out_p : out_d; }
  std::optional<Tensor>& lse(SideKind k) { return k == SideKind::prefill ? lse_p : lse_d; }
};

// How the run of a case went, as the runner saw it. Only `ran` has outputs worth judging on their own; the
// others are failures (launch_failed, guards_overwritten) or a declared limitation (not_supported) wherever
// they are judged, whatever outputs were recorded.
enum class RunStatus : std::uint8_t {
  ran,                 // the kernel ran and returned; its outputs are what it wrote
  not_supported,       // the kernel said it does not compute this (valid) case; nothing was launched
  launch_failed,       // the launch or the synchronisation after it failed (CUDA error, crash, invalid problem)
  guards_overwritten,  // it ran, but wrote outside its outputs (the guard bands around them changed)
};
std::string_view run_status_name(RunStatus);       // "ran" | "not-supported" | "launch-failed" | "guards-overwritten"
RunStatus run_status_from_name(std::string_view);  // throws std::invalid_argument naming the choices

struct RunRecord {
  RunStatus status = RunStatus::ran;
  std::string message;  // why not supported / what failed / which guards, e.g. "out_d: 12 guard elements overwritten"
  bool operator==(const RunRecord& o) const { return status == o.status && message == o.message; }
};

// Quiet-NaN payloads podcheck writes before a launch (distinct from the canonical NaN a computation yields).
inline constexpr std::uint32_t kPoisonF16 = 0x7E5Au;
inline constexpr std::uint32_t kPoisonBF16 = 0x7FA5u;
inline constexpr std::uint32_t kPoisonF32 = 0x7FC0DEADu;

}  // namespace podcheck

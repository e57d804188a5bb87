// A CPU emulator of a typical fused-attention kernel's rounding points (DESIGN §5), in float:
//   Q, K, V read in their storage dtype, K/V converted to the PV operand dtype (dtype_q), RoPE rotated in
//   float and rounded back to dtype_q (FA2 prefill style); logits q.k accumulated in fp32 and scaled by
//   sm_scale*log2(e) in fp32 (soft cap, ALiBi as the case asks); online softmax over KV tiles of
//   kEmuTileKv keys; P rounded to dtype_q before P.V; row sum accumulated from the rounded P; O accumulated
//   in fp32; split-KV partials (chunks of kEmuSplitChunk keys when a row sees at least two chunks) rounded
//   to dtype_o and merged by their LSE in fp32; output rounded to dtype_o; v_scale multiplied after the
//   kernel (fp32 multiply of the 16-bit output, rounded again).
// It is not a reference: it is what honest low-precision arithmetic gets wrong on this very case, and the
// calibrated tolerance scales from it. Results come back in double, in the reference's layout.
#pragma once

#include "reference/case.hpp"
#include "reference/reference.hpp"

namespace podcheck::validation {

inline constexpr int kEmuTileKv = 64;
inline constexpr int kEmuSplitChunk = 512;

// Emulated outputs of one side under the given semantics (as the reference would be asked).
SideResult emulate_side(const Case& c, SideKind side, const Semantics& sem = {});
PodResult emulate(const Case& c, const Semantics& sem = {});

// float rounding to a 16-bit float's precision (round to nearest even); float32 passes through.
float round_float_to(DType t, float x);

}  // namespace podcheck::validation

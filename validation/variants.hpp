// Semantic variants for diagnosis: "what would the reference give if the kernel had made this one choice
// differently?", each expressed as a rewrite of the case (the reference itself computes only SPEC.md and the
// profile's semantics, reference/reference.hpp). A variant whose rows or heads differ from the original's
// (ALiBi at true positions prepends rows, GQA h % H_kv permutes the query heads) carries the map back.
//   LSE base flipped                 Case::lse_base
//   causal aligned top-left          a custom mask with bit (i, j) = j <= i (the window still applies)
//   GQA h % H_kv instead of h / g    query heads (and ALiBi slopes) permuted so that head h reads kv head
//                                    h % H_kv; outputs permuted back
//   page table ignored               indices[k] = k (request r's pages read as indptr[r], indptr[r] + 1, ...)
//   window_left +- 1                 window_left + 1 / - 1 (where it stays >= 0)
//   window not applied               window_left = -1
//   causal diagonal off by one       a custom mask with bit (i, j) = j <= p_i + 1 / j <= p_i - 1
//   ALiBi at true positions          L - Q rows prepended to each request, so that row i's local index is its
//                                    position i + L - Q; the prepended rows are dropped (not tried when a
//                                    request has fewer keys than query rows)
//   sm_scale twice/once (ALiBi+cap)  the profile semantic flipped
//   per side: RoPE off/on, soft cap off, k_scale dropped or doubled, v_scale dropped or doubled, q_scale dropped,
//   causal off/on, custom mask ignored, default sm_scale: the parameter changed.
#pragma once

#include "reference/case.hpp"
#include "reference/reference.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace podcheck::validation {

struct Variant {
  std::string name;                   // e.g. "LSE in base e (natural log)"
  std::optional<SideKind> only_side;  // per-side parameter flips change one side only
  Case kase;                          // the rewritten case the reference runs on
  Semantics semantics;
  bool mask_only = false;             // the rewrite changes only which keys each row sees
  // Where the original's (row, head) lies in the rewritten case's result: row rows[side][row] (absent or
  // empty: the same row), head heads[head] (empty: the same head).
  std::map<SideKind, std::vector<std::int64_t>> rows;
  std::vector<int> heads;
};

// Every variant that changes something for this case.
std::vector<Variant> semantic_variants(const Case& c, const Semantics& sem);

// The reference of one side under a variant, in the original case's layout (rows and heads mapped back).
// Throws InvalidCase when the rewritten case is not a valid case (e.g. "pages in order" past the pool).
SideResult variant_reference(const Variant& v, SideKind side);

}  // namespace podcheck::validation

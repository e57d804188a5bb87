// One finding of a diagnosis, structured beside its sentence: what kind of pattern the errors have, where
// (side, tensor, ranges) and the line the console prints. CaseResult::findings holds them in diagnosis order
// (most specific first); CaseResult::diagnosis holds their texts, which expectations match by phrase.
#pragma once

#include "reference/case.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace podcheck::validation {

// An inclusive range [lo, hi] over one dimension of the evidence.
struct FindingRange {
  std::string dim;  // "request", "row" (within the request), "packed_row", "head", "head_in_group", "kv_head",
                    // "key" (KV positions), "boundary" (where a KV boundary B can lie), "kv_len", "rope_position",
                    // "page" (physical page id), "cells" (a count of (row, head) pairs: lo = hi)
  std::int64_t lo = 0, hi = 0;
  bool operator==(const FindingRange&) const = default;
};

struct Finding {
  // The pattern, one of (docs/VALIDATION.md lists them with their meaning):
  //   nonfinite-heads, nonfinite-requests, nonfinite-elements, single-element, empty-rows-written,
  //   rows-left-empty, mask-bound, page-permutation, lse-base, lse-sign, lse-offset, out-scale,
  //   semantic-match, heads-in-group, kv-head-group, heads, row-tile, rope-position, kv-boundary,
  //   kv-length-class, kv-page, lse-only, out-only, request, side-only, spread,
  //   semantic-partial, semantic-none, diagnosis-failed, guards-overwritten (from the run record)
  std::string kind;
  std::optional<SideKind> side;       // absent: case-wide (a semantic variant over both sides)
  std::string tensor;                 // "out_d", "out_d,lse_d", ... ("" when not about named tensors)
  std::vector<FindingRange> ranges;   // the evidence: where the errors are
  std::string text;                   // the diagnosis line
};

}  // namespace podcheck::validation

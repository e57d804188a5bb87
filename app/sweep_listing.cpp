// podcheck sweep (sweep_listing.hpp).
#include "app/sweep_listing.hpp"

#include "app/errors.hpp"
#include "fixtures/case_spec.hpp"
#include "fixtures/sweep.hpp"
#include "fixtures/sweep_axes.hpp"

#include <fmt/core.h>

namespace podcheck::app {

namespace {

Shard shard_of(const SweepOptions& o) {
  try {
    return parse_shard(o.shard);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

std::vector<std::string> ids_of(const SweepOptions& o) {
  const Shard s = shard_of(o);
  try {
    return list_tier(o.tier, s);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

void print_axes(const SweepOptions& o) {
  TierDef t;
  try {
    t = resolve_tier(o.tier);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const Expansion ex = expand_tier(t);
  double gflop = 0, gbytes = 0;
  for (const auto& s : ex.specs) {
    gflop += spec_flops(s) * 1e-9;
    gbytes += static_cast<double>(spec_input_bytes(s)) * 1e-9;
  }
  fmt::print("tier {}: {}\n", t.name, t.purpose);
  fmt::print("{} cases ({} in the block products, {} duplicates, {} excluded)\n", ex.specs.size(), ex.product_total,
             ex.duplicates, ex.product_total - ex.duplicates - ex.specs.size());
  fmt::print("~{:.1f} GFLOP of attention (masks ignored), ~{:.2f} GB of inputs\n\n", gflop, gbytes);
  for (std::size_t b = 0; b < t.blocks.size(); ++b) {
    const SweepBlock& blk = t.blocks[b];
    fmt::print("block {} ({} combinations, {} new cases){}{}\n", blk.name, blk.product_size(), ex.block_kept[b],
               blk.purpose.empty() ? "" : ": ", blk.purpose);
    for (const Axis& a : blk.axes) {
      std::string vals;
      for (const auto& v : a.values) vals += (vals.empty() ? "" : ", ") + v;
      fmt::print("  {:8} = {}\n", a.key, vals);
    }
  }
  fmt::print("\nexclusions (every tier; the first that applies removes the case):\n");
  for (const Exclusion& e : exclusions()) {
    auto it = ex.excluded.find(std::string(e.reason));
    fmt::print("  {:26} {:6} removed  {}\n", e.name, it == ex.excluded.end() ? 0 : it->second, e.reason);
  }
  for (const auto& [reason, n] : ex.excluded) {
    bool listed = false;
    for (const Exclusion& e : exclusions()) listed = listed || reason == e.reason;
    if (!listed) fmt::print("  {:26} {:6} removed  {}\n", "(structural)", n, reason);
  }
}

}  // namespace

int sweep_list(const SweepOptions& o) {
  for (const auto& id : ids_of(o)) fmt::print("{}\n", id);
  return 0;
}

int sweep_count(const SweepOptions& o) {
  fmt::print("{}\n", ids_of(o).size());
  return 0;
}

int sweep_axes(const SweepOptions& o) {
  print_axes(o);
  return 0;
}

std::vector<std::string> tier_choices() {
  std::vector<std::string> out;
  for (const auto& n : tier_names()) out.push_back(n);
  return out;
}

}  // namespace podcheck::app

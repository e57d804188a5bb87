// podcheck sweep list|count|axes: the cases of a tier (or of a sweep file), one id per line.
#include "cli/commands.hpp"
#include "fixtures/case_spec.hpp"
#include "fixtures/sweep.hpp"
#include "fixtures/sweep_axes.hpp"

#include <fmt/core.h>

#include <memory>
#include <string>

namespace podcheck::cli {

namespace {

struct SweepOptions {
  std::string tier;
  std::string shard = "0/1";
};

void add_tier_options(CLI::App* cmd, SweepOptions& o, bool with_shard) {
  std::string names;
  for (const auto& n : tier_names()) names += (names.empty() ? "" : ", ") + n;
  cmd->add_option("--tier", o.tier, "tier (" + names + ") or the path of a sweep file (docs/SWEEPS.md)")->required();
  if (with_shard) cmd->add_option("--shard", o.shard, "k/n: keep case i when i % n == k (0-based)");
}

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

void add_sweep(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("sweep", "list the cases of a tier or sweep file (ids, counts, axes)");
  cmd->require_subcommand(1);
  auto opts = std::make_shared<SweepOptions>();

  auto* list = cmd->add_subcommand("list", "print the canonical ids of a tier, one per line");
  add_tier_options(list, *opts, true);
  list->callback([opts] {
    for (const auto& id : ids_of(*opts)) fmt::print("{}\n", id);
  });

  auto* count = cmd->add_subcommand("count", "print the number of cases of a tier (or of one shard)");
  add_tier_options(count, *opts, true);
  count->callback([opts] { fmt::print("{}\n", ids_of(*opts).size()); });

  auto* axes = cmd->add_subcommand("axes", "print a tier's blocks, axes and exclusions (with reasons)");
  add_tier_options(axes, *opts, false);
  axes->callback([opts] { print_axes(*opts); });
  (void)result;
}

}  // namespace podcheck::cli

// podcheck sweep list|count|axes: the cases of a tier (or of a sweep file) (app/sweep_listing.hpp).
#include "cli/commands.hpp"

#include "app/sweep_listing.hpp"

#include <memory>
#include <string>

namespace podcheck::cli {

namespace {

void add_tier_options(CLI::App* cmd, app::SweepOptions& o, bool with_shard) {
  std::string names;
  for (const auto& n : app::tier_choices()) names += (names.empty() ? "" : ", ") + n;
  cmd->add_option("--tier", o.tier, "tier (" + names + ") or the path of a sweep file (docs/SWEEPS.md)")->required();
  if (with_shard) cmd->add_option("--shard", o.shard, "k/n: keep case i when i % n == k (0-based)");
}

}  // namespace

void add_sweep(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("sweep", "list the cases of a tier or sweep file (ids, counts, axes)");
  cmd->require_subcommand(1);
  auto opts = std::make_shared<app::SweepOptions>();
  auto* list = cmd->add_subcommand("list", "print the canonical ids of a tier, one per line");
  add_tier_options(list, *opts, true);
  list->callback([opts, &result] { result.exit_code = app::sweep_list(*opts); });
  auto* count = cmd->add_subcommand("count", "print the number of cases of a tier (or of one shard)");
  add_tier_options(count, *opts, true);
  count->callback([opts, &result] { result.exit_code = app::sweep_count(*opts); });
  auto* axes = cmd->add_subcommand("axes", "print a tier's blocks, axes and exclusions (with reasons)");
  add_tier_options(axes, *opts, false);
  axes->callback([opts, &result] { result.exit_code = app::sweep_axes(*opts); });
}

}  // namespace podcheck::cli

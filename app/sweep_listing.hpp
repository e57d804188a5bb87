// `podcheck sweep list|count|axes`: the cases of a tier (or of a sweep file): ids one per line, their number,
// or the tier's blocks, axes and exclusions with their reasons.
#pragma once

#include <string>
#include <vector>

namespace podcheck::app {

struct SweepOptions {
  std::string tier;
  std::string shard = "0/1";
};
int sweep_list(const SweepOptions& o);   // one id per line
int sweep_count(const SweepOptions& o);
int sweep_axes(const SweepOptions& o);   // blocks, axes, exclusions (shard ignored)
std::vector<std::string> tier_choices(); // the built-in tier names, for --help

}  // namespace podcheck::app

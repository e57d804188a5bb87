// Helpers shared by the trace and importer tests.
#pragma once

#include "traces/trace.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace podcheck::test {

// The traces keyed by case id (importers and readers return them in file order).
inline std::map<std::string, Trace> traces_by_id(std::vector<Trace> ts) {
  std::map<std::string, Trace> m;
  for (auto& t : ts) m.emplace(t.kase.id, std::move(t));
  return m;
}

}  // namespace podcheck::test

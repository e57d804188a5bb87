// Helpers shared by the replay and validate commands (cli/cmd_replay.cpp, cli/cmd_validate.cpp): report
// options, output files and the exit status. Header-only on purpose: only the CLI includes it.
#pragma once

#include "validation/report.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace podcheck::validation {

struct ReportFiles {
  std::string json, junit;
  bool force = false;
  // Refuses up front (before a long run) to replace existing report files without --force.
  void check() const {
    for (const auto& p : {json, junit})
      if (!p.empty() && std::filesystem::exists(p) && !force)
        throw std::invalid_argument(fmt::format("{}: exists (use --force to replace it)", p));
  }
  void write(const std::vector<CaseResult>& results, const Summary& s) const {
    if (json.empty() && junit.empty()) return;
    const nlohmann::json rep = report_json(results, s);
    if (!json.empty()) write_text_file(json, rep.dump(2) + "\n", force);
    if (!junit.empty()) {
      std::vector<nlohmann::json> cases(rep["cases"].begin(), rep["cases"].end());
      write_text_file(junit, junit_xml(cases, s), force);
    }
  }
};

}  // namespace podcheck::validation

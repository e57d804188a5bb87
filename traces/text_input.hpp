// A small text input file (JSON, JSON lines) read whole; an unreadable one is a FormatError naming it.
#pragma once

#include "fixtures/fixture_io.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace podcheck {

inline std::string read_text_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw FormatError("cannot read '" + p.string() + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace podcheck

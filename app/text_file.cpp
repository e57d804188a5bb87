#include "app/text_file.hpp"

#include "app/errors.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <system_error>
#include <unistd.h>

namespace podcheck::app {

namespace fs = std::filesystem;

void check_writable_target(const std::string& path, bool force) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  if (fs::exists(st)) {
    if (!fs::is_regular_file(fs::status(path, ec)))
      throw UsageError(fmt::format("{}: exists and is not a regular file (refusing to replace it)", path));
    if (!force) throw UsageError(fmt::format("{}: exists (use --force to replace it)", path));
  }
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, ec)) throw UsageError(fmt::format("{}: folder '{}' does not exist", path, dir.string()));
  if (::access(dir.c_str(), W_OK) != 0) throw UsageError(fmt::format("{}: folder '{}' is not writable", path, dir.string()));
}

void write_text_file(const std::string& path, const std::string& text, bool force) {
  check_writable_target(path, force);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(fmt::format("{}: cannot write", tmp));
    out << text;
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw InputError(fmt::format("{}: write failed", tmp));
    }
  }
  fs::rename(tmp, path);
}

}  // namespace podcheck::app

// No GPU: the kernel version recorded in trace provenance names the tree that was compiled. The string is
// generated at build time (cmake/PodcheckGitDescribe.cmake); here it is compared with a fresh
// `git describe` of the source tree, so a stamp taken at configure time, or a stale binary, fails.
#include "kernels/pod/pod_launch.hpp"
#include "testing/catch.hpp"

#include <cstdio>
#include <filesystem>
#include <string>

namespace {
// stdout of `cmd` with trailing newlines removed; false if it could not run or exited non-zero.
bool capture(const std::string& cmd, std::string& out) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return false;
  char buf[256];
  out.clear();
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  const int rc = pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return rc == 0;
}
}  // namespace

TEST_CASE("provenance: build_version carries git describe of the tree it was built from", "[kernels][host][provenance]") {
  const std::string src = PODCHECK_SOURCE_DIR;
  std::string describe;
  if (!std::filesystem::exists(src + "/.git") ||
      !capture("git -C '" + src + "' describe --always --dirty --tags 2>/dev/null", describe) || describe.empty())
    PODCHECK_SKIP("the source tree is not a git checkout (or git is missing): nothing to compare the stamp with");
  INFO("git describe now: " << describe << "; stamped at build: " << podcheck::kernels::git_describe());
  CHECK(std::string(podcheck::kernels::git_describe()) == describe);
  using namespace podcheck::kernels;
  CHECK(build_version() == std::string(kKernelName) + " " + kKernelVersion + " (git " + describe + ")");
}

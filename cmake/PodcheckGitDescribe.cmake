# Writes OUT_FILE, a C++ source defining podcheck::kernels::git_describe(), from `git describe --always
# --dirty --tags` of SOURCE_DIR, run at build time (a custom target, every build), so the version recorded
# in trace provenance is that of the tree being compiled, not of the tree at configure time. Without git
# (a copy of the tree with no .git), the environment variable PODCHECK_GIT_DESCRIBE, else "unknown".
# The file is rewritten only when the string changes, so an unchanged tree recompiles nothing.
#   cmake -DSOURCE_DIR=<src> -DOUT_FILE=<file.cpp> -P PodcheckGitDescribe.cmake
execute_process(COMMAND git describe --always --dirty --tags
  WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE describe
  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR describe STREQUAL "")
  set(describe "unknown")
  if(DEFINED ENV{PODCHECK_GIT_DESCRIBE})
    set(describe "$ENV{PODCHECK_GIT_DESCRIBE}")
  endif()
endif()
string(REGEX REPLACE "[\"\\\\]" "" describe "${describe}")
set(text "// Generated at build time by cmake/PodcheckGitDescribe.cmake; do not edit.
namespace podcheck::kernels {
const char* git_describe() { return \"${describe}\"; }
}  // namespace podcheck::kernels
")
set(old "")
if(EXISTS "${OUT_FILE}")
  file(READ "${OUT_FILE}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT_FILE}" "${text}")
endif()

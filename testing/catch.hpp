// The one place that knows whether Catch2 is v2 (Debian 12: catch2/catch.hpp) or v3 (Ubuntu 24.04:
// catch2/catch_all.hpp). Test sources include "testing/catch.hpp" and nothing else from Catch2.
#pragma once

#if PODCHECK_CATCH_MAJOR >= 3
#include <catch2/catch_all.hpp>
// v2 puts Approx in the global namespace, v3 only in Catch: one spelling for both
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif

#include <cstdio>
#include <cstdlib>
#include <string>

// A matcher of a string that holds `part` (case-sensitive). v2 calls it Catch::Matchers::Contains (Catch::Contains),
// v3 Catch::Matchers::ContainsSubstring; test sources write HasSubstring. (Until stop 37 they wrote Catch::Contains,
// which v3 lacks: every test executable but kernels_tests, the only one the GPU machine builds, failed on v3.)
#if PODCHECK_CATCH_MAJOR >= 3
inline auto HasSubstring(const std::string& part) { return Catch::Matchers::ContainsSubstring(part); }
#else
inline auto HasSubstring(const std::string& part) { return Catch::Matchers::Contains(part); }
#endif

// PODCHECK_SKIP(msg): report this test case as skipped, never as passed. ctest maps exit code 4 to
// "Skipped" (SKIP_RETURN_CODE 4 in cmake/PodcheckTesting.cmake); every test case runs in its own
// process there, so leaving with 4 skips exactly this case (Catch2 v2 has no SKIP; one macro serves both).
#define PODCHECK_SKIP(msg)                                                                         \
  do {                                                                                             \
    std::fprintf(stderr, "skipped: %s\n", msg);                                                    \
    std::fflush(stderr);                                                                           \
    std::exit(4);                                                                                  \
  } while (0)

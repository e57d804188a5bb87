# Test helpers. Catch2 v2 (catch2/catch.hpp) and v3 (catch2/catch_all.hpp) are both accepted;
# testing/catch.hpp hides the difference from test sources.
if(NOT PODCHECK_BUILD_TESTS)
  return()
endif()
enable_testing()
find_package(Catch2 REQUIRED)
if(Catch2_VERSION VERSION_GREATER_EQUAL 3)
  set(PODCHECK_CATCH_MAJOR 3)
else()
  set(PODCHECK_CATCH_MAJOR 2)
endif()
message(STATUS "podcheck: Catch2 ${Catch2_VERSION} (v${PODCHECK_CATCH_MAJOR})")

add_library(podcheck_catch_main STATIC ${PROJECT_SOURCE_DIR}/testing/catch_main.cpp)
target_compile_features(podcheck_catch_main PUBLIC cxx_std_20)
target_include_directories(podcheck_catch_main PUBLIC ${PROJECT_SOURCE_DIR})
target_compile_definitions(podcheck_catch_main PUBLIC PODCHECK_CATCH_MAJOR=${PODCHECK_CATCH_MAJOR})
target_link_libraries(podcheck_catch_main PUBLIC Catch2::Catch2)
# Catch2 v2's runner is its single header compiled once: 14 s at -O2, 40 s under the sanitizers at -O1, a few
# seconds at -O0; it runs for microseconds per test, so it is not optimised (still instrumented)
set_source_files_properties(${PROJECT_SOURCE_DIR}/testing/catch_main.cpp PROPERTIES COMPILE_OPTIONS -O0)

# Path of the system python with h5py + numpy (Debian: /usr/bin/python3 with python3-h5py).
find_program(PODCHECK_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT PODCHECK_PYTHON3)
  find_program(PODCHECK_PYTHON3 NAMES python3)
endif()

# podcheck_add_test(NAME [COMPUTES] SOURCES a.cpp b.cpp LIBS lib... LABELS l...)
# One Catch2 executable per module; ctest runs it as one test per Catch2 test case so that a
# failure names the case. Tests tagged [gpu] skip with exit code 4 where no GPU is present.
# COMPUTES: the executable's own checks do heavy arithmetic (reference_tests: 50-digit sums, every float midpoint).
function(podcheck_add_test name)
  cmake_parse_arguments(T "COMPUTES" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE podcheck_catch_main ${T_LIBS})
  target_compile_definitions(${name} PRIVATE
    PODCHECK_SOURCE_DIR="${PROJECT_SOURCE_DIR}" PODCHECK_PYTHON3="${PODCHECK_PYTHON3}")
  # A test executable's own sources are the checks; the code under test is in the libraries, built at the build
  # type's level. In Release (and MinSizeRel) they are compiled at -O1 (gcc: app_tests' unity file 34 s at -O3,
  # 20 s at -O1); in the sanitizer build at -O0 (podcheck_sanitizer_unoptimized), except for a COMPUTES executable,
  # whose checks ran ten times slower at -O0.
  if(NOT PODCHECK_SANITIZE)
    target_compile_options(${name} PRIVATE "$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CONFIG:Release,MinSizeRel>>:-O1>")
  elseif(NOT T_COMPUTES)
    podcheck_sanitizer_unoptimized(${name})
  endif()
  if(PODCHECK_CATCH_MAJOR EQUAL 3)
    include(Catch)
  else()
    include(Catch OPTIONAL RESULT_VARIABLE _catch_found)
    if(NOT _catch_found)
      include(${Catch2_DIR}/Catch.cmake)
    endif()
  endif()
  catch_discover_tests(${name} TEST_PREFIX "${name}:" PROPERTIES LABELS "${T_LABELS}" SKIP_RETURN_CODE 4)
endfunction()

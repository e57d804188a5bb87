# Sanitizer and fuzzing builds (each in a build folder of its own, e.g. build-asan/):
#   -DPODCHECK_SANITIZE=ON   every C/C++ target with ASan + UBSan (no recovery: a report fails the test)
#   -DPODCHECK_FUZZ=ON       also the libFuzzer targets in fuzz/ and coverage instrumentation of our code;
#                            needs clang (Debian: clang-14, libclang-rt-14-dev, libomp-14-dev), implies SANITIZE
# CUDA is not instrumented: configure these builds with -DPODCHECK_ENABLE_CUDA=OFF.
option(PODCHECK_SANITIZE "Build with AddressSanitizer + UndefinedBehaviorSanitizer" OFF)
option(PODCHECK_FUZZ "Build the libFuzzer targets in fuzz/ (clang; implies PODCHECK_SANITIZE)" OFF)
set(PODCHECK_FUZZ_RUNS 20000 CACHE STRING "Executions per fuzz target when ctest runs it")
set(PODCHECK_FUZZ_SECONDS 60 CACHE STRING "Time limit per fuzz target when ctest runs it (whichever comes first)")

if(PODCHECK_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "PODCHECK_FUZZ needs clang (e.g. -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14)")
  endif()
  set(PODCHECK_SANITIZE ON)
endif()
# UBSan's vptr check (a member call on an object of the wrong dynamic type) is left out: podcheck has two small class
# hierarchies (h5.hpp, safetensors.hpp), and the check's RTTI code took 18 % of the compile of the largest file
if(PODCHECK_SANITIZE)
  set(_san -fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${_san}>")
  add_link_options("$<$<LINK_LANGUAGE:C,CXX>:-fsanitize=address,undefined>")
endif()
if(PODCHECK_FUZZ)
  # The coverage instrumentation (-fsanitize=fuzzer-no-link) is given to the fuzz targets and the libraries they link
  # only (fuzz/CMakeLists.txt), not to app/, cli/ and the test executables: those are not fuzzed, and their counters
  # and comparison callbacks cost compile and test time (app_tests' unity file: 45 s with them, 40 s without).
  # The triage of fuzz artifacts tells the sanitizer runtime from podcheck's code in a report by the source line (a
  # named frame of the executable without one is the runtime: fuzz/long_run.py first_relevant_frame; the workers
  # place frames by address instead), so our code always carries line tables, also in a build type that would have
  # none (Debug and RelWithDebInfo have them already)
  if(NOT CMAKE_BUILD_TYPE MATCHES "^(Debug|RelWithDebInfo)$")
    add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-gline-tables-only>")
  endif()
endif()

# podcheck_sanitizer_fast_source(SOURCE [NO_FUZZ_COVERAGE]): a source whose loops are most of the tests' time in the
# sanitizer build is compiled there at -O2 (the build's -O1 neither vectorises nor keeps them in registers); ASan and
# UBSan still check it, and the arithmetic is the same (no fast-math, no FMA contraction on the baseline x86-64
# target). NO_FUZZ_COVERAGE: also without the fuzz build's coverage instrumentation, whose per-edge counters and
# comparison callbacks keep loops from vectorising; only for code no reader calls (the fuzz workers take an
# uninstrumented frame of the executable for the sanitizer runtime: fuzz_common.hpp CodeMap). Elsewhere a no-op.
function(podcheck_sanitizer_fast_source source)
  cmake_parse_arguments(F "NO_FUZZ_COVERAGE" "" "" ${ARGN})
  if(NOT PODCHECK_SANITIZE)
    return()
  endif()
  set(_opts -O2)
  if(F_NO_FUZZ_COVERAGE AND PODCHECK_FUZZ)
    list(APPEND _opts -fno-sanitize=fuzzer-no-link)
  endif()
  set_source_files_properties(${source} PROPERTIES COMPILE_OPTIONS "${_opts}")
endfunction()

# podcheck_sanitizer_unoptimized(TARGET): a target whose own code is not where the sanitizer build's test time goes
# (option parsing, job loops, reports, and the test executables' checks) is compiled there at -O0, still
# instrumented: clang-14 under ASan + UBSan takes about half the CPU time of the build's -O1 (app's first unity file
# 40 s -> 22 s, traces_tests' 62 s -> 24 s). The readers and the reference keep -O1 (the fuzz runs and the
# computing tests spend their time there). Elsewhere a no-op.
function(podcheck_sanitizer_unoptimized target)
  if(PODCHECK_SANITIZE)
    target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:C,CXX>:-O0>")
  endif()
endfunction()

// The SanitizerCoverage state the fuzz targets' worker ships back to libFuzzer (fuzz/fuzz_common.hpp): the
// bounds of the inline 8-bit counters (the linker's __start_/__stop_ symbols of section __sancov_cntrs) and
// the stack-depth word. This file is compiled WITHOUT coverage instrumentation (fuzz/CMakeLists.txt): in an
// instrumented file, a declaration of these names makes the SanitizerCoverage pass rename its own (to
// __start___sancov_cntrs.1, never defined), and the module's counters then never reach libFuzzer (seen: no
// "Loaded 1 modules" line, "ft: 1" and no "cov:" after the seeds).
#include <stdint.h>

extern uint8_t __start___sancov_cntrs[] __attribute__((weak, visibility("hidden")));
extern uint8_t __stop___sancov_cntrs[] __attribute__((weak, visibility("hidden")));
extern __thread uintptr_t __sancov_lowest_stack;

uint8_t* podcheck_fuzz_counters_begin(void) { return __start___sancov_cntrs; }
uint8_t* podcheck_fuzz_counters_end(void) { return __stop___sancov_cntrs; }
uintptr_t podcheck_fuzz_lowest_stack(void) { return __sancov_lowest_stack; }
void podcheck_fuzz_set_lowest_stack(uintptr_t sp) { __sancov_lowest_stack = sp; }

// The PC table (-fsanitize-coverage=pc-table, part of -fsanitize=fuzzer): a (PC, flags) pair per instrumented
// basic block, absolute addresses. Every function compiled with coverage has its entry block here; the
// sanitizer runtime and libFuzzer, linked into the same executable, have none (fuzz_common.hpp CodeMap).
extern uintptr_t __start___sancov_pcs[] __attribute__((weak, visibility("hidden")));
extern uintptr_t __stop___sancov_pcs[] __attribute__((weak, visibility("hidden")));
const uintptr_t* podcheck_fuzz_pcs_begin(void) { return __start___sancov_pcs; }
const uintptr_t* podcheck_fuzz_pcs_end(void) { return __stop___sancov_pcs; }

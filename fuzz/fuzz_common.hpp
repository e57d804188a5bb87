// Shared by the libFuzzer targets of podcheck's HDF5 readers (fuzz/fuzz_*.cpp, built with -DPODCHECK_FUZZ=ON).
//
// How a fuzz target lives with the crash isolation (fixtures/isolated_read.hpp): libhdf5 1.10 crashes on some
// corrupt files, and in production those crashes happen in a child process. A target that ran the reader in
// the fuzzer's own process would stop at the first libhdf5 crash and report the library's bug as ours. So each
// input is read by a worker: a fork of the fuzzer, kept across inputs (a new one after a crash or hang and
// every 1,000 inputs), that runs the reader and every check on the result (the wire round trip of each case,
// a message for each refusal), restarts libhdf5, and reports how the input ended:
//   clean            the worker ships its SanitizerCoverage counters back (below) and libFuzzer sees the
//                    coverage of the read as if it had happened in its own process;
//   libhdf5 crash    a fatal signal or sanitizer report with a libhdf5 frame on the stack, or a hang there (over
//   or hang          Worker::kHangMilliseconds of CPU time): what production turns into "the file is corrupt";
//                    the input is counted and skipped, no coverage;
//   podcheck crash   a sanitizer report or fatal signal with no libhdf5 frame, a failed check on the result, a
//   or leak          report begun and not finished within reply_ms() (the worker killed), or a leak
//                    LeakSanitizer finds in the worker: fresh workers' second opinion (crashes), then the input
//                    is read again in this process, where libFuzzer writes the crash artifact and the
//                    sanitizers their report, and the run fails even if that second read does not reproduce it
//                    (libhdf5's memory-dependent behaviour), unless a fresh worker called the crash libhdf5's;
//   podcheck hang    the same limit reached in our own code, a hung worker whose SIGABRT handler did not
//   or unknown hang  answer within kAbortReplyMs, or a worker silent for reply_ms() after saying its read ended
//                    (killed): read again by a fresh worker with kSlowMilliseconds (a slow input is no bug);
//                    that hanging too, the run fails on it. Every wait on a worker is
//                    bounded (Worker::run): one input takes at most about 80 s of wall time (two slow re-reads
//                    after a crash of ours), and the fuzz tests' libFuzzer -timeout of 120 s is only a backstop.
// No input the worker read cleanly is read in process any more (that second read took half the time, and
// libhdf5 crashed in it now and then on inputs the worker had read cleanly: its crashes depend on memory).
//
// Coverage: -fsanitize=fuzzer puts one 8-bit counter per edge into the ELF section __sancov_cntrs (all of
// podcheck's code is linked statically into the target: one module; libFuzzer prints "Loaded 1 modules (N
// inline 8-bit counters)", and this header prints the same N). The worker has the same addresses (a fork).
// Before each input it zeroes its counters, after it copies them into a MAP_SHARED buffer made before the
// fork; the parent adds them (saturating) into its own, which libFuzzer zeroed before calling
// LLVMFuzzerTestOneInput and reads after it returns. The deepest stack the read reached (__sancov_lowest_stack,
// libFuzzer's stack-depth feature) comes back the same way. Not shipped: the operands of comparisons
// (-fsanitize-coverage=trace-cmp), which libFuzzer keeps in private tables to suggest mutations; they guide
// mutation only and decide nothing about coverage or crashes. ctest's fuzz-coverage:NAME compares the
// coverage the seeds give through the worker with a read in process (PODCHECK_FUZZ_IN_PROCESS=1).
//
// Leaks: LeakSanitizer only looks at exit, and the worker never exits normally. So the worker records the
// heap blocks allocated during each input (InputAllocations) and runs a leak check when one that has no
// libhdf5 frame on its allocation stack outlived the input (libhdf5's own are suppressed, fuzz/lsan.supp),
// and every 256 inputs in any case. Checking whenever mallocs outnumbered frees, as libFuzzer does in its own
// process, ran a 10-20 ms check on most inputs (libhdf5 leaks on most corrupt files) and cut the rate by
// two thirds. ctest's fuzz-planted-{fault,leak,abort} plant a bug in the reader's callback and want it reported.
#pragma once

#include "fixtures/isolated_read.hpp"

#include <hdf5.h>
#include <link.h>
#include <dlfcn.h>
#include <sanitizer/allocator_interface.h>
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#include <sanitizer/lsan_interface.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// fuzz/sancov_bounds.c (not instrumented, it says why): the inline 8-bit counters' section, and libFuzzer's
// stack-depth word (the lowest stack pointer instrumented code has seen on this thread).
extern "C" std::uint8_t* podcheck_fuzz_counters_begin();
extern "C" std::uint8_t* podcheck_fuzz_counters_end();
extern "C" std::uintptr_t podcheck_fuzz_lowest_stack();
extern "C" void podcheck_fuzz_set_lowest_stack(std::uintptr_t sp);

namespace podcheck::fuzz {

// The harness's hot paths (the malloc and free hooks, run on every allocation of a read, about 3,400 per input;
// the check for a live block of ours after it; the coverage merge over every counter after it) are not
// instrumented: their edges and comparisons are the harness's, not the reader's coverage, and they guide no
// mutation. Instrumented (8-bit counters, trace-cmp callbacks, ASan checks) they took 20 % of a replay's CPU
// samples (perf record of 600 inputs of the trace reader: the hooks 15 %, the merge 5 %).
#define PODCHECK_FUZZ_HARNESS_HOT __attribute__((no_sanitize("address", "undefined", "coverage")))

// The harness itself could not go on (a system call failed): one line saying which and why, then abort, so
// that the run fails with its reason in the log (CI's tail, scripts/ctest_digest.py) and not as a bare signal.
[[noreturn]] inline void harness_failure(const char* what, int err = errno) {
  std::fprintf(stderr, "podcheck-fuzz: harness failure: %s: %s\n", what, std::strerror(err));
  std::abort();
}

// The input as a file in /dev/shm (memory; HDF5 needs a real path, so no memfd), removed at exit.
struct InputFile {
  std::string path;
  int fd = -1;
  InputFile() {
    const char* dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    path = std::string(dir) + "/podcheck-fuzz-" + std::to_string(::getpid()) + ".h5";
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) harness_failure(("cannot create the input file " + path).c_str());
  }
  ~InputFile() { ::unlink(path.c_str()); }
};

inline const std::string& input_file(const std::uint8_t* data, std::size_t size) {
  static InputFile f;
  if (::ftruncate(f.fd, 0) != 0) harness_failure("cannot truncate the input file");
  std::size_t off = 0;
  while (off < size) {
    ssize_t n = ::pwrite(f.fd, data + off, size - off, static_cast<off_t>(off));
    if (n <= 0) harness_failure("cannot write the input file", n == 0 ? ENOSPC : errno);
    off += static_cast<std::size_t>(n);
  }
  return f.path;
}

// libhdf5 keeps freed structures of each type on a free list, up to 64 KB per list by default; a larger one goes
// back to malloc. Every file open callocs the metadata cache's structure, over 512 KB (its hash table), so every
// input's open got fresh pages from ASan's allocator and faulted them in (perf: 60 % of the worker's page faults
// under H5FL_reg_calloc). With 4 MB per list and 16 MB in all for those, and the array and block lists bounded as
// well, it is reused: on 1,427 corpus inputs of the trace reader 12.4-13.2 s instead of 16.7-18.8 s, page faults
// 0.49 M instead of 1.09 M, the same libhdf5 crashes and hangs. (Unlimited lists were no faster, and would keep
// whatever a corrupt file made the library allocate.) Set at the first input and after every library restart.
inline void keep_hdf5_free_lists() {
  if (H5set_free_list_limits(16 << 20, 4 << 20, 4 << 20, 256 << 10, 16 << 20, 1 << 20) < 0)
    harness_failure("H5set_free_list_limits failed", 0);
}

// A fresh HDF5 library for the next input. In production every untrusted file is read by a fresh child
// process; here one process reads input after input from the same path, and libhdf5 keeps state across
// them (a corrupt file it failed to close stays open, and a later open of the same inode shares its stale
// metadata: seen crashing in H5C_protect on a valid-looking input). Closing every identifier and starting
// the library again gives each input the state a child would have. That is done only when the input left an
// identifier open (a file, group, dataset, named type or attribute): with none open no file's metadata can be shared,
// and what else survives is libhdf5's free lists. Restarting after every input freed them too, so each input's
// blocks were fresh memory (ASan's quarantine holds freed blocks back): page faults, and a malloc hook call per
// block. Measured on the same 1,427 inputs, two runs each: 22.3 / 24.8 s with a restart after every input,
// 18.3 / 22.5 s with this; the same libhdf5 crashes and hangs.
inline void reset_hdf5() {
  if (H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0) return;
  H5close();
  H5open();
  keep_hdf5_free_lists();
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

// How the inputs ended; the worker's part lives in shared memory, so it survives the worker.
struct Counts {
  long files_refused = 0, cases_read = 0, cases_refused = 0, leak_checks = 0;
  long clean = 0, clean_us = 0, slowest_clean_us = 0, slow_clean = 0;  // the worker's inputs read to the end
  long allocations = 0;  // recorded by the worker's malloc hook during inputs
  long unresponsive = 0;  // hung workers that did not answer SIGABRT (killed; the input read again)
  long stopped_after_saying = 0;  // workers silent for reply_ms() after 'd' or 'R' (killed; the input read again)
};

// A bug planted for the harness's self-tests (ctest fuzz-planted-*): PODCHECK_FUZZ_PLANT=fault, leak or abort
// makes the callback that the reader calls for each case id of a file (ReadOptions::want, podcheck's code, on the
// reader's stack, no libhdf5 frame) read past a heap block, leak one, or abort.
inline std::function<bool(const std::string&)> planted_bug() {
  const char* p = std::getenv("PODCHECK_FUZZ_PLANT");
  if (!p) return nullptr;
  if (std::strcmp(p, "fault") == 0)
    return [](const std::string& id) {
      char* b = static_cast<char*>(std::malloc(id.size() + 1));
      std::memcpy(b, id.c_str(), id.size() + 1);
      const volatile char past = b[id.size() + 1];  // one past the block: heap-buffer-overflow
      (void)past;
      std::free(b);
      return true;
    };
  if (std::strcmp(p, "leak") == 0)
    return [](const std::string& id) {
      static void* volatile sink;
      sink = std::malloc(64 + id.size());  // dropped below: nothing points at it any more
      sink = nullptr;
      return true;
    };
  if (std::strcmp(p, "abort") == 0)  // a fatal signal of ours, no sanitizer report: the worker prints its stack
    return [](const std::string&) -> bool { std::abort(); };
  if (std::strcmp(p, "library") == 0)
    return [](const std::string&) {
      // libhdf5 copies an 8-double attribute into a 1-byte heap block: the sanitizer's report (in the memcpy
      // interceptor) has libhdf5's frame first, so the input is a libhdf5 crash, counted and skipped
      const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
      H5Pset_fapl_core(fapl, 4096, 0);
      const hid_t f = H5Fcreate("podcheck-planted.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
      const hsize_t n = 8;
      const hid_t sp = H5Screate_simple(1, &n, nullptr);
      const hid_t a = H5Acreate2(f, "x", H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT);
      const double v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
      H5Awrite(a, H5T_NATIVE_DOUBLE, v);
      char* small = static_cast<char*>(std::malloc(1));
      H5Aread(a, H5T_NATIVE_DOUBLE, small);  // heap-buffer-overflow inside libhdf5
      std::free(small);
      H5Aclose(a);
      H5Sclose(sp);
      H5Fclose(f);
      H5Pclose(fapl);
      return true;
    };
  if (std::strcmp(p, "library-strdup") == 0)
    return [](const std::string&) {
      // libhdf5 strdup()s a link-access prefix with no terminator: the report's first frame is the sanitizer's
      // strdup interceptor, printed under the libc name ("in strdup", no source line), then libhdf5's
      // H5MM_xstrdup (a trace-reader campaign stopped on such a report: H5MM_strdup of a corrupt attribute name)
      char* prefix = static_cast<char*>(std::malloc(8));
      std::memset(prefix, 'a', 8);
      const hid_t lapl = H5Pcreate(H5P_LINK_ACCESS);
      H5Pset_elink_prefix(lapl, prefix);  // heap-buffer-overflow inside libhdf5 (the strdup interceptor)
      H5Pclose(lapl);
      std::free(prefix);
      return true;
    };
  std::fprintf(stderr, "podcheck-fuzz: PODCHECK_FUZZ_PLANT must be 'fault', 'leak', 'abort', 'library' or "
                       "'library-strdup'\n");
  std::abort();
}

// One read of the input and every check of its result. A failed check aborts: in the worker that is a crash
// with no libhdf5 frame on the stack, i.e. ours.
template <class T, class Read, class Encode, class Decode>
void read_and_check(const std::string& path, const Read& read, const Encode& encode, const Decode& decode,
                    Counts& counts) {
  static const auto plant = planted_bug();
  FileRead<T> r = read(path, ReadOptions{ReadMode::in_process, plant});
  static const bool verbose = std::getenv("PODCHECK_FUZZ_VERBOSE") != nullptr;
  if (verbose && !r.ok()) std::fprintf(stderr, "podcheck-fuzz: %s\n", r.error.c_str());
  if (!r.ok()) ++counts.files_refused;
  for (const CaseRead<T>& c : r.cases) {
    if (!c.ok()) {
      ++counts.cases_refused;
      if (verbose) std::fprintf(stderr, "podcheck-fuzz: %s\n", c.error.c_str());
      if (c.failure != ReadFailure::refused || c.error.empty()) {
        std::fprintf(stderr, "podcheck-fuzz: a case failed with no refusal message: %s\n", c.error.c_str());
        std::abort();
      }
      continue;
    }
    ++counts.cases_read;
    const std::string bytes = encode(*c.value);
    if (encode(decode(bytes)) != bytes) {  // the wire loses nothing
      std::fprintf(stderr, "podcheck-fuzz: case '%s' changed through the wire encoding\n", c.id.c_str());
      std::abort();
    }
  }
}

// The heap blocks allocated while the worker reads an input and not freed by its end (malloc/free hooks,
// installed once, recording only in a worker), in memory of their own: the hooks must not allocate. A full
// leak check (10-20 ms: LeakSanitizer scans every global and the heap) is only worth running when one of them
// was allocated by podcheck's code; libhdf5 leaves blocks behind on most corrupt files, and those are
// suppressed anyway (fuzz/lsan.supp: a libhdf5 frame in the allocation stack). The hooks cost about 10 % of
// the worker's time (a walk up the frame pointers to tell libhdf5's allocations apart in the hook does not
// work: the sanitizer runtime has no frame pointers).
struct InputAllocations {
  static constexpr std::size_t kSlots = std::size_t{1} << 17;  // a power of two; 2 MB
  static constexpr std::size_t kMaxInserts = kSlots / 2;        // more in one input: "unknown", check fully
  struct Slot {
    std::uintptr_t ptr;  // kGone: freed
    std::uint32_t generation;
  };
  static constexpr std::uintptr_t kGone = 1;
  static inline Slot* slots = nullptr;
  static inline std::uint32_t* inserted = nullptr;  // the slots written in this input, in order
  static inline std::size_t n_inserted = 0;
  static inline long live = 0;                      // of them, not freed
  static inline std::uint32_t generation = 1;
  static inline bool recording = false, overflow = false;
  static inline std::uintptr_t hdf5_lo = 0, hdf5_hi = 0;  // libhdf5's mapped range

  PODCHECK_FUZZ_HARNESS_HOT static std::size_t hash(std::uintptr_t p) { return static_cast<std::size_t>((p * 0x9E3779B97F4A7C15ull) >> 46); }
  PODCHECK_FUZZ_HARNESS_HOT static void on_malloc(const volatile void* p, std::size_t) {
    if (!recording) return;
    if (n_inserted == kMaxInserts) {
      overflow = true;
      return;
    }
    const auto key = reinterpret_cast<std::uintptr_t>(p);
    for (std::size_t i = hash(key) & (kSlots - 1);; i = (i + 1) & (kSlots - 1))
      if (slots[i].generation != generation) {
        slots[i] = {key, generation};
        inserted[n_inserted++] = static_cast<std::uint32_t>(i);
        ++live;
        return;
      }
  }
  PODCHECK_FUZZ_HARNESS_HOT static void on_free(const volatile void* p) {
    if (!recording) return;
    const auto key = reinterpret_cast<std::uintptr_t>(p);
    for (std::size_t i = hash(key) & (kSlots - 1); slots[i].generation == generation; i = (i + 1) & (kSlots - 1))
      if (slots[i].ptr == key) {
        slots[i].ptr = kGone;
        --live;
        return;
      }
  }
  static void install() {
    void* m = ::mmap(nullptr, kSlots * sizeof(Slot) + kMaxInserts * sizeof(std::uint32_t), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) harness_failure("cannot map the allocation table");
    slots = static_cast<Slot*>(m);
    inserted = reinterpret_cast<std::uint32_t*>(slots + kSlots);
    if (!__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free)) {
      std::fprintf(stderr, "podcheck-fuzz: cannot install malloc hooks (no leak check possible)\n");
      std::abort();
    }
  }
  static void begin() {
    if (hdf5_hi == 0) find_libhdf5();
    ++generation;  // every slot of earlier inputs is empty now
    n_inserted = 0;
    live = 0;
    overflow = false;
    recording = true;
  }
  // After the input: is a block podcheck allocated still live (with no libhdf5 frame on its allocation stack
  // either, as ASan recorded it: the same rule as fuzz/lsan.supp)?
  PODCHECK_FUZZ_HARNESS_HOT static bool podcheck_block_live() {
    recording = false;
    if (overflow) return true;
    if (live == 0) return false;
    void* trace[64];
    for (std::size_t k = 0; k < n_inserted; ++k) {
      const Slot& s = slots[inserted[k]];
      if (s.ptr == kGone) continue;
      int thread = 0;
      const std::size_t n = __asan_get_alloc_stack(reinterpret_cast<void*>(s.ptr), trace, 64, &thread);
      bool library = false;
      for (std::size_t f = 0; f < n && !library; ++f) {
        const auto pc = reinterpret_cast<std::uintptr_t>(trace[f]);
        library = pc >= hdf5_lo && pc < hdf5_hi;
      }
      if (!library) return true;
    }
    return false;
  }
  static void find_libhdf5() {
    Dl_info info{};
    if (!::dladdr(reinterpret_cast<void*>(&H5open), &info) || !info.dli_fbase) harness_failure("libhdf5 not found by dladdr", 0);
    dl_iterate_phdr([](dl_phdr_info* m, std::size_t, void* base) -> int {
      if (reinterpret_cast<void*>(m->dlpi_addr) != base && !(m->dlpi_name && std::strstr(m->dlpi_name, "libhdf5")))
        return 0;
      for (int i = 0; i < m->dlpi_phnum; ++i)
        if (m->dlpi_phdr[i].p_type == PT_LOAD) {
          const std::uintptr_t lo = m->dlpi_addr + m->dlpi_phdr[i].p_vaddr, hi = lo + m->dlpi_phdr[i].p_memsz;
          hdf5_lo = hdf5_lo ? std::min(hdf5_lo, lo) : lo;
          hdf5_hi = std::max(hdf5_hi, hi);
        }
      return 1;
    }, info.dli_fbase);
    if (hdf5_hi == 0) harness_failure("libhdf5's mapped range not found", 0);
  }
};

// The worker's end of the reply pipe (-1 elsewhere): the sanitizers' report hooks below say 'R' on it.
inline int g_worker_reply_fd = -1;
// The worker's sanitizer reports go to this memory file first (-1 elsewhere); its death callback classifies the
// report by its own stack, then copies it to stderr.
inline int g_worker_report_fd = -1;
// PODCHECK_FUZZ_MISREPORT=1 (ctest fuzz-overrule): the process's first worker answers "ours" for every sanitizer
// report, as one long-lived worker once did for a libhdf5 error (one_input asks fresh workers before it believes it)
inline bool g_worker_misreports = false;
inline int g_workers_started = 0;
// PODCHECK_FUZZ_STUCK=done or report (ctest fuzz-stuck-*): the process's first worker stops for good right after it
// says 'd' (its read ended; the leak check would follow) or 'R' (a sanitizer report began), the two points after
// which the parent once waited without a bound; the parent must kill it and have the input read again
inline char g_worker_stuck_after = 0;

// The planted stop: never returns (the parent kills the worker).
[[noreturn]] inline void worker_stuck(char said) {
  char line[128];
  const int k = std::snprintf(line, sizeof line, "podcheck-fuzz: planted: worker %d stops after saying '%c'\n",
                              static_cast<int>(::getpid()), said);
  if (k > 0) (void)!::write(2, line, static_cast<std::size_t>(k));
  for (;;) ::pause();
}

// Every file the worker inherited from the fuzzer, except its standard streams and its two pipes, becomes
// /dev/null (the numbers stay taken, so nothing opened later lands on them). What this is for: the sanitizer
// runtime symbolizes its reports through an llvm-symbolizer process it starts once and talks to over two
// pipes, and libFuzzer's own process starts one as soon as it prints a NEW_FUNC line. A fork inherits those
// pipes, so every worker of a campaign shared the fuzzer's symbolizer: a worker that died in the middle of a
// conversation with it (killed after a hang, or sent SIGABRT as its report began) left an answer in the pipe
// that the next worker read as the answer to its own question, and from then on every report's frames carried
// the names and source lines of other frames. A libhdf5 frame printed with one of podcheck's source lines, or with
// no name, is "ours" (ctest fuzz-symbolizer plants exactly that): the likely cause of the misreports that stopped
// two fixture-reader campaigns (their logs were gone by the time this was found, so it is not proven).
// With /dev/null in their place, the runtime's first question in a worker reads nothing, it says so in one
// warning line of that report, and it starts a symbolizer of the worker's own, which dies with the worker.
inline void isolate_inherited_files(int keep_a, int keep_b) {
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  DIR* dir = ::opendir("/proc/self/fd");
  if (null_fd < 0 || !dir) harness_failure("cannot list the worker's inherited files");
  int fds[256];
  int n = 0;
  while (const dirent* e = ::readdir(dir)) {
    const int fd = std::atoi(e->d_name);
    if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd <= 2 || fd == keep_a || fd == keep_b || fd == null_fd ||
        fd == ::dirfd(dir))
      continue;
    if (n == 256) harness_failure("over 256 files inherited by a worker", 0);
    fds[n++] = fd;
  }
  ::closedir(dir);
  for (int i = 0; i < n; ++i)
    if (::dup2(null_fd, fds[i]) < 0) harness_failure("cannot replace an inherited file with /dev/null");
  ::close(null_fd);
}

// PODCHECK_FUZZ_STRAY_SYMBOLIZE=1 (ctest fuzz-symbolizer): the fuzzer's process starts a symbolizer (as
// libFuzzer does for its first NEW_FUNC line), and the first worker then does what a worker killed in the
// middle of a symbolization leaves behind: a question written to every llvm-symbolizer whose input pipe it
// holds, whose answer nobody reads. A worker that shares the fuzzer's symbolizer reads that answer in its next
// report; a worker with a symbolizer of its own holds no such pipe.
inline bool stray_symbolize_planted() {
  static const bool on = [] {
    const char* e = std::getenv("PODCHECK_FUZZ_STRAY_SYMBOLIZE");
    return e && std::strcmp(e, "1") == 0;
  }();
  return on;
}
inline void plant_symbolizer_in_fuzzer() {
  char buf[256];
  __sanitizer_symbolize_pc(reinterpret_cast<void*>(&plant_symbolizer_in_fuzzer), "%p %F %L", buf, sizeof buf);
}
inline void plant_stray_symbolizer_question() {
  // the input pipes of the llvm-symbolizer processes on this machine, by inode
  std::vector<ino_t> inputs;
  if (DIR* proc = ::opendir("/proc")) {
    while (const dirent* e = ::readdir(proc)) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      const std::string base = std::string("/proc/") + e->d_name;
      char exe[512];
      const ssize_t k = ::readlink((base + "/exe").c_str(), exe, sizeof exe - 1);
      if (k <= 0) continue;
      exe[k] = '\0';
      struct stat st {};
      if (std::strstr(exe, "llvm-symbolizer") && ::stat((base + "/fd/0").c_str(), &st) == 0 && S_ISFIFO(st.st_mode))
        inputs.push_back(st.st_ino);
    }
    ::closedir(proc);
  }
  const std::string question = "CODE /proc/self/exe 0x0\n";
  int written = 0;
  for (int fd = 3; fd < 1024; ++fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) continue;
    if (std::find(inputs.begin(), inputs.end(), st.st_ino) == inputs.end()) continue;
    written += ::write(fd, question.data(), question.size()) == static_cast<ssize_t>(question.size());
  }
  std::fprintf(stderr, "podcheck-fuzz: planted: a stray question written to %d llvm-symbolizer pipe(s) this worker "
                       "holds\n", written);
}

// What the code at an address is, from this process's own address space (a worker is a fork of the fuzzer:
// the same mappings), so that a report is classified by its program counters and not by the names a
// symbolizer printed for them: a fuzz run can then go without symbolization (ASAN_OPTIONS symbolize=0, as CI's
// and the campaigns' runs do: a worker starts a cold llvm-symbolizer of its own for each report, about 0.2 s of
// wall time per libhdf5 report, docs/FORMAT.md), and a report whose names came out wrong can no longer mislead
// the rule.
//   library   libhdf5 and the compression libraries its filters call (libz, libsz, libaec)
//   system    libc, the C++ runtime and libgcc's unwinder
//   runtime   the sanitizer runtime and libFuzzer: in the target's executable, in a function that has no PC in
//             SanitizerCoverage's PC table (every function compiled with -fsanitize=fuzzer has its entry
//             block there, podcheck's code and the library templates it instantiates; the runtime, linked in
//             statically, has none). The functions are the executable's ELF symbol table.
//   ours      an instrumented function of the executable
//   other     anything else: another library, an address in no module, a place in the executable that no
//             function symbol covers (not assumed to be the runtime)
// Built once in the fuzzer before the first worker starts; lookups neither allocate nor lock (the death
// callback uses them).
extern "C" const std::uintptr_t* podcheck_fuzz_pcs_begin();
extern "C" const std::uintptr_t* podcheck_fuzz_pcs_end();

class CodeMap {
 public:
  enum class Kind : char { library, system, runtime, ours, other };

  static const CodeMap& get() {
    static const CodeMap map;
    return map;
  }

  Kind classify(std::uintptr_t pc) const {
    for (const Module& m : modules_)
      if (pc >= m.lo && pc < m.hi) {
        if (m.kind != Kind::ours) return m.kind;
        const std::uintptr_t off = pc - exe_base_;
        auto it = std::upper_bound(functions_.begin(), functions_.end(), off,
                                   [](std::uintptr_t v, const Function& f) { return v < f.start; });
        if (it == functions_.begin()) return Kind::other;
        --it;
        if (off >= it->start + it->size) return Kind::other;
        return it->instrumented ? Kind::ours : Kind::runtime;
      }
    return Kind::other;
  }

  std::size_t functions() const { return functions_.size(); }
  std::size_t instrumented() const {
    return static_cast<std::size_t>(std::count_if(functions_.begin(), functions_.end(),
                                                  [](const Function& f) { return f.instrumented; }));
  }

 private:
  struct Module {
    std::uintptr_t lo, hi;
    Kind kind;  // ours: the executable (its functions tell)
  };
  struct Function {
    std::uintptr_t start, size;  // offsets in the executable
    bool instrumented;
  };
  std::vector<Module> modules_;
  std::vector<Function> functions_;
  std::uintptr_t exe_base_ = 0;
  int objects_ = 0;

  CodeMap() {
    dl_iterate_phdr([](dl_phdr_info* info, std::size_t, void* self) -> int {
      auto* map = static_cast<CodeMap*>(self);
      const std::string_view name = info->dlpi_name ? info->dlpi_name : "";
      const bool exe = map->objects_++ == 0;  // the first object is the program itself
      Kind kind = Kind::other;
      if (exe) {
        kind = Kind::ours;
        map->exe_base_ = info->dlpi_addr;
      } else if (name.find("libhdf5") != name.npos || name.find("/libz.so") != name.npos ||
                 name.find("/libsz.so") != name.npos || name.find("/libaec.so") != name.npos) {
        kind = Kind::library;
      } else if (name.find("/libc.so") != name.npos || name.find("/libstdc++") != name.npos ||
                 name.find("/libgcc") != name.npos) {
        kind = Kind::system;
      }
      for (int i = 0; i < info->dlpi_phnum; ++i)
        if (info->dlpi_phdr[i].p_type == PT_LOAD) {
          const std::uintptr_t lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
          map->modules_.push_back({lo, lo + info->dlpi_phdr[i].p_memsz, kind});
        }
      return 0;
    }, this);
    read_functions();
    const std::uintptr_t* pcs = podcheck_fuzz_pcs_begin();
    const std::uintptr_t* end = podcheck_fuzz_pcs_end();
    if (!pcs || end <= pcs) harness_failure("no SanitizerCoverage PC table (__sancov_pcs): build with -fsanitize=fuzzer", 0);
    for (; pcs + 1 < end; pcs += 2) {  // (PC, flags) pairs
      const std::uintptr_t off = pcs[0] - exe_base_;
      auto it = std::upper_bound(functions_.begin(), functions_.end(), off,
                                 [](std::uintptr_t v, const Function& f) { return v < f.start; });
      if (it != functions_.begin() && off < (it - 1)->start + (it - 1)->size) (it - 1)->instrumented = true;
    }
  }

  // The executable's function symbols (.symtab, else .dynsym), as [start, start + size) offsets.
  void read_functions() {
    const int fd = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0) harness_failure("cannot open /proc/self/exe");
    auto read_at = [&](void* to, std::size_t n, std::uint64_t at) {
      for (std::size_t got = 0; got < n;) {
        const ssize_t k = ::pread(fd, static_cast<char*>(to) + got, n - got, static_cast<off_t>(at + got));
        if (k <= 0) harness_failure("cannot read the executable's symbol table", k == 0 ? EIO : errno);
        got += static_cast<std::size_t>(k);
      }
    };
    ElfW(Ehdr) eh{};
    read_at(&eh, sizeof eh, 0);
    if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_shentsize != sizeof(ElfW(Shdr)))
      harness_failure("the executable is not an ELF file this harness reads", 0);
    std::vector<ElfW(Shdr)> sections(eh.e_shnum);
    read_at(sections.data(), sections.size() * sizeof(ElfW(Shdr)), eh.e_shoff);
    const ElfW(Shdr)* table = nullptr;
    for (const auto& sh : sections)
      if (sh.sh_type == SHT_SYMTAB) table = &sh;
    if (!table)
      for (const auto& sh : sections)
        if (sh.sh_type == SHT_DYNSYM) table = &sh;
    if (!table || table->sh_entsize != sizeof(ElfW(Sym))) harness_failure("the executable has no symbol table", 0);
    std::vector<ElfW(Sym)> syms(table->sh_size / sizeof(ElfW(Sym)));
    read_at(syms.data(), syms.size() * sizeof(ElfW(Sym)), table->sh_offset);
    ::close(fd);
    for (const auto& s : syms)
      if (ELF64_ST_TYPE(s.st_info) == STT_FUNC && s.st_shndx != SHN_UNDEF && s.st_size > 0)
        functions_.push_back({s.st_value, s.st_size, false});
    std::sort(functions_.begin(), functions_.end(), [](const Function& a, const Function& b) { return a.start < b.start; });
    // aliases (one function under several names) to one entry
    functions_.erase(std::unique(functions_.begin(), functions_.end(),
                                 [](const Function& a, const Function& b) { return a.start == b.start; }),
                     functions_.end());
  }
};

// Where a sanitizer report says the error was: 'h' when the first frame after its "ERROR:" (or UBSan's "runtime
// error:") line that is not the sanitizer runtime, libc or the C++ runtime lies in libhdf5 (or the compression
// libraries its filters call), 'p' when it lies elsewhere, 0 when the text has no such frame. Only the error's own
// stack counts (the first run of frame lines): the stacks that follow it ("allocated by thread T0 here:", "freed
// by ...") say where a block came from, not where the error was, and a block libhdf5 overran may well be ours.
// Each frame is placed by its program counter ("#N 0x..."), CodeMap above, whether or not the report was
// symbolized; an interceptor ("in strdup (EXE+0x...)" when symbolized: a trace-reader campaign stopped on a
// libhdf5 heap overflow whose first frame read so) is the runtime by place. fuzz/long_run.py's triage applies the same rule
// to symbolized artifacts by name and source line.
// `decided`, where given, receives the frame line that decided ('h' or 'p'; empty for 0) and `kind` its place.
inline char report_origin(const char* text, std::size_t n, std::string_view* decided = nullptr,
                          const char** kind = nullptr) {
  const std::string_view all(text, n);
  std::size_t at = all.find("ERROR:");
  if (at == std::string_view::npos) at = all.find("runtime error:");
  if (at == std::string_view::npos) return 0;
  const CodeMap& map = CodeMap::get();
  bool in_stack = false;
  while ((at = all.find('\n', at)) != std::string_view::npos) {
    ++at;
    const std::size_t end = std::min(all.find('\n', at), all.size());
    const std::string_view line = all.substr(at, end - at);
    const std::size_t lead = line.find_first_not_of(' ');
    if (lead == std::string_view::npos || line[lead] != '#') {
      if (in_stack || line.find("SUMMARY") != std::string_view::npos) return 0;  // the error's stack has ended
      continue;
    }
    in_stack = true;
    const std::size_t hex = line.find(" 0x");
    if (hex == std::string_view::npos) continue;
    std::uintptr_t pc = 0;
    std::size_t k = hex + 3;
    for (; k < line.size() && std::isxdigit(static_cast<unsigned char>(line[k])); ++k)
      pc = pc * 16 + static_cast<std::uintptr_t>(std::isdigit(static_cast<unsigned char>(line[k]))
                                                     ? line[k] - '0' : (line[k] | 0x20) - 'a' + 10);
    if (k == hex + 3) continue;
    const CodeMap::Kind place = map.classify(pc);
    if (place == CodeMap::Kind::runtime || place == CodeMap::Kind::system) continue;
    if (decided) *decided = line.substr(lead);
    if (kind)
      *kind = place == CodeMap::Kind::library ? "libhdf5 or its filters"
              : place == CodeMap::Kind::ours  ? "ours"
                                              : "other: another library, no module, or no function of the executable";
    return place == CodeMap::Kind::library ? 'h' : 'p';
  }
  return 0;
}

// PODCHECK_FUZZ_SELFTEST=origin (ctest fuzz-report-origin:NAME): report_origin on made-up reports whose frames
// are real addresses of this process (the memcpy and malloc interceptors, libhdf5's H5open, this target's
// LLVMFuzzerTestOneInput); prints each verdict and returns the number wrong. The case it was written for: an
// error whose own stack holds only the interceptor, followed by the stack that allocated the block (ours), was
// answered ours (the scan went on past the error's stack); it must be undecided, left to the unwinder.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
inline int selftest_report_origin() {
  const CodeMap& map = CodeMap::get();
  auto pc = [](auto* f) { return reinterpret_cast<std::uintptr_t>(reinterpret_cast<const void*>(f)) + 1; };
  void* (*copy)(void*, const void*, std::size_t) = &::memcpy;
  void* (*alloc)(std::size_t) = &::malloc;
  const std::uintptr_t runtime = pc(copy), runtime2 = pc(alloc), library = pc(&H5open);
  const std::uintptr_t ours = pc(&LLVMFuzzerTestOneInput);
  int misplaced = 0;
  const std::pair<std::uintptr_t, CodeMap::Kind> places[] = {{runtime, CodeMap::Kind::runtime},
                                                             {runtime2, CodeMap::Kind::runtime},
                                                             {library, CodeMap::Kind::library},
                                                             {ours, CodeMap::Kind::ours}};
  for (const auto& [a, k] : places)
    if (map.classify(a) != k) {
      std::fprintf(stderr, "report_origin self-test: address 0x%zx placed as kind %d, not %d\n",
                   static_cast<std::size_t>(a), static_cast<int>(map.classify(a)), static_cast<int>(k));
      ++misplaced;
    }
  auto frame = [](int n, std::uintptr_t a) {
    char b[64];
    std::snprintf(b, sizeof b, "    #%d 0x%zx  (target+0x1)\n", n, static_cast<std::size_t>(a));
    return std::string(b);
  };
  const std::string head =
      "==1==ERROR: AddressSanitizer: memcpy-param-overlap: memory ranges [0x1,0x2) and [0x3,0x4) overlap\n";
  const std::string located =
      "\n0x621000029108 is located 0 bytes to the right of 4104-byte region\nallocated by thread T0 here:\n";
  const std::string segv = "==1==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000010\n"
                           "==1==The signal is caused by a READ memory access.\n";
  const std::string tail = "\nSUMMARY: AddressSanitizer: memcpy-param-overlap (target+0x1)\n";
  struct Made {
    const char* what;
    std::string text;
    char want;
  };
  const Made made[] = {
      {"the interceptor alone, then our allocation",
       head + frame(0, runtime) + located + frame(0, runtime2) + frame(1, ours) + tail, 0},
      {"the interceptor and libhdf5, then our allocation",
       head + frame(0, runtime) + frame(1, library) + located + frame(0, runtime2) + frame(1, ours) + tail, 'h'},
      {"the interceptor and ours, then libhdf5's allocation",
       head + frame(0, runtime) + frame(1, ours) + located + frame(0, runtime2) + frame(1, library) + tail, 'p'},
      {"a signal in libhdf5", segv + frame(0, library) + frame(1, ours) + tail, 'h'},
  };
  int wrong = 0;
  for (const Made& m : made) {
    const char got = report_origin(m.text.data(), m.text.size());
    std::fprintf(stderr, "report_origin self-test: %s: '%c', want '%c'%s\n", m.what, got ? got : '0',
                 m.want ? m.want : '0', got == m.want ? "" : "  WRONG");
    wrong += got != m.want;
  }
  std::fprintf(stderr,
               "report_origin self-test: %d of %zu made-up reports placed right, %d of %zu addresses misplaced\n",
               static_cast<int>(std::size(made)) - wrong, std::size(made), misplaced, std::size(places));
  return wrong + misplaced;
}

// The worker's sanitizer death callback: the report (in g_worker_report_fd) to stderr, then the reply the parent
// waits for, classified by the report's own stack (with the unwinder's libhdf5_on_stack() only where the report
// has no usable frame), then exit: the rule the triage (fuzz/long_run.py) applies to artifacts. It did not end
// the misreports it was written for (a libhdf5 memcpy-param-overlap in H5HG_read answered as ours by a long-lived
// worker, the campaign stopped on the in-process read): one came again with it, whose cause is not known, and
// one_input's second opinion from fresh workers is what copes with them.
inline void worker_sanitizer_death() {
  static char text[1 << 18];
  std::size_t n = 0;
  if (g_worker_report_fd >= 0) {
    const ssize_t k = ::pread(g_worker_report_fd, text, sizeof text, 0);
    n = k > 0 ? static_cast<std::size_t>(k) : 0;
    (void)!::write(2, text, n);
  }
  std::string_view decided;
  const char* kind = "none in the report: the unwinder's stack decided";
  char origin = report_origin(text, n, &decided, &kind);
  if (origin == 0) origin = isolation::libhdf5_on_stack() ? 'h' : 'p';
  if (g_worker_misreports) origin = 'p';  // the harness's self-test of a worker that answers wrongly
  {  // what this worker answers, and from what (the parent's verdict on the input follows from it); the deciding
     // frame is on the same line, so that a digest of the run's output that keeps this line keeps why
    char line[512];
    const int k = std::snprintf(line, sizeof line, "podcheck-fuzz: worker %d answers '%c' for its sanitizer report "
                                "(%zu bytes read back from its report file); deciding frame (%s): %.*s\n",
                                static_cast<int>(::getpid()), origin, n, kind,
                                static_cast<int>(std::min<std::size_t>(decided.size(), 300)), decided.data());
    if (k > 0) (void)!::write(2, line, static_cast<std::size_t>(std::min<int>(k, sizeof line - 1)));
  }
  const char payload[2] = {origin, 0};
  (void)!::write(g_worker_reply_fd, payload, 2);
  ::_exit(isolation::kCrashExit);
}

// The worker that reads each input, its coverage shipped back (see the top of this file).
class Worker {
 public:
  enum class Outcome { clean, library_crash, library_hang, podcheck_crash, podcheck_leak, podcheck_hang };
  using Body = std::function<void(Counts&)>;

  explicit Worker(Body body) : body_(std::move(body)) {
    counters_ = podcheck_fuzz_counters_begin();
    n_counters_ = podcheck_fuzz_counters_end() - counters_;
    if (!counters_ || n_counters_ <= 0) {
      std::fprintf(stderr, "podcheck-fuzz: no inline 8-bit counters (__sancov_cntrs): build with -fsanitize=fuzzer\n");
      std::abort();
    }
    void* m = ::mmap(nullptr, sizeof(Shared) + static_cast<std::size_t>(n_counters_), PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) harness_failure("cannot map the shared coverage buffer");
    shared_ = static_cast<Shared*>(m);
    InputAllocations::install();
    const CodeMap& map = CodeMap::get();  // before the first fork: every worker inherits it
    std::fprintf(stderr, "podcheck-fuzz: reports are placed by address: %zu functions in the executable, %zu of them "
                         "instrumented\n", map.functions(), map.instrumented());
    ::signal(SIGPIPE, SIG_IGN);  // a worker that died between inputs is a failed write, not the end of the run
    std::fprintf(stderr, "podcheck-fuzz: the worker ships %ld inline 8-bit counters\n", n_counters_);
  }

  // One input; a hang is over limit_ms of the worker's CPU time.
  Outcome run(int limit_ms = hang_ms()) {
    why_.clear();
    if (pid_ <= 0) start();
    const long cpu_before = worker_cpu_us();
    const char go = 'g';
    if (!write_byte(go)) {  // the worker died between inputs (it never should): start another
      stop();
      start();
      if (!write_byte(go)) harness_failure("a fresh worker does not take its input either");
    }
    // libhdf5 loops forever on some corrupt files: when the worker has used limit_ms of CPU time and said
    // nothing, it is sent SIGABRT, whose handler reports where it was (a libhdf5 frame on the stack, or our
    // code) like a crash. CPU time, not wall time: a loaded machine (ctest -j) must not turn slow reads into
    // hangs (seen at 50 ms of wall time: a seed lost, and its coverage). A worker that uses no CPU (blocked)
    // gets 20 times the limit in wall time, 20 s at most.
    pollfd pfd{from_worker_, POLLIN, 0};
    int ready = 0;
    for (int waited_ms = 0; waited_ms < std::min(20 * limit_ms, 20000);) {
      const int step = std::max(1, std::min(limit_ms, 10));
      ready = ::poll(&pfd, 1, step);
      if (ready < 0 && errno == EINTR) continue;
      if (ready != 0) break;
      waited_ms += step;
      if (worker_cpu_us() - cpu_before >= limit_ms * 1000L) break;
    }
    const bool hung = ready == 0;
    if (hung) ::kill(pid_, SIGABRT);
    // Every byte of the reply is waited for with a bound, and a worker that misses it is killed: nothing here
    // may wait on a worker for good (libFuzzer's -timeout would fail the run instead, with no word of why).
    // After SIGABRT the handler gets kAbortReplyMs to begin its answer (a handler that never answers was seen
    // in CI: the fuzzer blocked 41 s on its reply; why it hangs, about 1 % of aborts under
    // PODCHECK_FUZZ_HANG_MS=1, is not known). After 'd' (the read ended, a leak check may follow) or 'R' (a
    // sanitizer report began) the worker gets reply_ms() (10 s; a leak check takes 10-20 ms, an unsymbolized
    // report milliseconds, a symbolized one about 0.2 s): CI failed on libFuzzer's -timeout after 42 s with the
    // fuzzer waiting in one of those two unbounded reads (which one the kept output did not say). A worker silent
    // after 'd' counts as a hang of unknown origin (read again by a fresh worker with the slow limit); one silent
    // after 'R' as a crash of unknown origin, since an error was being reported: fresh workers' second opinion,
    // then the in-process read and a failed run unless one of them calls it libhdf5's.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(hung ? kAbortReplyMs : reply_ms());
    char said = 0;  // the last 'd' or 'R'
    char reply[2] = {0, 0};
    ssize_t n;
    for (;;) {
      if (!wait_readable(deadline)) {
        ::kill(pid_, SIGKILL);
        stop();
        if (said == 0) {
          ++shared_->counts.unresponsive;
          why_ = "a hung worker did not answer SIGABRT within " + std::to_string(kAbortReplyMs) + " ms";
        } else {
          ++shared_->counts.stopped_after_saying;
          why_ = std::string("a worker said '") + said + "' (" +
                      (said == 'd' ? "its read ended" : "a sanitizer report began") + ") and nothing more within " +
                      std::to_string(reply_ms()) + " ms";
          std::fprintf(stderr, "podcheck-fuzz: %s: killed, its input read again by a fresh worker\n", why_.c_str());
          if (said == 'R') return Outcome::podcheck_crash;  // a report unread: whose error it was is not known
        }
        return Outcome::podcheck_hang;
      }
      n = read_byte(reply[0]);
      if (n != 1 || (reply[0] != 'd' && reply[0] != 'R')) break;
      said = reply[0];
      deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(reply_ms());
    }
    const bool report = said == 'R';
    if (n == 1 && (reply[0] == 'o' || reply[0] == 'r')) {
      merge_coverage();
      if (hung || reply[0] == 'r') stop();  // retired, or it answered just as it was sent SIGABRT
      return Outcome::clean;
    }
    if (n == 1 && reply[0] == 'l') {
      stop();  // its leak would be reported again by every later check
      return Outcome::podcheck_leak;
    }
    if (n == 1 && wait_readable(deadline)) (void)read_byte(reply[1]);  // the signal number (one write with the origin)
    stop();
    const bool library = n == 1 && reply[0] == 'h';
    if (hung && !report) {
      if (!library) why_ = "podcheck's code used over " + std::to_string(limit_ms) + " ms of CPU time";
      return library ? Outcome::library_hang : Outcome::podcheck_hang;
    }
    return library ? Outcome::library_crash : Outcome::podcheck_crash;
  }

  // A limit in milliseconds from the environment (the harness's self-tests), else the fallback.
  static int env_ms(const char* var, int fallback) {
    const char* e = std::getenv(var);
    const int v = e ? std::atoi(e) : 0;
    return v > 0 ? v : fallback;
  }

  // Why the last run() ended in podcheck_hang, or in a podcheck_crash whose report never came ("" otherwise).
  const std::string& why() const { return why_; }

  Counts counts() const { return shared_->counts; }

  // The hang limit: kHangMilliseconds, or PODCHECK_FUZZ_HANG_MS (the harness's self-test,
  // fuzz-abort-storm: 1 ms sends nearly every input SIGABRT at a random point of its read).
  static int hang_ms() {
    static const int ms = env_ms("PODCHECK_FUZZ_HANG_MS", kHangMilliseconds);
    return ms;
  }

  // libhdf5 loops forever on a few per cent of the mutants (1-3 %), and each of those costs the whole limit. At
  // 300 ms they took over half of a run's time, while an input the worker reads to the end takes about 3 ms of
  // CPU time on average (docs/FORMAT.md, "Fuzzing"). An input over this much CPU time is a hang: the library's
  // (counted, no coverage) or ours, which gets a second read in a fresh worker with kSlowMilliseconds; the
  // tally counts the inputs read to the end in over half of kHangMilliseconds, to show when it gets tight.
  static constexpr int kHangMilliseconds = 50, kSlowMilliseconds = 5000;
  // How long a worker gets to go on after 'd' or 'R' (the bound above): 10 s, or PODCHECK_FUZZ_REPLY_MS (the
  // harness's self-test, fuzz-stuck-*: 500 ms).
  static int reply_ms() {
    static const int ms = env_ms("PODCHECK_FUZZ_REPLY_MS", kReplyMs);
    return ms;
  }
  static constexpr int kReplyMs = 10000;
  // How long the SIGABRT handler of a hung worker gets to begin its answer. A healthy one takes milliseconds
  // (fixtures/isolated_read.cpp's report_crash: backtrace() and dladdr(), no symbolizer); a sanitizer report that
  // the abort crossed says 'R' first, and after 'R' it gets reply_ms(). 5 s until stop 34: the handlers that never
  // answer (1-13 per 20,000-execution run, docs/FORMAT.md) cost 5 s each in CI's import run.
  static constexpr int kAbortReplyMs = 1000;

 private:
  struct Shared {
    Counts counts;
    std::uintptr_t lowest_stack;
    long since_check;  // inputs since the last full leak check, over all workers
    std::uint8_t counters[];
  };

  // The worker's CPU time so far (all its threads), in microseconds.
  long worker_cpu_us() const {
    timespec t{};
    if (::clock_gettime(cpu_clock_, &t) != 0) return 0;
    return t.tv_sec * 1000000L + t.tv_nsec / 1000;
  }

  // Whether the worker's pipe has something to read (or was closed) before the deadline.
  bool wait_readable(std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd pfd{from_worker_, POLLIN, 0};
      const int ready = ::poll(&pfd, 1, static_cast<int>(std::max<long long>(0, left.count())));
      if (ready < 0 && errno == EINTR) continue;
      return ready != 0;
    }
  }

  ssize_t read_byte(char& c) {
    ssize_t n;
    while ((n = ::read(from_worker_, &c, 1)) < 0 && errno == EINTR) {
    }
    return n;
  }

  bool write_byte(char c) {
    ssize_t n;
    while ((n = ::write(to_worker_, &c, 1)) < 0 && errno == EINTR) {
    }
    return n == 1;
  }

  // The worker's counters into libFuzzer's: an edge's count is what one process running both would have.
  PODCHECK_FUZZ_HARNESS_HOT void merge_coverage() {
    const std::uint8_t* from = shared_->counters;
    for (long i = 0; i < n_counters_; ++i)
      if (from[i]) counters_[i] = static_cast<std::uint8_t>(std::min(255, counters_[i] + from[i]));
    if (shared_->lowest_stack < podcheck_fuzz_lowest_stack()) podcheck_fuzz_set_lowest_stack(shared_->lowest_stack);
  }

  // LeakSanitizer in a forked process: its thread registry still names the fuzzer's thread id, so it neither
  // stops nor scans this thread (and says "Running thread N was not suspended. False leaks are possible." at
  // every check). The live part of this stack (the fuzzer's frames above serve()) is therefore registered as a
  // root region, and each check writes to a memory file first: only a check that finds a leak is copied to
  // stderr, without that line.
  void register_stack_as_root() {
    pthread_attr_t attr;
    void* lo = nullptr;
    std::size_t size = 0;
    if (::pthread_getattr_np(::pthread_self(), &attr) != 0 || ::pthread_attr_getstack(&attr, &lo, &size) != 0)
      harness_failure("cannot find the worker's stack", 0);
    ::pthread_attr_destroy(&attr);
    auto* here = static_cast<char*>(__builtin_frame_address(0));
    auto* top = static_cast<char*>(lo) + size;
    __lsan_register_root_region(here, static_cast<std::size_t>(top - here));
  }

  // What the sanitizers wrote to the worker's report file without dying (warnings) goes to stderr, and the file
  // is emptied, so that the death callback reads one report.
  static void flush_report_file() {
    struct stat st {};
    if (g_worker_report_fd < 0 || ::fstat(g_worker_report_fd, &st) != 0 || st.st_size == 0) return;
    static char buf[1 << 16];
    for (off_t at = 0; at < st.st_size;) {
      const ssize_t k = ::pread(g_worker_report_fd, buf, sizeof buf, at);
      if (k <= 0) break;
      (void)!::write(2, buf, static_cast<std::size_t>(k));
      at += k;
    }
    if (::ftruncate(g_worker_report_fd, 0) != 0 || ::lseek(g_worker_report_fd, 0, SEEK_SET) != 0)
      harness_failure("cannot empty the worker's report file");
  }

  bool leak_check() {
    static const int report = ::memfd_create("podcheck-fuzz-lsan", MFD_CLOEXEC);
    if (report < 0 || ::ftruncate(report, 0) != 0 || ::lseek(report, 0, SEEK_SET) != 0)
      harness_failure("cannot prepare the leak report file");
    __sanitizer_set_report_fd(reinterpret_cast<void*>(static_cast<std::intptr_t>(report)));
    const bool leaked = __lsan_do_recoverable_leak_check() != 0;
    __sanitizer_set_report_fd(reinterpret_cast<void*>(static_cast<std::intptr_t>(g_worker_report_fd)));
    if (leaked) {
      std::string text(static_cast<std::size_t>(::lseek(report, 0, SEEK_END)), '\0');
      if (::pread(report, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
        harness_failure("cannot read the leak report back");
      for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find('\n', at);
        end = end == std::string::npos ? text.size() : end + 1;
        if (text.find("was not suspended", at) >= end)
          (void)!::write(2, text.data() + at, end - at);
        at = end;
      }
    }
    return leaked;
  }

  [[noreturn]] void serve(int from_parent, int to_parent) {
    register_stack_as_root();
    char go;
    while (::read(from_parent, &go, 1) == 1) {
      flush_report_file();  // a non-fatal sanitizer warning of the last input, if any, to stderr
      std::memset(counters_, 0, static_cast<std::size_t>(n_counters_));
      podcheck_fuzz_set_lowest_stack(reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)));
      InputAllocations::begin();
      timespec t0{}, t1{};
      ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
      body_(shared_->counts);
      reset_hdf5();
      ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
      const long us = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;
      ++shared_->counts.clean;
      shared_->counts.clean_us += us;
      shared_->counts.slowest_clean_us = std::max(shared_->counts.slowest_clean_us, us);
      shared_->counts.slow_clean += us > kHangMilliseconds * 500L;
      std::memcpy(shared_->counters, counters_, static_cast<std::size_t>(n_counters_));
      shared_->lowest_stack = podcheck_fuzz_lowest_stack();
      const char done = 'd';
      if (::write(to_parent, &done, 1) != 1) break;
      if (g_worker_stuck_after == 'd') worker_stuck('d');
      char reply = 'o';
      // a block of ours outlived the input: maybe a leak; and now and then a check in any case, for a block
      // allocated earlier that this input dropped
      const bool ours_live = InputAllocations::podcheck_block_live();
      shared_->counts.allocations += static_cast<long>(InputAllocations::n_inserted);
      if (ours_live || ++shared_->since_check >= kCheckEvery) {
        shared_->since_check = 0;
        ++shared_->counts.leak_checks;
        if (leak_check()) reply = 'l';
      }
      // a worker retires after kInputsPerWorker inputs: the blocks libhdf5 leaks pile up in it (memory, and
      // time in every full leak check), and a fork costs a few milliseconds
      if (reply == 'o' && ++served >= kInputsPerWorker) reply = 'r';
      if (::write(to_parent, &reply, 1) != 1 || reply != 'o') break;
    }
    ::_exit(0);
  }

  void start() {
    int req[2], rep[2];
    if (::pipe2(req, O_CLOEXEC) != 0 || ::pipe2(rep, O_CLOEXEC) != 0) harness_failure("cannot make the worker's pipes");
    std::fflush(nullptr);
    ++g_workers_started;
    // SIGABRT (the parent's hang signal) stays blocked in the new worker until its own handlers are in: one that
    // came during the worker's setup went to libFuzzer's handler, inherited from the fuzzer, which wrote a crash-*
    // artifact into the working folder (the abort storm, whose 1 ms limit ends inside the setup, left 20 a run)
    sigset_t abort_only, before;
    sigemptyset(&abort_only);
    sigaddset(&abort_only, SIGABRT);
    ::pthread_sigmask(SIG_BLOCK, &abort_only, &before);
    pid_ = ::fork();
    if (pid_ != 0) ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    if (pid_ < 0) harness_failure("cannot fork a worker");
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the fuzzer
      ::close(req[1]);
      ::close(rep[0]);
      isolate_inherited_files(req[0], rep[1]);
      if (stray_symbolize_planted() && g_workers_started == 1) plant_stray_symbolizer_question();
      isolation::report_crashes_to(rep[1]);
      g_worker_reply_fd = rep[1];
      if (const char* e = std::getenv("PODCHECK_FUZZ_MISREPORT"); e && std::strcmp(e, "1") == 0)
        g_worker_misreports = g_workers_started == 1;
      if (const char* e = std::getenv("PODCHECK_FUZZ_STUCK"); e && g_workers_started == 1)
        g_worker_stuck_after = std::strcmp(e, "done") == 0 ? 'd' : std::strcmp(e, "report") == 0 ? 'R' : 0;
      g_worker_report_fd = ::memfd_create("podcheck-fuzz-report", MFD_CLOEXEC);
      if (g_worker_report_fd < 0) harness_failure("cannot make the worker's report file");
      __sanitizer_set_report_fd(reinterpret_cast<void*>(static_cast<std::intptr_t>(g_worker_report_fd)));
      __sanitizer_set_death_callback(worker_sanitizer_death);
      ::pthread_sigmask(SIG_SETMASK, &before, nullptr);  // a SIGABRT that came meanwhile reaches our handler now
      serve(req[0], rep[1]);
    }
    if (const int e = ::clock_getcpuclockid(pid_, &cpu_clock_); e != 0) harness_failure("no CPU clock of the new worker", e);
    ::close(req[0]);
    ::close(rep[1]);
    to_worker_ = req[1];
    from_worker_ = rep[0];
  }

  // Closes the pipes and reaps the worker. One that has answered exits at once (a retired worker, or a death
  // callback's _exit); one that has not exited after kExitMs is killed, so that this wait is bounded too.
  void stop() {
    ::close(to_worker_);
    ::close(from_worker_);
    int st = 0;
    for (int waited_ms = 0;; ++waited_ms) {
      const pid_t r = ::waitpid(pid_, &st, WNOHANG);
      if (r == pid_ || (r < 0 && errno != EINTR)) break;
      if (waited_ms == kExitMs) {
        ::kill(pid_, SIGKILL);
        while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
        }
        break;
      }
      ::usleep(1000);
    }
    pid_ = -1;
  }

  static constexpr long kCheckEvery = 256, kInputsPerWorker = 1000;
  static constexpr int kExitMs = 2000;
  long served = 0;  // in the worker
  std::string why_;
  Body body_;
  std::uint8_t* counters_ = nullptr;
  long n_counters_ = 0;
  Shared* shared_ = nullptr;
  pid_t pid_ = -1;
  clockid_t cpu_clock_{};
  int to_worker_ = -1, from_worker_ = -1;
};

// Counts how inputs ended, printed at exit (the report's figures).
struct Tally {
  long inputs = 0, library_crashes = 0, library_hangs = 0, slow_ours = 0;
  long overruled = 0;  // worker crashes of ours that a fresh worker read as libhdf5's (one_input)
  const Worker* worker = nullptr;
  Counts in_process;
  ~Tally() {
    Counts c = in_process;
    if (worker) {
      const Counts w = worker->counts();
      c.files_refused += w.files_refused;
      c.cases_read += w.cases_read;
      c.cases_refused += w.cases_refused;
      c.leak_checks += w.leak_checks;
      std::fprintf(stderr, "podcheck-fuzz: the worker read %ld inputs to the end, in %.1f ms of CPU time on average, the "
                           "slowest in %.1f ms, %ld in over half the hang limit (%d ms)\n", w.clean,
                   w.clean ? w.clean_us / 1e3 / static_cast<double>(w.clean) : 0.0, w.slowest_clean_us / 1e3,
                   w.slow_clean, Worker::kHangMilliseconds);
      std::fprintf(stderr, "podcheck-fuzz: %ld heap allocations recorded during those inputs; %ld hung workers did "
                           "not answer SIGABRT within %d ms, %ld workers stopped answering after 'd' or 'R' for %d ms "
                           "(all killed, their input read again)\n", w.allocations, w.unresponsive,
                   Worker::kAbortReplyMs, w.stopped_after_saying, Worker::reply_ms());
    }
    std::fprintf(stderr, "podcheck-fuzz: %ld inputs: %ld libhdf5 crashes and %ld libhdf5 hangs isolated, %ld slow "
                         "inputs of ours read again, %ld files refused, %ld cases read, %ld cases refused, %ld "
                         "leak checks; %ld crashes of ours overruled by a fresh worker's libhdf5 crash\n", inputs,
                 library_crashes, library_hangs, slow_ours, c.files_refused, c.cases_read, c.cases_refused,
                 c.leak_checks, overruled);
  }
};

// One input: through the worker, and in this process only when the worker found something of ours.
template <class T, class Read, class Encode, class Decode>
int one_input(const std::uint8_t* data, std::size_t size, Read read, Encode encode, Decode decode) {
  static Tally tally;
  // PODCHECK_FUZZ_IN_PROCESS=1: no worker, every input read in this process (the reference the coverage test
  // compares the worker with; a libhdf5 crash ends such a run)
  static const bool in_process_only = [] {
    const char* e = std::getenv("PODCHECK_FUZZ_IN_PROCESS");
    return e && std::strcmp(e, "1") == 0;
  }();
  static const bool free_lists_set = (keep_hdf5_free_lists(), true);  // before the first read (and the first fork)
  (void)free_lists_set;
  if (const char* e = std::getenv("PODCHECK_FUZZ_SELFTEST"); e && std::strcmp(e, "origin") == 0)
    std::_Exit(selftest_report_origin() == 0 ? 0 : 1);  // not exit(): libFuzzer calls that a failure (77)
  const std::string& path = input_file(data, size);
  if (stray_symbolize_planted() && tally.inputs == 0) plant_symbolizer_in_fuzzer();
  auto in_process = [&] { read_and_check<T>(path, read, encode, decode, tally.in_process); reset_hdf5(); };
  ++tally.inputs;
  if (in_process_only) {
    in_process();
    return 0;
  }
  static Worker worker([=](Counts& c) { read_and_check<T>(path, read, encode, decode, c); });
  tally.worker = &worker;
  Worker::Outcome outcome = worker.run();
  if (outcome == Worker::Outcome::podcheck_hang) {
    // slow in our own code, or a worker that stopped answering: once more in a fresh worker with time to finish
    // (not in process: libhdf5 can crash there)
    ++tally.slow_ours;
    outcome = worker.run(Worker::kSlowMilliseconds);
  }
  switch (outcome) {
    case Worker::Outcome::clean: return 0;
    case Worker::Outcome::library_crash: ++tally.library_crashes; return 0;
    case Worker::Outcome::library_hang: ++tally.library_hangs; return 0;
    case Worker::Outcome::podcheck_hang:
      std::fprintf(stderr, "podcheck-fuzz: read again by a fresh worker with the slow limit, this input hung again (%s): "
                           "failing the run on it\n", worker.why().c_str());
      std::abort();  // libFuzzer writes the input as a crash artifact
    case Worker::Outcome::podcheck_leak:
      in_process();
      if (__lsan_do_recoverable_leak_check())
        std::fprintf(stderr, "podcheck-fuzz: the leak the worker found (first report above) reproduces in process\n");
      else
        std::fprintf(stderr, "podcheck-fuzz: the leak the worker found (report above) does not reproduce in process\n");
      std::abort();  // libFuzzer writes the input as a crash artifact
    case Worker::Outcome::podcheck_crash: {
      const std::string unread = worker.why();  // a report that began and never came, or ""
      // A second opinion first, from fresh workers (at most two): a 1,000,000-execution campaign stopped on an
      // input that one long-lived worker reported as ours, at an ASan memcpy-param-overlap in libhdf5's H5HG_read
      // whose report it had printed whole, while three fresh runs of the same file called it libhdf5's every time
      // (why that worker answered "ours" is not known). A fresh worker that says libhdf5 settles it as the
      // library's (counted apart); one that says ours again, or reads the file cleanly, leaves it ours.
      for (int again = 0; again < 2; ++again) {
        const Worker::Outcome o = worker.run(Worker::kSlowMilliseconds);
        if (o == Worker::Outcome::library_crash || o == Worker::Outcome::library_hang) {
          ++tally.overruled;
          ++(o == Worker::Outcome::library_crash ? tally.library_crashes : tally.library_hangs);
          std::fprintf(stderr, "podcheck-fuzz: a worker's crash of ours was a libhdf5 %s in a fresh worker: counted as "
                               "the library's\n", o == Worker::Outcome::library_crash ? "crash" : "hang");
          return 0;
        }
        if (o == Worker::Outcome::podcheck_crash) break;
      }
      in_process();  // normally crashes here, with the sanitizers' report and libFuzzer's artifact
      if (unread.empty())
        std::fprintf(stderr, "podcheck-fuzz: the worker crashed in podcheck's code (report above) on an input the "
                             "in-process read got through; failing the run on it\n");
      else
        std::fprintf(stderr, "podcheck-fuzz: %s, and no fresh worker called the input libhdf5's; failing the run on "
                             "it\n", unread.c_str());
      std::abort();
    }
  }
  return 0;
}

}  // namespace podcheck::fuzz

// The fuzz targets' ASan defaults (ASAN_OPTIONS, where set, overrides each): a quarantine of 16 MB instead of 256.
// Freed blocks wait in the quarantine before reuse, so that a use after free is caught; with 256 MB the fuzzer's
// own churn kept about 200 MB of them resident, and every new worker's fork copied their page tables (fork was 5 %
// of an import run's CPU samples), and a worker's reads touched fresh pages for most of their allocations (page
// faults: 2.9 M against 0.5 M in 3,000 inputs). A use after free is still caught while the block is among the last
// 16 MB freed (an input's read makes about 1,000 allocations, most of them small). Measured: docs/FORMAT.md.
extern "C" const char* __asan_default_options() { return "quarantine_size_mb=16"; }

// Called by ASan and by UBSan when a report begins (weak in their runtimes; this header is in one file per
// target). In the worker: tell the parent, whose CPU limit then gives way to reply_ms() of wall time (Worker::run).
extern "C" void __asan_on_error() {
  if (podcheck::fuzz::g_worker_reply_fd >= 0) (void)!::write(podcheck::fuzz::g_worker_reply_fd, "R", 1);
  if (podcheck::fuzz::g_worker_stuck_after == 'R') podcheck::fuzz::worker_stuck('R');
}
extern "C" void __ubsan_on_report() {
  if (podcheck::fuzz::g_worker_reply_fd >= 0) (void)!::write(podcheck::fuzz::g_worker_reply_fd, "R", 1);
}

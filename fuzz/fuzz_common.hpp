// Shared by the libFuzzer targets of podcheck's readers (fuzz/fuzz_*.cpp, built with -DPODCHECK_FUZZ=ON).
//
// How a fuzz target lives with the crash isolation (fixtures/isolated_read.hpp): libhdf5 1.10 crashes on
// some corrupt files, and in production those crashes happen in a child process. A target that ran the
// reader only in process would stop at the first libhdf5 crash and report the library's bug as ours; one
// that ran it only in a child would lose libFuzzer's coverage feedback and the sanitizers' view of our
// code. So each input is first read by a pre-flight worker (a forked copy of the target, kept across
// inputs: a fork per crash, not per input) that reports crashes with their origin. A crash with a libhdf5
// frame on the stack is what production turns into "the file is corrupt": the input is counted and
// skipped. Anything else is read again in process, where ASan, UBSan, LeakSanitizer and the coverage
// counters see every line of podcheck's reader: a crash in our own code (in the worker or here) is a
// fuzzer crash. The in-process result also goes through the wire encoding and back.
#pragma once

#include "fixtures/isolated_read.hpp"

#include <hdf5.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace podcheck::fuzz {

// The input as a file in /dev/shm (memory; HDF5 needs a real path, so no memfd), removed at exit.
struct InputFile {
  std::string path;
  int fd = -1;
  InputFile() {
    const char* dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    path = std::string(dir) + "/podcheck-fuzz-" + std::to_string(::getpid()) + ".h5";
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) std::abort();
  }
  ~InputFile() { ::unlink(path.c_str()); }
};

inline std::string input_file(const std::uint8_t* data, std::size_t size) {
  static InputFile f;
  if (::ftruncate(f.fd, 0) != 0) std::abort();
  std::size_t off = 0;
  while (off < size) {
    ssize_t n = ::pwrite(f.fd, data + off, size - off, static_cast<off_t>(off));
    if (n <= 0) std::abort();
    off += static_cast<std::size_t>(n);
  }
  return f.path;
}

// A fresh HDF5 library for the next input. In production every untrusted file is read by a fresh child
// process; here one process reads input after input from the same path, and libhdf5 keeps state across
// them (a corrupt file it failed to close stays open, and a later open of the same inode shares its stale
// metadata: seen crashing in H5C_protect on a valid-looking input). Closing every identifier and starting
// the library again gives each input the state a child would have.
inline void reset_hdf5() {
  H5close();
  H5open();
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

// A forked worker that runs `read` on request; it dies on a crash and is forked again.
class PreFlight {
 public:
  explicit PreFlight(std::function<void(const std::string&)> read) : read_(std::move(read)) {}

  enum class Outcome { ok, library_crash, podcheck_crash };

  Outcome run(const std::string& path) {
    if (pid_ <= 0) start();
    char go = 'g';
    if (::write(to_worker_, &go, 1) != 1) std::abort();
    char reply[2] = {0, 0};
    ssize_t n = 0;
    // libhdf5 loops forever on some corrupt files: after kHangMilliseconds the worker is sent SIGABRT, whose
    // handler reports where it was (a libhdf5 frame on the stack, or our code) like a crash
    pollfd pfd{from_worker_, POLLIN, 0};
    int ready;
    while ((ready = ::poll(&pfd, 1, kHangMilliseconds)) < 0 && errno == EINTR) {
    }
    if (ready == 0) {
      ++hangs_;
      ::kill(pid_, SIGABRT);
    }
    while ((n = ::read(from_worker_, reply, 1)) < 0 && errno == EINTR) {
    }
    if (n == 1 && reply[0] == 'o') return Outcome::ok;
    if (n == 1) (void)::read(from_worker_, reply + 1, 1);
    stop();
    ++crashes_;
    if (n == 1 && reply[0] == 'h') {
      ++library_crashes_;
      return Outcome::library_crash;
    }
    return Outcome::podcheck_crash;
  }
  long library_crashes() const { return library_crashes_; }
  long hangs() const { return hangs_; }
  // A seed reads in ~0.1 s under ASan, and libhdf5 loops forever on a few per cent of the mutants: at 1 s
  // the hangs took most of a run's time (44 of 60 s in one). An input slower than this is skipped as a hang.
  static constexpr int kHangMilliseconds = 300;

 private:
  void start() {
    int req[2], rep[2];
    if (::pipe(req) != 0 || ::pipe(rep) != 0) std::abort();
    pid_ = ::fork();
    if (pid_ < 0) std::abort();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the fuzzer
      ::close(req[1]);
      ::close(rep[0]);
      isolation::report_crashes_to(rep[1]);
      char go;
      while (::read(req[0], &go, 1) == 1) {
        try {
          read_(path_);
        } catch (...) {
        }
        reset_hdf5();
        const char ok = 'o';
        if (::write(rep[1], &ok, 1) != 1) break;
      }
      ::_exit(0);
    }
    ::close(req[0]);
    ::close(rep[1]);
    to_worker_ = req[1];
    from_worker_ = rep[0];
  }
  void stop() {
    ::close(to_worker_);
    ::close(from_worker_);
    int st = 0;
    ::waitpid(pid_, &st, 0);
    pid_ = -1;
  }

 public:
  std::string path_;  // the input file (same memfd in the worker)

 private:
  std::function<void(const std::string&)> read_;
  pid_t pid_ = -1;
  int to_worker_ = -1, from_worker_ = -1;
  long crashes_ = 0, library_crashes_ = 0, hangs_ = 0;
};

// The in-process phase's guard. libhdf5's crashes depend on memory contents, so the pre-flight worker cannot
// screen every one: now and then an input it read cleanly crashes libhdf5 here (seen in CI's fixed-seed run:
// SIGSEGV in H5HG_read under H5Aread). A fatal signal with a libhdf5 frame on the stack is what production
// isolates in a child and reports as a corrupt file, so it ends the run as a success, saying so and how many
// inputs were done; libhdf5 cannot be trusted to go on in this process. Any other fatal signal goes to the
// handler this one replaced (ASan's or libFuzzer's), so a crash of podcheck's own code stays a crash.
struct InProcessGuard {
  static inline struct sigaction previous[NSIG];
  static inline long inputs = 0;
  static void on_signal(int sig, siginfo_t*, void*) {
    if (isolation::libhdf5_on_stack()) {
      char msg[320];
      const int n = std::snprintf(msg, sizeof msg,
                                  "podcheck-fuzz: libhdf5 crashed in process (signal %d) on input %ld, which the "
                                  "pre-flight worker had read cleanly: a memory-dependent libhdf5 crash, isolated in "
                                  "production; the run ends here\n", sig, inputs);
      if (n > 0) (void)!::write(2, msg, static_cast<std::size_t>(n));
      ::_exit(0);
    }
    ::sigaction(sig, &previous[sig], nullptr);
    if (sig == SIGABRT) ::raise(sig);  // faults re-execute the faulting instruction under the previous handler
  }
  static void install() {
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) {
      struct sigaction sa {};
      sa.sa_sigaction = on_signal;
      sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, &previous[sig]);
    }
  }
};

// Counts how inputs ended, printed at exit (the report's figures).
struct Tally {
  long inputs = 0, library_crashes = 0, library_hangs = 0, files_refused = 0, cases_read = 0, cases_refused = 0;
  ~Tally() {
    std::fprintf(stderr, "podcheck-fuzz: %ld inputs: %ld libhdf5 crashes and %ld libhdf5 hangs isolated, %ld files "
                         "refused, %ld cases read, %ld cases refused\n", inputs, library_crashes, library_hangs,
                 files_refused, cases_read, cases_refused);
  }
};

// One input through pre-flight, in-process read and the wire check.
template <class T, class Read, class Encode, class Decode>
int one_input(const std::uint8_t* data, std::size_t size, Read&& read, Encode&& encode, Decode&& decode) {
  static Tally tally;
  static PreFlight pre([read](const std::string& p) { (void)read(p, ReadOptions{ReadMode::in_process, nullptr}); });
  static const bool guarded = (InProcessGuard::install(), true);  // after the sanitizers' and libFuzzer's own
  (void)guarded;
  ++tally.inputs;
  InProcessGuard::inputs = tally.inputs;
  pre.path_ = input_file(data, size);
  switch (pre.run(pre.path_)) {
    case PreFlight::Outcome::library_crash:
      if (pre.hangs() > tally.library_hangs) ++tally.library_hangs;
      else ++tally.library_crashes;
      return 0;
    case PreFlight::Outcome::podcheck_crash:
    case PreFlight::Outcome::ok: break;  // a crash of ours reproduces below, under the sanitizers
  }
  FileRead<T> r = read(pre.path_, ReadOptions{ReadMode::in_process, nullptr});
  reset_hdf5();
  static const bool verbose = std::getenv("PODCHECK_FUZZ_VERBOSE") != nullptr;
  if (verbose && !r.ok()) std::fprintf(stderr, "podcheck-fuzz: %s\n", r.error.c_str());
  if (!r.ok()) ++tally.files_refused;
  for (const CaseRead<T>& c : r.cases) {
    if (!c.ok()) {
      ++tally.cases_refused;
      if (verbose) std::fprintf(stderr, "podcheck-fuzz: %s\n", c.error.c_str());
      if (c.failure != ReadFailure::refused || c.error.empty()) std::abort();
      continue;
    }
    ++tally.cases_read;
    const std::string bytes = encode(*c.value);
    if (encode(decode(bytes)) != bytes) std::abort();  // the wire loses nothing
  }
  return 0;
}

}  // namespace podcheck::fuzz

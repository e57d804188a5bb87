// Files on which libhdf5 1.10.8 crashes (found by mutating an h5py-written trace: SIGSEGV in H5HG_read
// under H5Aread of a variable-length string): read isolated, the crash is an error naming file and case.
#include "testing/catch.hpp"
#include "traces/trace_io.hpp"

using namespace podcheck;

namespace {
std::string data(const char* name) { return std::string(PODCHECK_SOURCE_DIR) + "/traces/tests/data/" + name; }
bool crash_or_refusal(ReadFailure f) { return f == ReadFailure::library_crash || f == ReadFailure::refused; }
}  // namespace

TEST_CASE("a libhdf5 crash on one case is that case's error, not the process's end", "[traces][isolation]") {
  const std::string path = data("hdf5_crash_case.h5");
  FileRead<Trace> r = read_trace_file(path);
  REQUIRE(r.ok());
  REQUIRE(r.cases.size() == 1);
  CHECK_FALSE(r.cases[0].ok());
  CHECK(crash_or_refusal(r.cases[0].failure));  // another HDF5 build may refuse it instead of crashing
  CHECK(r.cases[0].error.find("file '" + path + "', case 'py_single_h4k2d8'") != std::string::npos);
  if (r.cases[0].failure == ReadFailure::library_crash)
    CHECK(r.cases[0].error.find("the file is corrupt: the HDF5 library crashed reading it") != std::string::npos);
  CHECK_THROWS_WITH(read_traces(path), HasSubstring(path));
}

TEST_CASE("a libhdf5 crash before the case list is the file's error", "[traces][isolation]") {
  const std::string path = data("hdf5_crash_file.h5");
  FileRead<Trace> r = read_trace_file(path);
  CHECK_FALSE(r.ok());
  CHECK(crash_or_refusal(r.failure));
  CHECK(r.error.find("file '" + path + "'") != std::string::npos);
  CHECK(r.cases.empty());
}

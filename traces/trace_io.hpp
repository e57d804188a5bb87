// Trace files (HDF5): a fixture group plus observed outputs, provenance and expected verdicts.
// Format: docs/FORMAT.md. Readers throw FormatError (fixtures/fixture_io.hpp) naming file/case/dataset.
#pragma once

#include "fixtures/fixture_io.hpp"
#include "fixtures/isolated_read.hpp"
#include "traces/trace.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace podcheck {

struct TraceWriteOptions {
  bool force = false;
  bool with_reference = false;  // also store reference_fast outputs (float64, intended semantics) and
                                // diff/ = observed - reference (failure files)
  int gzip_level = 4;           // gzip level for large datasets (shuffle on); golden traces use 9
  bool inputs_by_id = false;    // generated cases only: store the case id and an inputs digest instead of
                                // the input tensors (readers rebuild them with make_case; docs/FORMAT.md)
};

void write_traces(const std::string& path, const std::vector<Trace>& traces, const TraceWriteOptions& options = {});

// Writes traces one at a time, so a long run holds one case in memory, not all of them. The data go to a
// temp file in the same folder that commit() renames onto `path`; destroyed without commit (an error,
// SIGINT/SIGTERM) the temp file is removed and an existing `path` is untouched. An existing `path` is
// refused at construction unless options.force.
class TraceWriter {
 public:
  TraceWriter(const std::string& path, const TraceWriteOptions& options = {});
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;
  void add(const Trace& t);
  void commit();
  std::size_t size() const { return count_; }

 private:
  struct File;
  std::string path_;
  TraceWriteOptions options_;
  std::unique_ptr<File> file_;
  std::size_t count_ = 0;
};
std::vector<std::string> list_trace_cases(const std::string& path);
// Every case of a trace file, each read or refused on its own (a malformed case does not hide the others),
// in a child process by default so that a libhdf5 crash on a corrupt file becomes that case's error
// (fixtures/isolated_read.hpp). Never throws for a bad file: FileRead says what was read and why not.
FileRead<Trace> read_trace_file(const std::string& path, const ReadOptions& options = {});
// All cases or the first error (FormatError); read isolated as read_trace_file.
std::vector<Trace> read_traces(const std::string& path);
Trace read_trace(const std::string& path, const std::string& case_id);
// true for a podcheck trace, false for a fixture; throws FormatError for anything else
bool is_trace_file(const std::string& path);

namespace wire {
class Writer;
class Reader;
void put(Writer& w, const Trace& t);  // fixtures/wire.hpp, for the isolated reader
void get(Reader& r, Trace& t);
}  // namespace wire

}  // namespace podcheck

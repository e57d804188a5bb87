// Trace files (HDF5): a fixture group plus observed outputs, provenance and expected verdicts.
// Format: docs/FORMAT.md. Readers throw FormatError (fixtures/fixture_io.hpp) naming file/case/dataset.
#pragma once

#include "fixtures/fixture_io.hpp"
#include "traces/trace.hpp"

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
std::vector<std::string> list_trace_cases(const std::string& path);
std::vector<Trace> read_traces(const std::string& path);
Trace read_trace(const std::string& path, const std::string& case_id);
// true for a podcheck trace, false for a fixture; throws FormatError for anything else
bool is_trace_file(const std::string& path);

}  // namespace podcheck

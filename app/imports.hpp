// Bringing other tools' recordings in and writing cases out in their formats:
//   podcheck import flashinfer       IN.h5...  FlashInfer recordings in the project's HDF5 layouts -> trace
//   podcheck import flashinfer-dump  DIR...    FlashInfer's own API-logging dumps -> trace
//   podcheck import fib              DATASET   flashinfer-bench workloads -> fixture (one case per workload)
//   podcheck export fib              CASE...   cases -> flashinfer-bench definitions, workloads and blobs
// Every output is checked before any input is read. Each job prints what it did and returns the exit status.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace podcheck::app {

struct ImportOutput {
  std::string output;
  bool force = false;
  int gzip = 9;  // gzip level for large datasets (shuffle on)
};

int import_flashinfer_recordings(const std::vector<std::string>& inputs, const ImportOutput& out);

struct DumpImportJob {
  std::vector<std::string> dirs;
  ImportOutput out;
  std::string kv_layout;  // "NHD" | "HND" | "" (from __init__ or the caches' shapes)
  bool skip_unsupported = false;
};
int import_flashinfer_dumps(const DumpImportJob& job);

struct FibImportJob {
  std::string dataset, output;
  bool force = false, with_reference = false;
  std::vector<std::string> definitions;  // empty: every supported one
  std::uint64_t seed = 0;                // podcheck's generator for inputs of type random
};
int import_fib_dataset(const FibImportJob& job);

struct FibExportJob {
  std::vector<std::string> args;  // case ids, or fixture / trace files
  std::vector<std::string> only;  // with files: only these case ids
  std::string dir;
};
int export_fib_cases(const FibExportJob& job);

}  // namespace podcheck::app

// `podcheck bench reference`: times the fast float64 reference on POD-shaped problems against a roofline
// measured in the same run on the same threads (OpenBLAS dgemm; a read of a 512 MiB buffer).
#pragma once

#include <string>

namespace podcheck::app {

struct BenchReferenceOptions {
  std::string json;   // also write the results here
  bool quick = false; // smaller problems
  bool force = false;
  std::string only;   // only the cases whose name contains this
};
void run_bench_reference(const BenchReferenceOptions& options);  // throws UsageError

}  // namespace podcheck::app

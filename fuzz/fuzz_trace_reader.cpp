// libFuzzer target: bytes as a podcheck trace file through read_trace_file (fuzz/fuzz_common.hpp).
#include "fixtures/wire.hpp"
#include "fuzz/fuzz_common.hpp"
#include "traces/trace_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace podcheck;
  return fuzz::one_input<Trace>(
      data, size, [](const std::string& p, const ReadOptions& o) { return read_trace_file(p, o); },
      [](const Trace& t) { return wire::encode(t); }, [](const std::string& b) { return wire::decode<Trace>(b); });
}

// libFuzzer target: bytes as a podcheck fixture file through read_fixture_file (fuzz/fuzz_common.hpp).
#include "fixtures/wire.hpp"
#include "fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace podcheck;
  return fuzz::one_input<Fixture>(
      data, size, [](const std::string& p, const ReadOptions& o) { return read_fixture_file(p, o); },
      [](const Fixture& f) { return wire::encode(f); }, [](const std::string& b) { return wire::decode<Fixture>(b); });
}

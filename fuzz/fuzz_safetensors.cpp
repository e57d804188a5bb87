// libFuzzer target: the safetensors reader (traces/safetensors.hpp) on arbitrary bytes. Every input must be
// either read in full (every tensor, whole and as rows of dimension 0, converted onto the case model) or
// refused with a SafetensorsError; anything else (a crash, an ASan/UBSan report, another exception) is a bug.
// Seeds: fuzz/corpus/safetensors/ (small valid files of each dtype, written by the project's writer).
// Build: clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -I. -I<nlohmann include> \
//          fuzz/fuzz_safetensors.cpp traces/safetensors.cpp reference/tensor.cpp reference/dtype.cpp
#include "traces/safetensors.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace podcheck::safetensors;
  try {
    File f(memory_source(std::span<const std::uint8_t>(data, size), "fuzz.safetensors"));
    for (const TensorInfo& t : f.header().tensors) {
      try {
        (void)f.read_bytes(t.key);
        (void)to_tensor(f, t.key);
        if (!t.shape.empty() && t.shape[0] > 0) {
          std::vector<std::int64_t> rows = {t.shape[0] - 1, 0};
          (void)to_tensor(f, t.key, rows);
        }
        if (t.dtype == Dtype::I32 || t.dtype == Dtype::I64 || t.dtype == Dtype::U8 || t.dtype == Dtype::BOOL)
          (void)read_ints(f, t.key);
        else
          (void)read_doubles(f, t.key);
      } catch (const SafetensorsError&) {
        // refused values (int64 beyond int32, bool bytes other than 0/1) are expected
      }
    }
  } catch (const SafetensorsError&) {
  }
  return 0;
}

// libFuzzer target: the FlashInfer dump reader (traces/flashinfer_dump.hpp) on one call folder held in memory:
// its metadata.jsonl text and inputs/outputs safetensors bytes, split from the fuzz input as
//   [u16 metadata length][metadata][u32 inputs length][inputs][outputs = the rest].
// single_prefill_with_kv_cache needs no plan, so one folder exercises argument binding, the safetensors checks,
// tensor_details agreement and the case checks. Every input must import or be refused with FormatError.
// Seeds: fuzz/corpus/flashinfer_dump/ (single prefill calls of traces/tests/write_fi_dumps.py in this framing).
#include "fixtures/fixture_io.hpp"
#include "traces/flashinfer_dump.hpp"

#include <cstdint>
#include <cstring>
#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace podcheck;
  if (size < 6) return 0;
  std::size_t at = 0;
  std::uint16_t ml;
  std::memcpy(&ml, data, 2);
  at = 2;
  if (ml > size - at) return 0;
  DumpFolderInMemory f;
  f.name = "20260101_000000_000_pid1_single_prefill_with_kv_cache_call0001";
  f.metadata_jsonl.assign(reinterpret_cast<const char*>(data + at), ml);
  at += ml;
  if (size - at < 4) return 0;
  std::uint32_t il;
  std::memcpy(&il, data + at, 4);
  at += 4;
  if (il > size - at) return 0;
  f.inputs.emplace(data + at, data + at + il);
  at += il;
  f.outputs.emplace(data + at, data + size);
  try {
    (void)import_flashinfer_dump_memory("fuzz", "", {f});
  } catch (const FormatError&) {
  }
  return 0;
}

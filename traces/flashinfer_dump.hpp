// Importer for FlashInfer's own API-logging dumps (FLASHINFER_LOGLEVEL=10 with FLASHINFER_DUMP_DIR and
// FLASHINFER_DUMP_SAFETENSORS=1; layout in traces/dump_calls.hpp and docs/CAPTURE.md): every `run` of
// PODWithPagedKVCacheWrapper and BatchPODWithPagedKVCacheWrapper becomes a POD case, every run of
// BatchPrefillWithPagedKVCacheWrapper / BatchDecodeWithPagedKVCacheWrapper and every
// single_prefill_with_kv_cache call a one-sided case, with what FlashInfer returned as the observed outputs.
//
// The case holds what FlashInfer's Python wrapper hands its kernel: each run takes the latest preceding plan
// of the same wrapper instance (process_id, self_id) and the layout from that instance's __init__ (else
// --kv-layout, else the cache's shape against the plan's page_size and num_kv_heads; the provenance says
// which); run-time and plan-time parameters are resolved as FlashInfer resolves them (SPEC §11: single POD's
// decode options come from plan, its run's *_d options are ignored; BatchPOD's from plan for both sides);
// sm_scale None is 1/sqrt(head_dim) computed in double, folded with q_scale and k_scale where FlashInfer folds
// them, and rounded to the float32 the kernel receives; v_scale is applied after the kernel. What the kernel
// then ignores (POD's pos encoding and soft cap) is a profile's business (reference/profile.hpp). Only the
// pages a page table reaches are kept, renumbered in their original order.
#pragma once

#include "traces/trace.hpp"
#include "validation/judge.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace podcheck {

struct DumpImportOptions {
  std::optional<Layout> kv_layout;  // for wrappers whose __init__ is not in the dump
  bool skip_unsupported = false;    // import what podcheck can model and list the other calls (else exit 2)
};

struct DumpImportResult {
  std::vector<Trace> traces;       // in capture order
  std::vector<std::string> notes;  // one line each: calls ignored or skipped, and why
};

// Reads dump roots (FLASHINFER_DUMP_DIR) or single call folders. Throws FormatError (file, folder, tensor key,
// what was expected and found) for a bad dump; nothing is written.
DumpImportResult import_flashinfer_dump(const std::vector<std::string>& dirs, const DumpImportOptions& options = {});

// The same on a dump held in memory (tests, fuzzing): each folder's metadata.jsonl text and safetensors bytes.
struct DumpFolderInMemory {
  std::string name;  // "<call folder>" or "<call folder>/graph_flushes/flush_<K>"
  std::string metadata_jsonl;
  std::optional<std::vector<std::uint8_t>> inputs, outputs;
};
DumpImportResult import_flashinfer_dump_memory(const std::string& root_name, const std::string& session_jsonl,
                                               const std::vector<DumpFolderInMemory>& folders,
                                               const DumpImportOptions& options = {});

// What an imported case remembers of its call (kept in the trace's provenance/scheduling as "fi_dump.*"
// attributes, so it survives the trace file).
struct DumpCallInfo {
  std::string function;       // "BatchDecodeWithPagedKVCacheWrapper.run", "single_prefill_with_kv_cache"
  std::int64_t call_sequence = 0;  // FlashInfer's counter per (process, function)
  std::string timestamp;      // "20260101_120000_123" (local time, as the folder name)
  std::int64_t process_id = 0;
  std::string self_id;        // "" for free functions
  int wrapper = -1;           // wrapper instances numbered 0, 1, ... in order of first call; -1 for functions
  std::int64_t order = 0;     // position of the call in the capture (0-based): the order replay reports in
  int layer = -1;             // runs of this wrapper since its plan, 0-based: the layer in a serving loop
  std::string plan;           // folder of the plan the run used ("" for functions)
  std::string folder;         // the call's folder
  int flush = -1;             // CUDA-graph flush (replay) index, -1 when not captured
  std::string status;         // execution_status ("completed"; "inputs_saved": the call did not return)
  std::string versions;       // "torch=2.11.0, flashinfer=..., python=3.12.3"
};
std::optional<DumpCallInfo> dump_call_info(const Trace& t);

// Replay of a dump, read in capture order and grouped by wrapper instance (the report's view of a capture).
struct DumpReplaySummary {
  struct Call {
    DumpCallInfo info;
    std::string id;
    const validation::CaseResult* result = nullptr;
    bool failed = false;  // a failing verdict, or a call that did not complete
  };
  struct Wrapper {
    int index = -1;          // -1: free functions
    std::string function_class;
    std::int64_t process_id = 0;
    std::string self_id;
    std::vector<std::size_t> calls;  // indices into `calls`
  };
  std::vector<Call> calls;              // capture order
  std::vector<Wrapper> wrappers;        // in order of first call
  std::optional<std::size_t> first_failure;  // index into `calls`
};
// Pairs results with the traces they judge (by case id); traces not imported from dumps are left out.
DumpReplaySummary summarize_dump_replay(const std::vector<Trace>& traces,
                                        const std::vector<validation::CaseResult>& results);
// Lines for a report: the first failing call (function, call number, wrapper, layer, worst element), then
// one line per wrapper instance listing its plans and layers with their verdicts.
std::vector<std::string> format_dump_summary(const DumpReplaySummary& s);

}  // namespace podcheck

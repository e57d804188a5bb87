// flashinfer-bench datasets in and out (the FlashInfer Trace schema, flashinfer_bench/data/*.py at 40e6ca78).
//
// A dataset folder holds definitions/**/<name>.json (Definition: axes, inputs, outputs, constraints, a Python
// reference), workloads/**/<name>.jsonl (one Trace per line with solution and evaluation null; its workload
// gives the var axes and every input as {"type": "random"}, {"type": "scalar", "value"} or
// {"type": "safetensors", "path" (relative to the dataset), "tensor_key"}) and blob/ (the safetensors files).
//
// Import: one workload of a gqa_paged_decode_*, gqa_paged_prefill_causal_* or gqa_ragged_prefill_causal_*
// definition = one one-sided case (and one of podcheck's proposed pod_run_* / batch_pod_run_* definitions = one
// POD case). Const axes are checked against every tensor, var axes against the workload, and the definition's
// constraints are evaluated; random inputs come from podcheck's counter-based generator (seed recorded, stream
// "<uuid>:<input>"), sm_scale is rounded to the float32 the definition declares.
// Export: each case as such a workload (+ the definitions it needs, named as flashinfer-bench names them, with
// a reference of our own), its tensors in one blob per workload; a POD case also gets a proposed `pod`
// definition that carries what FlashInfer's POD trace template leaves out (index arrays, causal, windows,
// scales, LSE). Each workload line carries a "podcheck" object (case id, seed, distribution) that
// flashinfer-bench ignores, so export then import gives the same case digest (fixtures/case_digest.hpp).
#pragma once

#include "traces/trace.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace podcheck {

struct FibImportOptions {
  std::vector<std::string> definitions;  // only these (empty: every supported definition)
  std::uint64_t seed = 0;                // generator seed for inputs of type random
};

struct FibCase {
  Case kase;               // id: the podcheck case id carried by the workload line, else fib_<definition>_<uuid>
  std::string definition;  // the definition's name
  std::string uuid;        // the workload's uuid
};

struct FibImportResult {
  std::vector<FibCase> cases;      // in (definition, line) order
  std::vector<std::string> notes;  // definitions ignored
};

// Throws FormatError naming the dataset file, workload uuid and input for a bad dataset. Workloads carry no
// outputs: the cases are inputs (a fixture; `podcheck run --fixtures` gives them to a kernel).
FibImportResult import_fib(const std::string& dataset_dir, const FibImportOptions& options = {});

struct FibExportResult {
  std::vector<std::string> files;  // written, relative to the folder
  std::vector<std::string> notes;  // conversions that change the case's form (its digest after import)
};
// Writes the cases under `dir`, which must not exist or be empty; everything is built in a temp folder beside
// it and renamed into place, so nothing is half-written. Throws std::invalid_argument for a case that no
// flashinfer-bench definition expresses (naming the case and the parameter).
FibExportResult export_fib(const std::vector<Case>& cases, const std::string& dir);

// The flashinfer-bench form of a case (shared with the verdict writer, traces/fib_trace.hpp).
struct FibWorkload {
  std::string definition;   // e.g. "gqa_paged_decode_h32_kv8_d128_ps16", "pod_run_h32_kv8_d128_ps16"
  std::string op_type;      // "gqa_paged", "gqa_ragged", "pod"
  std::string uuid;
};
// Definition name, op type and uuid a case exports as; throws std::invalid_argument as export_fib does.
FibWorkload fib_workload_of(const Case& c);
// The workload object ({uuid, axes, inputs}) of a case as export_fib writes it (blob paths included).
nlohmann::json fib_workload_json(const Case& c);

}  // namespace podcheck

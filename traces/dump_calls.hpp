// Reading FlashInfer API-logging dumps (internal to the dump importer, traces/flashinfer_dump.hpp): finding the
// call folders, reading each call's metadata.jsonl and safetensors files, putting the calls in capture order,
// and binding the recorded arguments to parameter names with FlashInfer's signatures.
//
// The layout, as flashinfer/api_logging.py writes it at FlashInfer fb28d7242b35 (FLASHINFER_LOGLEVEL=10):
//   <root>/session.jsonl                       one metadata record per event, in the order they happened
//   <root>/<YYYYmmdd_HHMMSS_mmm>_pid<P>_<func>_call<NNNN>/
//       metadata.jsonl                         line 1 before the call ("inputs_saved"), line 2 after ("completed");
//                                              the last line is the call's record
//       inputs.safetensors, outputs.safetensors  (inputs.pt / outputs.pt without FLASHINFER_DUMP_SAFETENSORS=1)
//       graph_flushes/flush_<KKKK>/{metadata.jsonl, inputs.safetensors, outputs.safetensors}
//                                              a call captured in a CUDA graph: one snapshot per replay
// <func> is "Class.method" for wrapper classes (then the record has self_id = id(self), and arg_0 is self) or
// the function's name. Tensors are keyed arg_<i> / kwarg_<name> (positional / keyword), <key>__<j> for the
// j-th member of a tuple argument, and result / result_<i> / result_<i>__<j> for outputs; other argument
// values are in the record's input_metadata under the same keys; arguments left at their defaults are not
// recorded at all. tensor_details gives each tensor's shape, dtype and strides as the call saw them.
#pragma once

#include "traces/safetensors.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace podcheck::dump {

// One call folder, in memory (tests and fuzzing) or on disk.
struct Folder {
  std::string name;  // relative to its root: "<call>" or "<call>/graph_flushes/flush_<KKKK>"
  std::string metadata_jsonl;
  std::optional<std::vector<std::uint8_t>> inputs, outputs;  // safetensors bytes (memory folders)
  std::string path;   // on disk: the folder (inputs/outputs are read from there, lazily); "" in memory
  bool has_pt = false;  // holds inputs.pt or outputs.pt
};

// A dump root: its call folders (flush snapshots included) and its session.jsonl ("" if absent).
struct Root {
  std::string name;  // for messages: the folder given on the command line
  std::string session_jsonl;
  std::vector<Folder> folders;
};

// Finds the calls under a folder given on the command line: a dump root (subfolders with metadata.jsonl), or
// one call folder (it holds metadata.jsonl; the parent's session.jsonl is used when present). Throws
// FormatError when nothing is found or a folder holds .pt files.
Root scan_root(const std::string& dir);

struct Call {
  std::string root;        // Root::name
  std::string folder;      // Folder::name
  std::string display;     // "<root>/<folder>" for messages
  nlohmann::json record;   // the last line of metadata.jsonl
  std::string function;    // function_name
  std::string klass, method;  // "BatchPODWithPagedKVCacheWrapper", "run"; klass "" for free functions
  std::int64_t call_sequence = 0;
  std::int64_t process_id = 0;
  std::optional<std::string> self_id;
  std::string timestamp;
  std::string status;      // execution_status
  int flush = -1;          // graph flush index, -1 when not a snapshot
  std::size_t order = 0;   // position in capture order within its root
  std::shared_ptr<safetensors::File> inputs, outputs;  // null when the file is absent

  [[noreturn]] void fail(const std::string& what) const;
  [[noreturn]] void fail_file(const std::string& file, const std::string& what) const;
};

// Parses every folder's metadata (FormatError naming the folder and metadata.jsonl otherwise), opens the
// safetensors files, checks tensor_details against their headers, and returns the calls in capture order:
// the order of first appearance in session.jsonl, else (timestamp, pid, folder name) with flush snapshots
// after their call.
std::vector<Call> read_calls(const Root& root);

// Metadata of one call from its text alone (the fuzz target drives this).
nlohmann::json parse_metadata(const std::string& text, const std::string& where);

// ----- arguments ---------------------------------------------------------------------------------------

enum class ParamKind : std::uint8_t { positional, var_positional, keyword_only, var_keyword };
struct Param {
  const char* name;
  const char* default_repr;  // Python repr of the default ("'NHD'", "-1", "None", ...); nullptr: required
  ParamKind kind = ParamKind::positional;
};

// A parameter list of a FlashInfer API at fb28d7242b35. `legacy` names what the var-positional parameter
// takes in order, and `forwarded` lists the parameters (with defaults) that a **kwargs parameter passes on
// (BatchDecodeWithPagedKVCacheWrapper.plan forwards both to _plan_impl).
struct Signature {
  std::vector<Param> params;
  std::vector<const char*> legacy = {};
  std::vector<Param> forwarded = {};
};

// What a parameter was bound to.
struct Value {
  enum Kind { absent_default, json, tensor, tuple_of_tensors } kind = absent_default;
  nlohmann::json j;                 // json: the recorded value; absent_default: the default as JSON
  std::string key;                  // tensor: its key in inputs.safetensors
  std::vector<std::string> members; // tuple_of_tensors: the members' keys
  bool is_none() const { return (kind == json || kind == absent_default) && j.is_null(); }
};

class Args {
 public:
  // Binds the call's recorded arguments with the signature. Checks the recorded function_signature names
  // the same parameters with the same defaults (FormatError naming the first difference otherwise).
  Args(const Call& call, const Signature& sig);
  const Value& get(const std::string& name) const;
  bool given(const std::string& name) const { return get(name).kind != Value::absent_default; }
  bool none(const std::string& name) const { return get(name).is_none(); }
  // Typed access; a value of the wrong kind is a FormatError naming the folder and parameter.
  std::optional<double> number(const std::string& name) const;      // None -> nullopt
  std::optional<std::int64_t> integer(const std::string& name) const;
  bool boolean(const std::string& name) const;
  std::optional<std::string> text(const std::string& name) const;    // str; torch.dtype gives "float16"
  // Extra positional arguments beyond the named ones (a *args parameter).
  const std::vector<std::string>& extra_positional() const { return extra_; }
  // Parameters given a non-default value, "name=value" (for provenance).
  std::string given_summary() const;
  const Call& call() const { return call_; }

 private:
  const Call& call_;
  std::map<std::string, Value> values_;
  std::vector<std::string> extra_;
};

// A Python repr default -> JSON ("None" -> null, "'NHD'" -> "NHD", "-1" -> -1, "True" -> true).
nlohmann::json default_value(const char* repr);

}  // namespace podcheck::dump

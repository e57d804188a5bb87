// The flashinfer-bench definitions podcheck reads and writes (internal to traces/fib*.cpp): their kinds, the
// inputs and axes each kind has, and the definition JSON export writes (with a reference of our own).
#pragma once

#include "reference/dtype.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace podcheck::fib {

enum class Kind : std::uint8_t {
  decode,          // gqa_paged_decode_h<H>_kv<K>_d<D>_ps<P>            (op_type gqa_paged)
  paged_prefill,   // gqa_paged_prefill_causal_h<H>_kv<K>_d<D>_ps<P>    (gqa_paged)
  ragged_prefill,  // gqa_ragged_prefill_causal_h<H>_kv<K>_d<D>         (gqa_ragged)
  pod,             // pod_run_h<H>_kv<K>_d<D>_ps<P>        proposed: dense prefill + paged decode (op_type pod)
  batch_pod,       // batch_pod_run_h<H>_kv<K>_d<D>_ps<P>  proposed: paged prefill + paged decode
};

// Kind of a definition from its name and op_type; nullopt for definitions podcheck does not read.
std::optional<Kind> kind_of(const std::string& name, const std::string& op_type);
const char* op_type_of(Kind k);
std::string definition_name(Kind k, int h, int kv, int d, int ps);

struct TensorSpec {
  std::string name;
  std::vector<std::string> shape;  // empty + scalar: a scalar
  bool scalar = false;
  std::string dtype;               // flashinfer-bench names: bfloat16, float16, float32, int32, bool, ...
  std::string description;
};

struct DefSpec {
  Kind kind;
  std::string name, op_type, description;
  std::vector<std::pair<std::string, std::int64_t>> consts;
  std::vector<std::string> vars;
  std::vector<TensorSpec> inputs, outputs;
  std::vector<std::string> constraints, tags;
};

// The definition export writes for a kind with these constants and dtypes. `last_page_len` adds the
// kv_last_page_len input(s) (flashinfer-bench's page_size-1 definitions have none).
DefSpec make_def(Kind k, int h, int kv, int d, int ps, DType q, DType kv_dtype, DType out, bool last_page_len);
// Keys in flashinfer-bench's order; inputs in the reference's argument order (the kernel's interface).
nlohmann::ordered_json def_json(const DefSpec& d);

// flashinfer-bench dtype names <-> the case model's (int64 and bool are not case dtypes: nullopt).
const char* fib_dtype(DType t);
std::optional<DType> model_dtype(const std::string& fib_name);

}  // namespace podcheck::fib

// The signatures of the FlashInfer APIs the dump importer reads, as they are at FlashInfer fb28d7242b35
// (flashinfer/pod.py, prefill.py, decode.py): parameter names in order, kinds, and Python reprs of the
// defaults. A dump's arguments are bound with these; the dump's own recorded function_signature must agree.
#pragma once

#include "traces/dump_calls.hpp"

#include <string>

namespace podcheck::dump {

enum class Family : std::uint8_t { pod, batch_pod, batch_prefill, batch_decode, single_prefill, other };

// Family of a recorded function: "PODWithPagedKVCacheWrapper.run" -> pod, "single_prefill_with_kv_cache"
// -> single_prefill, CUDAGraphBatchDecodeWithPagedKVCacheWrapper -> batch_decode, anything else -> other.
Family family_of(const std::string& klass, const std::string& method);
const char* family_class(Family f);  // FlashInfer's class name ("" for single_prefill)

// Signature of (family, method): method is "__init__", "plan", "run" (or the function for single_prefill).
const Signature& signature(Family f, const std::string& method);

}  // namespace podcheck::dump

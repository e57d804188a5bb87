// Importer for FlashInfer recordings (HDF5, one group per launch) in the three layouts the project has:
//   single POD   (groups with q_p, k_p, v_p, q_d, paged_k_cache, ...): dense prefill + paged decode;
//   BatchPOD     (groups with paged_k_cache_p / paged_k_cache_d): paged prefill + paged decode;
//   features     (groups with attribute kind = single_prefill | batch_decode): one-sided cases.
// Every recorded parameter is mapped onto the Case model (sm_scale: the float32 the kernel received),
// inputs and outputs are kept bit-exact (NaN sentinels included), provenance comes from the file and group
// attributes, and expected verdicts encode the known FlashInfer defects. Attributes we do not use are
// ignored; a missing required one is a FormatError naming file, recorded case and attribute.
#pragma once

#include "traces/trace.hpp"

#include <string>
#include <vector>

namespace podcheck {

// Imported case ids: fi_pod_<name>, fi_batchpod_<name>, fi_prefill_<name>, fi_decode_<name>.
std::vector<Trace> import_flashinfer(const std::string& path);

}  // namespace podcheck

// Importer for FlashInfer recordings (HDF5, one group per launch) in the three layouts the project has:
//   single POD   (groups with q_p, k_p, v_p, q_d, paged_k_cache, ...): dense prefill + paged decode;
//   BatchPOD     (groups with paged_k_cache_p / paged_k_cache_d): paged prefill + paged decode;
//   features     (groups with attribute kind = single_prefill | batch_decode): one-sided cases.
// Every recorded parameter is mapped onto the Case model (sm_scale: the float32 the kernel received),
// inputs and outputs are kept bit-exact (NaN sentinels included), provenance comes from the file and group
// attributes, and expected verdicts encode the known FlashInfer defects. Attributes we do not use are
// ignored; a missing required one is a FormatError naming file, recorded case and attribute.
#pragma once

#include "fixtures/isolated_read.hpp"
#include "traces/trace.hpp"

#include <string>
#include <vector>

namespace podcheck {

// Imported case ids: fi_pod_<name>, fi_batchpod_<name>, fi_prefill_<name>, fi_decode_<name>.
// Throws FormatError on the first bad recorded case.
std::vector<Trace> import_flashinfer(const std::string& path);
// The same per recorded group (CaseRead::id is the group's name), read in a child process by default so
// that a libhdf5 crash on a corrupt recording is that group's error, not a signal
// (fixtures/isolated_read.hpp). Never throws for a bad file.
FileRead<Trace> import_flashinfer_file(const std::string& path, const ReadOptions& options = {});

}  // namespace podcheck

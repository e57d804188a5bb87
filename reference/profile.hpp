// Profiles map what a caller asked for to what a given kernel family really computes (SPEC.md, head).
//   intended        the parameters mean what they say (the default; other kernels honour them).
//   flashinfer      FlashInfer's attention kernels: with ALiBi and soft cap together sm_scale is applied
//                   twice (SPEC §2.2).
//   flashinfer-pod  flashinfer + what FlashInfer's POD silently ignores (SPEC §11): pos encoding forced to
//                   NONE, soft cap 0, decode mask non-causal, decode custom mask dropped, no q/k/v scales
//                   on the prefill side, LSE base 2, empty row -> 0 / -inf.
// A profile never excuses a bug such as unwritten elements: it only changes the reference's semantics.
#pragma once

#include "reference/case.hpp"
#include "reference/reference.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace podcheck {

enum class Profile : std::uint8_t { intended, flashinfer, flashinfer_pod };

std::string_view profile_name(Profile);
Profile profile_from_name(std::string_view);  // throws std::invalid_argument naming the choices

struct ProfiledCase {
  Case kase;                       // the case as the kernel family computes it
  Semantics semantics;             // what the family computes beyond the parameters (reference.hpp says why)
  std::vector<std::string> notes;  // one line per parameter the profile changed, e.g. "decode: ROPE_LLAMA ignored"
};

ProfiledCase apply_profile(Profile p, const Case& c);

}  // namespace podcheck

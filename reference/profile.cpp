// Profiles: what a kernel family really computes for a requested case (reference/profile.hpp, SPEC §2.2, §6.2, §11).
#include "reference/profile.hpp"

#include "reference/names.hpp"

#include <stdexcept>
#include <string>

namespace podcheck {

namespace {

constexpr NameTable<Profile, 3> kProfiles{
    "profile",
    {{{Profile::intended, "intended"}, {Profile::flashinfer, "flashinfer"}, {Profile::flashinfer_pod, "flashinfer-pod"}}}};

}  // namespace

std::string_view profile_name(Profile p) { return kProfiles.name(p); }
Profile profile_from_name(std::string_view s) { return kProfiles.parse(s); }

namespace {

// SPEC §11: what FlashInfer's POD silently ignores on one side.
void pod_side(SideKind kind, Side& s, std::vector<std::string>& notes) {
  SideParams& p = s.params;
  const std::string side(side_name(kind));
  if (p.pos_encoding != PosEncoding::none) {
    notes.push_back(side + ": " + std::string(pos_encoding_name(p.pos_encoding)) +
                    " ignored (POD is built with PosEncodingMode::kNone, SPEC §4.1)");
    p.pos_encoding = PosEncoding::none;
    p.alibi_slopes.clear();
  }
  if (p.logits_soft_cap != 0.0) {
    notes.push_back(side + ": logits_soft_cap " + std::to_string(p.logits_soft_cap) +
                    " ignored (forced to 0, SPEC §11.1)");
    p.logits_soft_cap = 0.0;
  }
  if (kind == SideKind::decode && p.mask_mode != MaskMode::none) {
    notes.push_back("decode: " + std::string(mask_mode_name(p.mask_mode)) +
                    " mask ignored (decode is always NON_CAUSAL, SPEC §2.6)");
    p.mask_mode = MaskMode::none;
    p.custom_mask.clear();
    p.custom_mask_indptr.clear();
  }
  if (kind == SideKind::prefill && (p.q_scale != 1.0 || p.k_scale != 1.0 || p.v_scale != 1.0)) {
    notes.push_back("prefill: q/k/v scales ignored (POD applies them to decode only, SPEC §6.2)");
    p.q_scale = p.k_scale = p.v_scale = 1.0;
  }
}

}  // namespace

ProfiledCase apply_profile(Profile prof, const Case& c) {
  ProfiledCase out{c, Semantics{}, {}};
  if (prof == Profile::intended) return out;
  // FlashInfer attention kernels: ALiBi + soft cap apply sm_scale twice (SPEC §2.2).
  out.semantics.alibi_softcap_double_sm_scale = true;
  if (prof == Profile::flashinfer) {
    for (SideKind k : {SideKind::prefill, SideKind::decode}) {
      const Side* s = c.side(k);
      if (s && s->params.pos_encoding == PosEncoding::alibi && s->params.logits_soft_cap > 0)
        out.notes.push_back(std::string(side_name(k)) + ": ALiBi with soft cap applies sm_scale twice (SPEC §2.2)");
    }
    return out;
  }
  if (c.prefill) pod_side(SideKind::prefill, *out.kase.prefill, out.notes);
  if (c.decode) pod_side(SideKind::decode, *out.kase.decode, out.notes);
  if (out.kase.lse_base != LseBase::base2) {
    out.notes.push_back("LSE base 2 (FlashInfer returns log2-sum-exp, SPEC §3.1)");
    out.kase.lse_base = LseBase::base2;
  }
  return out;
}

}  // namespace podcheck

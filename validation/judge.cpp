// The one judging path: profile, reference, emulator envelope, comparison, outcome, diagnosis, expectation.
#include "validation/judge.hpp"

#include "validation/diagnose.hpp"
#include "validation/emulator.hpp"

#include "reference/names.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>

namespace podcheck::validation {

namespace {

constexpr NameTable<Status, 6> kStatuses{"status",
                                         {{{Status::passed, "passed"},
                                           {Status::incorrect, "incorrect"},
                                           {Status::launch_failed, "launch-failed"},
                                           {Status::not_supported, "not-supported"},
                                           {Status::invalid_case, "invalid-case"},
                                           {Status::skipped, "skipped"}}}};
constexpr NameTable<Verdict, 4> kVerdicts{
    "verdict", {{{Verdict::ok, "ok"}, {Verdict::xfail, "xfail"}, {Verdict::fail, "fail"}, {Verdict::skip, "skip"}}}};
constexpr NameTable<Verdict, 4> kVerdictTags{
    "verdict tag",
    {{{Verdict::ok, "[OK]"}, {Verdict::xfail, "[XFAIL]"}, {Verdict::fail, "[FAIL]"}, {Verdict::skip, "[SKIP]"}}}};

}  // namespace

std::string_view status_name(Status s) { return kStatuses.name(s); }
Status status_from_name(std::string_view s) { return kStatuses.parse(s); }
std::string_view verdict_name(Verdict v) { return kVerdicts.name(v); }
std::string_view verdict_tag(Verdict v) { return kVerdictTags.name(v); }

bool OutputSet::has(SideKind side, bool lse) const {
  if (side == SideKind::prefill) return lse ? lse_p : out_p;
  return lse ? lse_d : out_d;
}

OutputSet OutputSet::parse(std::string_view text) {
  OutputSet o;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string_view w = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (w == "out_p") o.out_p = true;
    else if (w == "out_d") o.out_d = true;
    else if (w == "lse_p") o.lse_p = true;
    else if (w == "lse_d") o.lse_d = true;
    else if (w == "out") o.out_p = o.out_d = true;
    else if (w == "lse") o.lse_p = o.lse_d = true;
    else if (w == "all") o = all();
    else if (w != "none")
      throw std::invalid_argument("unknown output '" + std::string(w) +
                                  "' (expected a comma-separated list of out_p, out_d, lse_p, lse_d, out, lse, all "
                                  "or none)");
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return o;
}

const TensorReport* CaseResult::headline() const {
  const TensorReport* best = nullptr;
  for (const auto& t : tensors)
    if (t.failed() && (!best || t.bad_nonfinite() > best->bad_nonfinite() ||
                       (t.bad_nonfinite() == best->bad_nonfinite() && t.tol_used > best->tol_used)))
      best = &t;
  if (best) return best;
  for (const auto& t : tensors)
    if (t.checked && (!best || t.tol_used > best->tol_used)) best = &t;
  return best;
}

Verdict plain_verdict(Status s) {
  switch (s) {
    case Status::passed: return Verdict::ok;
    case Status::incorrect:
    case Status::launch_failed:
    case Status::invalid_case: return Verdict::fail;
    case Status::not_supported:
    case Status::skipped: return Verdict::skip;
  }
  return Verdict::fail;
}

CaseResult unjudged_result(const std::string& id, const JudgeOptions& options, Status status, std::string message) {
  CaseResult r;
  r.id = id;
  r.profile = std::string(profile_name(options.profile));
  r.policy = std::string(policy_name(options.policy));
  r.status = status;
  r.verdict = plain_verdict(status);
  r.message = std::move(message);
  return r;
}

namespace {

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

void apply_expectations(CaseResult& r, const std::vector<Expectation>& expected) {
  r.verdict = plain_verdict(r.status);
  for (const auto& e : expected) {
    if (profile_name(e.profile) != r.profile) continue;
    r.expectation = e;
    const bool status_ok = e.status == r.status;
    bool diag_ok = true;
    if (!e.diagnosis.empty()) {
      diag_ok = false;
      for (const auto& d : r.diagnosis)
        if (lower(d).find(lower(e.diagnosis)) != std::string::npos) diag_ok = true;
    }
    if (status_ok && diag_ok) {
      r.verdict = r.status == Status::passed ? Verdict::ok : Verdict::xfail;
    } else {
      r.verdict = Verdict::fail;
      if (!status_ok)
        r.message = fmt::format("expected {} under profile {}, got {}{}", status_name(e.status), profile_name(e.profile),
                                status_name(r.status), r.message.empty() ? "" : " (" + r.message + ")");
      else
        r.message = fmt::format("expected diagnosis containing '{}' under profile {}, not found", e.diagnosis,
                                profile_name(e.profile));
      if (!e.reason.empty()) r.message += " (expectation: " + e.reason + ")";
    }
    return;
  }
}

CaseResult judge(const Case& c, const KernelOutputs& observed, const RunRecord& run, const JudgeOptions& opt,
                 PodResult* reference_out) {
  const auto t0 = std::chrono::steady_clock::now();
  CaseResult res;
  res.id = c.id;
  res.profile = std::string(profile_name(opt.profile));
  res.policy = std::string(policy_name(opt.policy));
  res.run_status = std::string(run_status_name(run.status));
  auto finish = [&]() -> CaseResult {
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    res.verdict = plain_verdict(res.status);
    return res;
  };
  const bool recorded = observed.out_p || observed.out_d || observed.lse_p || observed.lse_d;
  if (run.status == RunStatus::not_supported) {
    res.status = recorded ? Status::invalid_case : Status::not_supported;
    res.message = recorded ? "the run record says the kernel did not run the case (not supported: " + run.message +
                                 ") but outputs were recorded"
                           : "the kernel does not support this case: " + run.message;
    return finish();
  }
  if (run.status == RunStatus::launch_failed) {
    res.status = Status::launch_failed;
    res.message = "the kernel failed to run: " + run.message + " (nothing it wrote is judged)";
    return finish();
  }
  std::optional<ProfiledCase> pc;
  PodResult ref;
  try {
    pc = apply_profile(opt.profile, c);
    res.profile_notes = pc->notes;
    ref = reference_fast(pc->kase, pc->semantics);
  } catch (const InvalidCase& e) {
    res.status = Status::invalid_case;
    res.message = e.what();
    return finish();
  } catch (const std::invalid_argument& e) {
    res.status = Status::not_supported;
    res.message = e.what();
    return finish();
  }
  const Case& pcase = pc->kase;
  std::map<SideKind, Envelope> envelopes;
  bool any_checked = false, any_failed = false;
  for (SideKind sk : {SideKind::prefill, SideKind::decode}) {
    const SideResult* rs = ref.side(sk);
    if (!rs) {
      for (TensorKind tk : {TensorKind::out, TensorKind::lse}) {
        const auto& ob = tk == TensorKind::out ? observed.out(sk) : observed.lse(sk);
        if (ob) {
          TensorReport t;
          t.name = tensor_name(sk, tk);
          t.side = sk;
          t.kind = tk;
          t.shape_ok = false;
          t.note = fmt::format("shape mismatch: {} recorded {} but the case has no {} side", t.name,
                               ob->shape_string(), side_name(sk));
          res.tensors.push_back(t);
          any_failed = true;
        }
      }
      continue;
    }
    const bool needed = observed.out(sk) || observed.lse(sk);
    const Envelope* env = nullptr;
    if (opt.policy == Policy::calibrated && needed) {
      try {
        const SideResult emu = emulate_side(pcase, sk, pc->semantics);
        envelopes[sk] = make_envelope(pcase, sk, *rs, emu);
        env = &envelopes[sk];
      } catch (const std::invalid_argument& e) {
        res.status = Status::not_supported;
        res.message = std::string("calibrated tolerance: ") + e.what();
        return finish();
      }
    }
    auto ob_out = observed.out(sk), ob_lse = observed.lse(sk);
    res.tensors.push_back(compare_tensor(pcase, sk, TensorKind::out, ob_out, *rs,
                                         needed ? out_bounds(opt.policy, pcase, *rs, env) : std::vector<double>{}));
    res.tensors.push_back(compare_tensor(pcase, sk, TensorKind::lse, ob_lse, *rs,
                                         needed ? lse_bounds(opt.policy, pcase, *rs, env) : std::vector<double>{}));
    for (const auto& t : {res.tensors[res.tensors.size() - 2], res.tensors.back()}) {
      any_checked |= t.checked;
      any_failed |= t.failed();
    }
  }
  // Outputs of existing sides that were not recorded: never a pass for them; a failure when required.
  std::vector<std::string> missing_required;
  for (const auto& t : res.tensors) {
    if (t.checked || !t.shape_ok) continue;
    res.not_checked.push_back(t.name);
    if (opt.required.has(t.side, t.kind == TensorKind::lse)) missing_required.push_back(t.name);
  }
  auto joined = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
    return out;
  };
  if (any_failed) {
    res.status = Status::incorrect;
    for (const auto& t : res.tensors)
      if (!t.shape_ok) res.message = t.note;
  } else if (!missing_required.empty()) {
    res.status = Status::incorrect;
  } else if (!any_checked) {
    res.status = Status::skipped;
    res.message = "no recorded output to check";
  } else {
    res.status = Status::passed;
  }
  if (!missing_required.empty()) {
    const std::string m = "required output(s) not recorded: " + joined(missing_required);
    res.message = res.message.empty() ? m : m + "; " + res.message;
  }
  if (run.status == RunStatus::guards_overwritten) {
    res.status = Status::incorrect;
    const std::string m = "the kernel wrote outside its outputs (guard bands overwritten: " + run.message + ")";
    res.message = res.message.empty() ? m : m + "; " + res.message;
    res.findings.push_back(Finding{"guards-overwritten", std::nullopt, "", {},
                                   "out-of-bounds writes: guard bands overwritten (" + run.message + ")"});
  }
  if (any_failed) {
    if (opt.diagnose) {
      try {
        for (auto& f : diagnose(DiagnosisInput{*pc, observed, opt.policy, ref, envelopes, res.tensors}))
          res.findings.push_back(std::move(f));
      } catch (const std::exception& e) {
        res.findings.push_back(
            Finding{"diagnosis-failed", std::nullopt, "", {}, std::string("diagnosis failed: ") + e.what()});
      }
    }
  }
  for (const auto& f : res.findings) res.diagnosis.push_back(f.text);
  if (reference_out) *reference_out = std::move(ref);
  return finish();
}

}  // namespace podcheck::validation

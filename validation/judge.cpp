// The one judging path: profile, reference, emulator envelope, comparison, outcome, diagnosis, expectation.
#include "validation/judge.hpp"

#include "validation/diagnose.hpp"
#include "validation/emulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>

namespace podcheck::validation {

std::string_view status_name(Status s) {
  switch (s) {
    case Status::passed: return "passed";
    case Status::incorrect: return "incorrect";
    case Status::not_supported: return "not-supported";
    case Status::invalid_case: return "invalid-case";
    case Status::skipped: return "skipped";
  }
  return "?";
}

Status status_from_name(std::string_view s) {
  for (Status t : {Status::passed, Status::incorrect, Status::not_supported, Status::invalid_case, Status::skipped})
    if (status_name(t) == s) return t;
  throw std::invalid_argument("unknown status '" + std::string(s) +
                              "' (expected passed, incorrect, not-supported, invalid-case or skipped)");
}

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::ok: return "ok";
    case Verdict::xfail: return "xfail";
    case Verdict::fail: return "fail";
    case Verdict::skip: return "skip";
  }
  return "?";
}

std::string_view verdict_tag(Verdict v) {
  switch (v) {
    case Verdict::ok: return "[OK]";
    case Verdict::xfail: return "[XFAIL]";
    case Verdict::fail: return "[FAIL]";
    case Verdict::skip: return "[SKIP]";
  }
  return "[?]";
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

CaseResult not_supported_result(const std::string& id, const JudgeOptions& options, const std::string& reason) {
  return unjudged_result(id, options, Status::not_supported, "the kernel does not support this case: " + reason);
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
    if (e.profile != r.profile) continue;
    r.expectation = e;
    const bool status_ok = e.status == status_name(r.status);
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
        r.message = fmt::format("expected {} under profile {}, got {}", e.status, e.profile, status_name(r.status));
      else
        r.message = fmt::format("expected diagnosis containing '{}' under profile {}, not found", e.diagnosis, e.profile);
      if (!e.reason.empty()) r.message += " (expectation: " + e.reason + ")";
    }
    return;
  }
}

CaseResult judge(const Case& c, const KernelOutputs& observed, const JudgeOptions& opt, PodResult* reference_out) {
  const auto t0 = std::chrono::steady_clock::now();
  CaseResult res;
  res.id = c.id;
  res.profile = std::string(profile_name(opt.profile));
  res.policy = std::string(policy_name(opt.policy));
  auto finish = [&]() -> CaseResult {
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (res.verdict == Verdict::skip && res.status == Status::passed) res.verdict = Verdict::ok;
    return res;
  };
  std::optional<ProfiledCase> pc;
  PodResult ref;
  try {
    pc = apply_profile(opt.profile, c);
    res.profile_notes = pc->notes;
    ref = reference_fast(pc->kase, pc->semantics);
  } catch (const InvalidCase& e) {
    res.status = Status::invalid_case;
    res.message = e.what();
    res.verdict = plain_verdict(res.status);
    return finish();
  } catch (const std::invalid_argument& e) {
    res.status = Status::not_supported;
    res.message = e.what();
    res.verdict = plain_verdict(res.status);
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
          t.name = std::string(tk == TensorKind::out ? "out_" : "lse_") + (sk == SideKind::prefill ? "p" : "d");
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
        res.verdict = plain_verdict(res.status);
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
  if (any_failed) {
    res.status = Status::incorrect;
  } else if (!any_checked) {
    res.status = Status::skipped;
    res.message = "no observed output to check";
  } else {
    res.status = Status::passed;
    std::vector<std::string> missing;
    for (const auto& t : res.tensors)
      if (!t.checked) missing.push_back(t.name);
    if (!missing.empty()) {
      res.message = "not checked (not recorded):";
      for (const auto& m : missing) res.message += " " + m;
    }
  }
  if (res.status == Status::incorrect) {
    for (const auto& t : res.tensors)
      if (!t.shape_ok) res.message = t.note;
    if (opt.diagnose) {
      try {
        res.findings = diagnose(DiagnosisInput{*pc, observed, opt.policy, ref, envelopes, res.tensors});
      } catch (const std::exception& e) {
        res.findings = {Finding{"diagnosis-failed", std::nullopt, "", {}, std::string("diagnosis failed: ") + e.what()}};
      }
      for (const auto& f : res.findings) res.diagnosis.push_back(f.text);
    }
  }
  res.verdict = plain_verdict(res.status);
  if (reference_out) *reference_out = std::move(ref);
  return finish();
}

}  // namespace podcheck::validation

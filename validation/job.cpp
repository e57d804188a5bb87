// Replay and self-consistency loops of the main job.
#include "validation/job.hpp"

#include "reference/naive.hpp"
#include "reference/reference.hpp"
#include "validation/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>

namespace podcheck::validation {

namespace fs = std::filesystem;

namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'') out += "'\\''";
    else out += ch;
  }
  return out + "'";
}

std::string file_stem_for(const std::string& id, Profile p) {
  std::string s;
  for (char ch : id) s += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '.') ? ch : '_';
  return s + "__" + std::string(profile_name(p));
}

}  // namespace

std::string reproduce_command(const std::string& file, const std::string& id, Profile profile, Policy policy) {
  std::string cmd = fmt::format("podcheck replay {} --case {} --profile {}", shell_quote(file), shell_quote(id),
                                profile_name(profile));
  if (policy != Policy::calibrated) cmd += fmt::format(" --policy {}", policy_name(policy));
  return cmd;
}

std::vector<Profile> profiles_for(const Trace& t, const JobOptions& o) {
  if (o.profile) return {*o.profile};
  std::vector<Profile> out;
  for (const auto& e : t.expected) {
    const Profile p = profile_from_name(e.profile);
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  if (out.empty()) out.push_back(Profile::intended);
  return out;
}

namespace {

// Reproduce command and failure artifact for a judged trace.
void finish_failure(CaseResult& r, const Trace& t, const std::string& file, Profile profile, const JobHooks& hooks,
                    const JobOptions& o) {
  r.reproduce.clear();
  r.artifact.clear();
  if (r.verdict != Verdict::fail) return;
  r.reproduce = reproduce_command(file, t.kase.id, profile, o.policy);
  if (!o.artifacts || !hooks.write_failure || r.status == Status::invalid_case) return;
  try {
    fs::create_directories(o.artifacts_dir);
    const std::string path = (fs::path(o.artifacts_dir) / (file_stem_for(t.kase.id, profile) + ".h5")).string();
    hooks.write_failure(path, t);
    r.artifact = path;
    write_text_file(path + ".json", case_json(r).dump(2) + "\n", true);
  } catch (const std::exception& e) {
    r.artifact = std::string("(not written: ") + e.what() + ")";
  }
}

// A profile that changes nothing for this case (apply_profile left no note) judges it as intended does.
bool profile_changes_nothing(Profile p, const Case& c) {
  if (p == Profile::intended) return true;
  try {
    return apply_profile(p, c).notes.empty();
  } catch (const std::exception&) {
    return false;
  }
}

// A recorder that could not run a case (the kernel said it does not support it) stores no outputs and says
// why in provenance scheduling["not_supported"]: such a trace is reported not-supported, never skipped.
CaseResult judge_trace(const Trace& t, const JudgeOptions& jo) {
  const auto it = t.provenance.scheduling.find("not_supported");
  const KernelOutputs& o = t.observed;
  if (it == t.provenance.scheduling.end() || o.out_p || o.out_d || o.lse_p || o.lse_d)
    return judge(t.kase, t.observed, jo);
  return not_supported_result(t.kase.id, jo, it->second);
}

}  // namespace

CaseResult replay_one(const Trace& t, const std::string& file, Profile profile, const JobHooks& hooks,
                      const JobOptions& o) {
  JudgeOptions jo;
  jo.policy = o.policy;
  jo.profile = profile;
  CaseResult r = judge_trace(t, jo);
  r.source = file;
  apply_expectations(r, t.expected);
  finish_failure(r, t, file, profile, hooks, o);
  return r;
}

std::vector<CaseResult> replay_files(const std::vector<std::string>& files, const JobHooks& hooks,
                                     const JobOptions& o) {
  struct Item {
    std::size_t file;
    std::size_t trace;
    Profile profile;
  };
  std::vector<std::vector<Trace>> loaded;
  std::vector<Item> items;
  std::size_t index = 0;
  for (std::size_t f = 0; f < files.size(); ++f) {
    loaded.push_back(hooks.read_traces(files[f]));
    for (std::size_t k = 0; k < loaded.back().size(); ++k) {
      const Trace& t = loaded.back()[k];
      if (!o.case_filter.empty() && t.kase.id != o.case_filter) continue;
      if (!o.shard.contains(index++)) continue;
      for (Profile p : profiles_for(t, o)) items.push_back({f, k, p});
    }
  }
  if (!o.case_filter.empty() && items.empty())
    throw std::invalid_argument(fmt::format("no case '{}' in {}", o.case_filter,
                                            files.size() == 1 ? files[0] : std::to_string(files.size()) + " files"));
  std::vector<CaseResult> out;
  int done = 0;
  // Profiles that change nothing for a trace share one judgment (re-labelled, expectations re-applied).
  std::optional<std::pair<const Trace*, CaseResult>> plain;
  for (const Item& it : items) {
    const Trace& t = loaded[it.file][it.trace];
    const bool same_as_intended = profile_changes_nothing(it.profile, t.kase);
    if (!(same_as_intended && plain && plain->first == &t)) {
      JudgeOptions jo;
      jo.policy = o.policy;
      jo.profile = it.profile;
      CaseResult judged = judge_trace(t, jo);
      judged.source = files[it.file];
      if (same_as_intended) plain.emplace(&t, judged);
      CaseResult r = std::move(judged);
      apply_expectations(r, t.expected);
      finish_failure(r, t, files[it.file], it.profile, hooks, o);
      out.push_back(std::move(r));
    } else {
      CaseResult r = plain->second;  // as judged, before any expectation
      r.profile = std::string(profile_name(it.profile));
      apply_expectations(r, t.expected);
      finish_failure(r, t, files[it.file], it.profile, hooks, o);
      out.push_back(std::move(r));
    }
    ++done;
    if (o.progress) o.progress(out.back(), done, static_cast<int>(items.size()));
  }
  return out;
}

CaseResult selfcheck_case(const Case& c, int sampled_rows) {
  const auto t0 = std::chrono::steady_clock::now();
  CaseResult r;
  r.id = c.id;
  r.kind = "selfcheck";
  r.profile = "intended";
  r.policy = "selfcheck";
  try {
    const Semantics sem;  // intended semantics; the LSE base is the case's
    const PodResult fast = reference_fast(c, sem);
    bool bad = false;
    for (SideKind sk : {SideKind::prefill, SideKind::decode}) {
      const SideResult* fs_ = fast.side(sk);
      if (!fs_ || fs_->rows == 0) continue;
      TensorReport out_rep, lse_rep;
      out_rep.name = std::string("out_") + (sk == SideKind::prefill ? "p" : "d");
      lse_rep.name = std::string("lse_") + (sk == SideKind::prefill ? "p" : "d");
      out_rep.side = lse_rep.side = sk;
      lse_rep.kind = TensorKind::lse;
      out_rep.checked = lse_rep.checked = true;
      std::set<std::int64_t> rows;
      const std::int64_t n = fs_->rows;
      if (sampled_rows >= 1) rows.insert(0);
      if (sampled_rows >= 2) rows.insert(n - 1);
      for (int k = 2; k < sampled_rows; ++k) rows.insert((n * (k - 1)) / (sampled_rows - 1));
      const int H = fs_->heads, D = fs_->head_dim;
      std::vector<int> heads = {0};
      if (H > 1) heads.push_back(H - 1);
      std::vector<double> nout(D);
      for (std::int64_t row : rows)
        for (int h : heads) {
          double nlse = 0;
          reference_naive_row<double>(c, sk, row, h, sem, nout.data(), nlse);
          // One bound for fast vs naive, the reference's own (reference.hpp): per (row, head), relative to the
          // row's largest |value|; an empty row must be empty in both.
          const double* frow = &fs_->out[(row * H + h) * D];
          const double od = out_rel_diff(frow, nout.data(), D);
          out_rep.numel += D;
          out_rep.tol_used = std::max(out_rep.tol_used, od / kFastVsNaiveBound);
          for (int d = 0; d < D; ++d) out_rep.max_abs = std::max(out_rep.max_abs, std::abs(frow[d] - nout[d]));
          if (!(od <= kFastVsNaiveBound)) {
            ++out_rep.over_tol;
            if (!out_rep.worst) {
              int dw = 0;
              for (int d = 1; d < D; ++d)
                if (!(std::abs(frow[d] - nout[d]) <= std::abs(frow[dw] - nout[dw]))) dw = d;
              out_rep.worst = locate_element(c, sk, TensorKind::out, (row * H + h) * D + dw);
              out_rep.worst_observed = frow[dw];
              out_rep.worst_reference = nout[dw];
            }
          }
          const double fl = fs_->lse[row * H + h];
          const double ld = lse_rel_diff(fl, nlse);
          ++lse_rep.numel;
          if (std::isinf(ld)) {
            ++lse_rep.neginf_missing;
          } else {
            if (std::isfinite(fl)) lse_rep.max_abs = std::max(lse_rep.max_abs, std::abs(fl - nlse));
            lse_rep.tol_used = std::max(lse_rep.tol_used, ld / kFastVsNaiveBound);
            if (!(ld <= kFastVsNaiveBound)) ++lse_rep.over_tol;
          }
        }
      bad |= out_rep.failed() || lse_rep.failed();
      r.tensors.push_back(out_rep);
      r.tensors.push_back(lse_rep);
    }
    r.status = r.tensors.empty() ? Status::skipped : (bad ? Status::incorrect : Status::passed);
    if (r.tensors.empty()) r.message = "case has no query rows";
    if (bad) r.message = "reference self-consistency: fast and naive references disagree";
  } catch (const InvalidCase& e) {
    r.status = Status::invalid_case;
    r.message = e.what();
  }
  r.verdict = plain_verdict(r.status);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::vector<CaseResult> selfcheck_tier(std::string_view tier, const JobHooks& hooks, const JobOptions& o) {
  const auto ids = hooks.list_tier(tier, o.shard);
  std::vector<CaseResult> out;
  int done = 0;
  for (const auto& id : ids) {
    if (!o.case_filter.empty() && id != o.case_filter) continue;
    CaseResult r;
    try {
      r = selfcheck_case(hooks.make_case(id), o.selfcheck_rows);
    } catch (const InvalidCase& e) {
      r.id = id;
      r.kind = "selfcheck";
      r.status = Status::invalid_case;
      r.message = e.what();
      r.verdict = plain_verdict(r.status);
    }
    if (r.verdict == Verdict::fail) r.reproduce = fmt::format("podcheck selfcheck --case {}", shell_quote(id));
    out.push_back(std::move(r));
    ++done;
    if (o.progress) o.progress(out.back(), done, static_cast<int>(ids.size()));
  }
  return out;
}

std::vector<std::string> trace_files_under(const std::string& dir) {
  std::vector<std::string> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".h5") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string find_golden_dir(const std::vector<std::string>& starts) {
  for (const auto& s : starts) {
    if (s.empty()) continue;
    std::error_code ec;
    fs::path p = fs::weakly_canonical(fs::path(s), ec);
    if (ec) continue;
    while (true) {
      const fs::path cand = p / "traces" / "golden";
      if (fs::is_directory(cand, ec)) return cand.string();
      if (!p.has_parent_path() || p.parent_path() == p) break;
      p = p.parent_path();
    }
  }
  return "";
}

}  // namespace podcheck::validation

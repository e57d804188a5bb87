// Replay of recorded traces (replay.hpp).
#include "app/replay.hpp"

#include "app/errors.hpp"
#include "app/report.hpp"
#include "app/report_target.hpp"
#include "fixtures/isolated_read.hpp"
#include "traces/trace_io.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <set>

namespace podcheck::app {

namespace fs = std::filesystem;
using namespace validation;

namespace {

std::string file_stem_for(const std::string& id, Profile p) {
  std::string s;
  for (char ch : id) s += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '.') ? ch : '_';
  return s + "__" + std::string(profile_name(p));
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

// Reproduce command and failure data of a judged trace.
void finish_failure(CaseResult& r, const Trace& t, const std::string& file, Profile profile, const ReplayOptions& o) {
  r.reproduce.clear();
  r.artifact.clear();
  if (r.verdict != Verdict::fail) return;
  r.reproduce = reproduce_command(file, t.kase.id, profile, o.policy);
  if (!o.artifacts.enabled || r.status == Status::invalid_case) return;
  write_failure_data(r, t, failure_data_path(o.artifacts, t.kase.id, profile));
}

// The verdict as judged, before any expectation.
CaseResult judged(const Trace& t, const std::string& file, Profile profile, const ReplayOptions& o) {
  JudgeOptions jo;
  jo.policy = o.policy;
  jo.profile = profile;
  jo.required = o.required;
  CaseResult r = judge(t.kase, t.observed, t.run, jo);
  r.source = file;
  return r;
}

// Expectation, reproduce command and failure data.
CaseResult finished(CaseResult r, const Trace& t, const std::string& file, Profile profile, const ReplayOptions& o) {
  r.profile = std::string(profile_name(profile));
  apply_expectations(r, t.expected);
  finish_failure(r, t, file, profile, o);
  return r;
}

CaseResult unreadable(const std::string& id, const std::string& file, const ReplayOptions& o, const std::string& why) {
  JudgeOptions jo;
  jo.policy = o.policy;
  jo.profile = o.profile.value_or(Profile::intended);
  CaseResult r = unjudged_result(id, jo, Status::invalid_case, why);
  r.source = file;
  return r;
}

}  // namespace

std::string failure_data_path(const Artifacts& a, const std::string& id, Profile profile) {
  return (fs::path(a.dir) / (file_stem_for(id, profile) + ".h5")).string();
}

void write_failure_data(CaseResult& r, const Trace& t, const std::string& path) {
  try {
    const fs::path dir = fs::path(path).parent_path();
    if (!dir.empty()) fs::create_directories(dir);
    TraceWriteOptions wo;
    wo.force = true;  // podcheck's own failure folder: the latest failure of a case replaces the previous one
    wo.with_reference = true;
    write_traces(path, {t}, wo);
    r.artifact = path;
    write_text_file(path + ".json", case_json(r).dump(2) + "\n", true);
  } catch (const std::exception& e) {
    r.artifact = std::string("(not written: ") + e.what() + ")";
  }
}

std::string reproduce_command(const std::string& file, const std::string& id, Profile profile, Policy policy) {
  std::string cmd = fmt::format("podcheck replay {} --case {} --profile {}", shell_quote(file), shell_quote(id),
                                profile_name(profile));
  if (policy != Policy::calibrated) cmd += fmt::format(" --policy {}", policy_name(policy));
  return cmd;
}

std::vector<Profile> profiles_for(const Trace& t, const std::optional<Profile>& forced) {
  if (forced) return {*forced};
  std::vector<Profile> out;
  for (const auto& e : t.expected)
    if (std::find(out.begin(), out.end(), e.profile) == out.end()) out.push_back(e.profile);
  if (out.empty()) out.push_back(Profile::intended);
  return out;
}

CaseResult replay_trace(const Trace& t, const std::string& file, Profile profile, const ReplayOptions& o) {
  return finished(judged(t, file, profile, o), t, file, profile, o);
}

std::vector<CaseResult> replay_files(const std::vector<std::string>& files, const ReplayOptions& o) {
  // Every file is read in a child process (fixtures/isolated_read.hpp): a crash or a hang of libhdf5 on a
  // corrupt file is that file's or that case's invalid-case verdict. First the case lists (cheap), so that
  // the shard and the progress count cover all files; then each file's wanted cases.
  struct Wanted {
    std::string error;            // the file could not be listed
    std::set<std::string> ids;    // its cases in this shard
  };
  std::vector<Wanted> wanted(files.size());
  std::size_t index = 0, total = 0;
  bool any_match = o.case_filter.empty(), any_unreadable = false;
  for (std::size_t f = 0; f < files.size(); ++f) {
    ReadOptions list_only;
    list_only.want = [&](const std::string& id) {
      if (!o.case_filter.empty() && id != o.case_filter) return false;
      any_match = true;
      if (o.shard.contains(index++)) wanted[f].ids.insert(id);
      return false;
    };
    const FileRead<Trace> listed = read_trace_file(files[f], list_only);
    if (!listed.ok()) {
      any_unreadable = true;
      if (o.shard.contains(index++)) wanted[f].error = listed.error;
    }
    total += wanted[f].ids.size() + !wanted[f].error.empty();
  }
  if (!any_match && !any_unreadable)
    throw UsageError(fmt::format("no case '{}' in {}", o.case_filter,
                                 files.size() == 1 ? files[0] : std::to_string(files.size()) + " files"));
  std::vector<CaseResult> out;
  int done = 0;  // cases (or unreadable files) begun: progress counts what `total` counts, not verdicts
  auto emit = [&](CaseResult r) {
    out.push_back(std::move(r));
    if (o.progress) o.progress(out.back(), done, static_cast<int>(total));
  };
  for (std::size_t f = 0; f < files.size(); ++f) {
    const std::string& file = files[f];
    if (!wanted[f].error.empty()) {
      ++done;
      emit(unreadable(file, file, o, wanted[f].error));
      continue;
    }
    if (wanted[f].ids.empty()) continue;
    ReadOptions ro;
    ro.want = [&](const std::string& id) { return wanted[f].ids.count(id) > 0; };
    FileRead<Trace> read = read_trace_file(file, ro);
    if (!read.ok()) {  // listed a moment ago, unreadable now: its cases end here
      done += static_cast<int>(wanted[f].ids.size());
      emit(unreadable(file, file, o, read.error));
      continue;
    }
    for (CaseRead<Trace>& c : read.cases) {
      ++done;  // every verdict of this case (one per profile) carries its number
      if (!c.ok()) {
        emit(unreadable(c.id, file, o, c.error));
        continue;
      }
      const Trace& t = *c.value;
      // Profiles that change nothing for a trace share one judgment (re-labelled, expectations re-applied).
      std::optional<CaseResult> plain;
      for (Profile p : profiles_for(t, o.profile)) {
        const bool same_as_intended = profile_changes_nothing(p, t.kase);
        CaseResult r = same_as_intended && plain ? *plain : judged(t, file, p, o);
        if (same_as_intended && !plain) plain = r;
        CaseResult done_r = finished(std::move(r), t, file, p, o);
        if (o.on_trace) o.on_trace(done_r, t);
        emit(std::move(done_r));
      }
      c.value.reset();  // one case's tensors at a time
    }
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

}  // namespace podcheck::app

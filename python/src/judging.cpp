// The reference and the one judging function, as Python sees them: reference() gives the float64 outputs and
// LSE; judge() runs validation::judge on a Trace (a case, what a kernel wrote, how its run went) and gives the
// CaseResult as a Verdict object whose text is the CLI's (console line and details, app/report.hpp). With a
// failures folder, a case that did not pass leaves the data `podcheck replay` writes for a failure (the trace
// with the reference and diff/, plus its JSON verdict) and a reproduce command naming that trace.
#include "bindings.hpp"

#include "app/replay.hpp"
#include "app/report.hpp"
#include "reference/profile.hpp"
#include "traces/trace.hpp"
#include "validation/judge.hpp"

#include <pybind11/stl.h>

namespace podcheck::python {

using validation::CaseResult;
using validation::Location;
using validation::TensorReport;

namespace {

py::object json_object(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

validation::OutputSet required_arg(py::handle obj) {
  if (obj.is_none()) return {};
  if (py::isinstance<py::str>(obj)) return validation::OutputSet::parse(obj.cast<std::string>());
  std::string text;
  for (auto item : obj) {
    if (!text.empty()) text += ',';
    text += item.cast<std::string>();
  }
  return validation::OutputSet::parse(text.empty() ? "none" : text);
}

py::dict reference_outputs(const Case& c, const std::string& profile) {
  const Profile p = profile_from_name(profile);
  PodResult ref;
  {
    py::gil_scoped_release unlocked;
    ProfiledCase pc = apply_profile(p, c);
    ref = reference_fast(pc.kase, pc.semantics);
  }
  py::dict out;
  for (SideKind k : {SideKind::prefill, SideKind::decode}) {
    const SideResult* s = ref.side(k);
    if (!s) continue;
    const std::string suffix = k == SideKind::prefill ? "_p" : "_d";
    out[py::str("out" + suffix)] = double_array(s->out, {s->rows, s->heads, s->head_dim});
    out[py::str("lse" + suffix)] = double_array(s->lse, {s->rows, s->heads});
  }
  return out;
}

CaseResult judge_trace(const Trace& t, const std::string& policy, const std::string& profile, py::handle required,
                       bool diagnose, std::optional<std::string> failures_dir) {
  validation::JudgeOptions o;
  o.policy = validation::policy_from_name(policy);
  o.profile = profile_from_name(profile);
  o.required = required_arg(required);
  o.diagnose = diagnose;
  py::gil_scoped_release unlocked;
  CaseResult r = validation::judge(t.kase, t.observed, t.run, o);
  if (failures_dir && r.verdict != validation::Verdict::ok && r.status != validation::Status::invalid_case) {
    const std::string path = app::failure_data_path(app::Artifacts{true, *failures_dir}, t.kase.id, o.profile);
    r.reproduce = app::reproduce_command(path, t.kase.id, o.profile, o.policy);
    app::write_failure_data(r, t, path);
  }
  return r;
}

std::string report_text(const CaseResult& r) {
  std::string s = app::console_line(r);
  for (const auto& l : app::console_details(r)) s += "\n" + l;
  return s;
}

py::object optional_location(const TensorReport& t) { return t.worst ? py::cast(*t.worst) : py::none(); }

}  // namespace

void bind_judging(py::module_& m) {
  py::class_<Location>(m, "Location", "Where an element sits: side, request, row within it, head, dim, the KV it reads.")
      .def_property_readonly("side", [](const Location& l) { return std::string(side_name(l.side)); })
      .def_readonly("request", &Location::request)
      .def_readonly("row", &Location::row)
      .def_readonly("global_row", &Location::global_row)
      .def_readonly("head", &Location::head)
      .def_property_readonly("dim", [](const Location& l) { return l.dim >= 0 ? py::cast(l.dim) : py::none(); })
      .def_readonly("kv", &Location::kv)
      .def_property_readonly("text", &Location::text)
      .def("__repr__", &Location::text);

  py::class_<TensorReport>(m, "Metrics", "How one output (out_p, out_d, lse_p, lse_d) compares with the reference.")
      .def_readonly("name", &TensorReport::name)
      .def_readonly("checked", &TensorReport::checked)
      .def_property_readonly("passed", &TensorReport::passed)
      .def_property_readonly("failed", &TensorReport::failed)
      .def_readonly("note", &TensorReport::note)
      .def_readonly("numel", &TensorReport::numel)
      .def_readonly("max_abs", &TensorReport::max_abs)
      .def_readonly("max_rel", &TensorReport::max_rel)
      .def_readonly("rel_l2", &TensorReport::rel_l2)
      .def_readonly("cosine", &TensorReport::cosine)
      .def_readonly("max_ulp", &TensorReport::max_ulp)
      .def_readonly("over_tol", &TensorReport::over_tol)
      .def_readonly("over_fraction", &TensorReport::over_fraction)
      .def_readonly("unwritten", &TensorReport::unwritten)
      .def_readonly("nan", &TensorReport::nan)
      .def_readonly("inf", &TensorReport::inf)
      .def_readonly("neginf_missing", &TensorReport::neginf_missing)
      .def_readonly("neginf_extra", &TensorReport::neginf_extra)
      .def_readonly("tol_used", &TensorReport::tol_used, "largest err/bound over finite elements (1 = at the bound)")
      .def_readonly("bound_share", &TensorReport::tol_used, "the same as tol_used: the share of its bound the worst "
                                                            "element used")
      .def_property_readonly("worst", &optional_location)
      .def_readonly("worst_observed", &TensorReport::worst_observed)
      .def_readonly("worst_reference", &TensorReport::worst_reference)
      .def_readonly("worst_error", &TensorReport::worst_error)
      .def_readonly("worst_bound", &TensorReport::worst_bound)
      .def("__repr__", [](const TensorReport& t) {
        if (!t.checked) return t.name + ": " + (t.note.empty() ? std::string("not checked") : t.note);
        std::string s = t.name + (t.passed() ? ": passed" : ": FAILED") + ", max_abs " + std::to_string(t.max_abs) +
                        ", " + std::to_string(static_cast<int>(100 * t.tol_used + 0.5)) + "% of tolerance";
        if (t.bad_nonfinite() > 0) s += ", " + std::to_string(t.bad_nonfinite()) + " non-finite mismatches";
        if (t.over_tol > 0) s += ", " + std::to_string(t.over_tol) + " over tolerance";
        if (t.worst) s += " @ " + t.worst->text();
        return s;
      });

  py::class_<CaseResult>(m, "Verdict",
                         "podcheck's verdict on one case: status, metrics per output, worst location, diagnosis. "
                         "repr() is what `podcheck replay` prints for it.")
      .def_readonly("id", &CaseResult::id)
      .def_property_readonly("status", [](const CaseResult& r) { return std::string(validation::status_name(r.status)); })
      .def_property_readonly("verdict", [](const CaseResult& r) { return std::string(validation::verdict_name(r.verdict)); })
      .def_property_readonly("passed", [](const CaseResult& r) { return r.verdict == validation::Verdict::ok; })
      .def_readonly("profile", &CaseResult::profile)
      .def_readonly("policy", &CaseResult::policy)
      .def_readonly("message", &CaseResult::message)
      .def_readonly("run_status", &CaseResult::run_status)
      .def_property_readonly("metrics",
                             [](const CaseResult& r) {
                               py::dict d;
                               for (const auto& t : r.tensors) d[py::str(t.name)] = t;
                               return d;
                             })
      .def_property_readonly("bound_shares",
                             [](const CaseResult& r) {
                               py::dict d;
                               for (const auto& t : r.tensors)
                                 if (t.checked) d[py::str(t.name)] = t.tol_used;
                               return d;
                             })
      .def_property_readonly("worst",
                             [](const CaseResult& r) {
                               const TensorReport* h = r.headline();
                               return h ? optional_location(*h) : py::none();
                             })
      .def_property_readonly("headline",
                             [](const CaseResult& r) {
                               const TensorReport* h = r.headline();
                               return h ? py::cast(h->name) : py::none();
                             })
      .def_readonly("not_checked", &CaseResult::not_checked)
      .def_readonly("profile_notes", &CaseResult::profile_notes)
      .def_readonly("diagnosis", &CaseResult::diagnosis)
      .def_readonly("reproduce", &CaseResult::reproduce)
      .def_readonly("artifact", &CaseResult::artifact)
      .def_readonly("seconds", &CaseResult::seconds)
      .def_property_readonly("line", &app::console_line)
      .def_property_readonly("details", &app::console_details)
      .def_property_readonly("report", &report_text)
      .def_property_readonly("json", [](const CaseResult& r) { return json_object(app::case_json(r)); })
      .def("__repr__", &report_text);

  m.def("reference", &reference_outputs, py::arg("case"), py::arg("profile") = "intended",
        "The float64 reference of a case: {'out_p': [rows, H, D], 'lse_p': [rows, H], 'out_d', 'lse_d'} for the "
        "sides it has, LSE in the case's base, under the profile's semantics.");
  m.def("_judge", &judge_trace, py::arg("trace"), py::arg("policy"), py::arg("profile"), py::arg("require_outputs"),
        py::arg("diagnose"), py::arg("failures_dir"));
}

}  // namespace podcheck::python

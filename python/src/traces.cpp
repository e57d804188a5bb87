// Traces for people who want files: Trace (a case, what a kernel wrote, how its run went, where it came from,
// expected verdicts), written and read by the CLI's own writer and readers (traces/trace_io.hpp,
// fixtures/fixture_io.hpp), so a file from Python is refused or accepted exactly as `podcheck replay` would.
#include "bindings.hpp"

#include "fixtures/fixture_io.hpp"
#include "traces/trace_io.hpp"
#include "validation/status.hpp"

#include <pybind11/stl.h>

namespace podcheck::python {

namespace {

Provenance provenance_arg(py::handle obj) {
  Provenance p;
  if (obj.is_none()) return p;
  for (auto [key, value] : obj.cast<py::dict>()) {
    const std::string k = key.cast<std::string>();
    if (k == "scheduling") {
      for (auto [sk, sv] : value.cast<py::dict>()) p.scheduling[sk.cast<std::string>()] = py::str(sv);
      continue;
    }
    std::string* field = k == "kernel_name" ? &p.kernel_name : k == "kernel_version" ? &p.kernel_version
                       : k == "device"      ? &p.device      : k == "driver"         ? &p.driver
                       : k == "date"        ? &p.date        : k == "source"         ? &p.source : nullptr;
    if (!field)
      throw py::value_error("provenance: unknown key '" + k + "' (kernel_name, kernel_version, device, driver, date, "
                            "source, scheduling)");
    *field = value.cast<std::string>();
  }
  return p;
}

py::dict provenance_dict(const Provenance& p) {
  py::dict d;
  d["kernel_name"] = p.kernel_name;
  d["kernel_version"] = p.kernel_version;
  d["device"] = p.device;
  d["driver"] = p.driver;
  d["date"] = p.date;
  d["source"] = p.source;
  d["scheduling"] = p.scheduling;
  return d;
}

std::vector<Expectation> expected_arg(py::handle obj) {
  std::vector<Expectation> out;
  if (obj.is_none()) return out;
  for (auto item : obj) {
    py::dict d = item.cast<py::dict>();
    Expectation e;
    e.profile = profile_from_name(d["profile"].cast<std::string>());
    e.status = validation::status_from_name(d["status"].cast<std::string>());
    if (d.contains("diagnosis")) e.diagnosis = d["diagnosis"].cast<std::string>();
    if (d.contains("reason")) e.reason = d["reason"].cast<std::string>();
    out.push_back(std::move(e));
  }
  return out;
}

Trace make_trace(const Case& c, py::handle out_p, py::handle out_d, py::handle lse_p, py::handle lse_d,
                 const std::string& run_status, const std::string& run_message, py::handle provenance,
                 py::handle expected) {
  Trace t;
  t.kase = c;
  // Outputs are taken as the kernel stored them: out_* in the case's output dtype, lse_* in float32.
  if (!out_p.is_none()) t.observed.out_p = tensor_arg(out_p, "out_p", c.dtype_o);
  if (!out_d.is_none()) t.observed.out_d = tensor_arg(out_d, "out_d", c.dtype_o);
  if (!lse_p.is_none()) t.observed.lse_p = tensor_arg(lse_p, "lse_p", DType::float32);
  if (!lse_d.is_none()) t.observed.lse_d = tensor_arg(lse_d, "lse_d", DType::float32);
  t.run.status = run_status_from_name(run_status);
  t.run.message = run_message;
  t.provenance = provenance_arg(provenance);
  t.expected = expected_arg(expected);
  return t;
}

py::object optional_tensor(const std::optional<Tensor>& t) { return t ? py::cast(*t) : py::none(); }

}  // namespace

void bind_traces(py::module_& m) {
  py::class_<Trace>(m, "Trace",
                    "A case with what a kernel wrote (out_* in the case's output dtype, lse_* float32, any subset), "
                    "its run record (ran, not-supported, launch-failed, guards-overwritten), provenance and "
                    "expected verdicts: one case group of a trace file (docs/FORMAT.md).")
      .def(py::init(&make_trace), py::arg("case"), py::arg("out_p") = py::none(), py::arg("out_d") = py::none(),
           py::arg("lse_p") = py::none(), py::arg("lse_d") = py::none(), py::kw_only(), py::arg("run_status") = "ran",
           py::arg("run_message") = "", py::arg("provenance") = py::none(), py::arg("expected") = py::none())
      .def_property_readonly("case", [](const Trace& t) -> const Case& { return t.kase; },
                             py::return_value_policy::reference_internal)
      .def_property_readonly("out_p", [](const Trace& t) { return optional_tensor(t.observed.out_p); })
      .def_property_readonly("out_d", [](const Trace& t) { return optional_tensor(t.observed.out_d); })
      .def_property_readonly("lse_p", [](const Trace& t) { return optional_tensor(t.observed.lse_p); })
      .def_property_readonly("lse_d", [](const Trace& t) { return optional_tensor(t.observed.lse_d); })
      .def_property_readonly("run_status", [](const Trace& t) { return std::string(run_status_name(t.run.status)); })
      .def_property_readonly("run_message", [](const Trace& t) { return t.run.message; })
      .def_property_readonly("provenance", [](const Trace& t) { return provenance_dict(t.provenance); })
      .def_property_readonly("expected",
                             [](const Trace& t) {
                               py::list l;
                               for (const auto& e : t.expected) {
                                 py::dict d;
                                 d["profile"] = std::string(profile_name(e.profile));
                                 d["status"] = std::string(validation::status_name(e.status));
                                 d["diagnosis"] = e.diagnosis;
                                 d["reason"] = e.reason;
                                 l.append(d);
                               }
                               return l;
                             })
      .def("__repr__", [](const Trace& t) {
        std::string outs;
        for (auto [name, x] : {std::pair{"out_p", &t.observed.out_p}, {"out_d", &t.observed.out_d},
                               {"lse_p", &t.observed.lse_p}, {"lse_d", &t.observed.lse_d}})
          if (*x) outs += (outs.empty() ? "" : ", ") + std::string(name);
        return "podcheck.Trace('" + t.kase.id + "', run " + std::string(run_status_name(t.run.status)) +
               ", outputs: " + (outs.empty() ? "none" : outs) + ")";
      });

  m.def(
      "_write_traces",
      [](const std::string& path, const std::vector<Trace>& traces, bool force) {
        TraceWriteOptions o;
        o.force = force;
        py::gil_scoped_release unlocked;
        write_traces(path, traces, o);
      },
      py::arg("path"), py::arg("traces"), py::arg("force"));
  m.def(
      "read_trace",
      [](const std::string& path, std::optional<std::string> case_id) -> py::object {
        if (case_id) {
          Trace t;
          {
            py::gil_scoped_release unlocked;
            t = podcheck::read_trace(path, *case_id);
          }
          return py::cast(std::move(t));
        }
        std::vector<Trace> ts;
        {
          py::gil_scoped_release unlocked;
          ts = read_traces(path);
        }
        return py::cast(std::move(ts));
      },
      py::arg("path"), py::arg("case") = py::none(),
      "Every case of a trace file as a list of Trace (or the one named by case=), through the CLI's reader and "
      "its checks; FormatError names the file, case and dataset.");
  m.def(
      "list_trace_cases", [](const std::string& path) { return list_trace_cases(path); }, py::arg("path"));
  m.def(
      "write_fixtures",
      [](const std::string& path, const std::vector<Case>& cases, bool force) {
        std::vector<Fixture> fx;
        for (const auto& c : cases) fx.push_back(Fixture{c, std::nullopt});
        FixtureWriteOptions o;
        o.force = force;
        py::gil_scoped_release unlocked;
        write_fixtures(path, fx, o);
      },
      py::arg("path"), py::arg("cases"), py::kw_only(), py::arg("force") = false,
      "Cases (inputs only) as a fixture file, e.g. for `podcheck run --fixtures F.h5`.");
}

}  // namespace podcheck::python

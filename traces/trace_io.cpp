// Trace files: a case group (fixtures/h5/case_group.hpp) plus observed outputs, provenance and expected
// verdicts (trace_io.hpp; layout in docs/FORMAT.md).
#include "traces/trace_io.hpp"

#include "fixtures/h5/case_group.hpp"
#include "fixtures/wire.hpp"
#include "reference/profile.hpp"
#include "reference/reference.hpp"

#include <algorithm>

namespace podcheck {

namespace ff = fileformat;

namespace {


struct ObservedSpec {
  const char* name;
  SideKind side;
  bool is_lse;
};
constexpr ObservedSpec kObserved[] = {{"out_p", SideKind::prefill, false},
                                      {"out_d", SideKind::decode, false},
                                      {"lse_p", SideKind::prefill, true},
                                      {"lse_d", SideKind::decode, true}};

const std::optional<Tensor>& observed_tensor(const KernelOutputs& o, const ObservedSpec& s) {
  return s.is_lse ? o.lse(s.side) : o.out(s.side);
}
std::optional<Tensor>& observed_tensor(KernelOutputs& o, const ObservedSpec& s) {
  return s.is_lse ? o.lse(s.side) : o.out(s.side);
}

// Expected dtype and shape of an observed output; empty string when fine, else what is wrong.
std::string check_observed(const Case& c, const ObservedSpec& s, const Tensor& t) {
  const Side* side = c.side(s.side);
  if (!side) return std::string("the case has no ") + (s.side == SideKind::prefill ? "prefill" : "decode") + " side";
  DType want_dtype = s.is_lse ? DType::float32 : c.dtype_o;
  std::vector<std::int64_t> want = {side->num_rows(), c.num_qo_heads};
  if (!s.is_lse) want.push_back(c.head_dim);
  if (t.dtype != want_dtype)
    return "expected dtype " + std::string(dtype_name(want_dtype)) + ", found " + std::string(dtype_name(t.dtype));
  if (t.shape != want) return "expected shape " + shape_text(want) + ", found " + shape_text(t.shape);
  return {};
}

h5::Node write_trace(const h5::Node& cases, const Trace& t, const h5::TensorWriteOptions& o, bool inputs_by_id) {
  h5::Node g = ff::write_case(cases, t.kase, ff::kTraceFormat, o,
                              inputs_by_id ? ff::InputStorage::by_id : ff::InputStorage::tensors);
  h5::Node obs = h5::create_group(g, "observed");
  for (const ObservedSpec& s : kObserved) {
    const auto& x = observed_tensor(t.observed, s);
    if (!x) continue;
    std::string bad = check_observed(t.kase, s, *x);
    if (!bad.empty()) throw FormatError("case '" + t.kase.id + "', observed '" + s.name + "': " + bad);
    h5::write_tensor(obs, s.name, *x, o);
  }
  h5::Node prov = h5::create_group(g, "provenance");
  const Provenance& p = t.provenance;
  h5::write_attr(prov, "kernel_name", p.kernel_name);
  h5::write_attr(prov, "kernel_version", p.kernel_version);
  h5::write_attr(prov, "device", p.device);
  h5::write_attr(prov, "driver", p.driver);
  h5::write_attr(prov, "date", p.date);
  h5::write_attr(prov, "source", p.source);
  h5::Node sched = h5::create_group(prov, "scheduling");
  for (const auto& [k, v] : p.scheduling) h5::write_attr(sched, k, v);
  h5::Node run = h5::create_group(g, "run");
  h5::write_attr(run, "status", std::string(run_status_name(t.run.status)));
  // free text from a kernel or a judge: kept readable (h5::kMaxAttrString), a very long one shortened visibly
  h5::write_attr(run, "message", excerpt(t.run.message, 4096));
  h5::Node exp = h5::create_group(g, "expected");
  for (std::size_t i = 0; i < t.expected.size(); ++i) {
    const Expectation& e = t.expected[i];
    h5::Node x = h5::create_group(exp, std::to_string(i));
    h5::write_attr(x, "profile", std::string(profile_name(e.profile)));
    h5::write_attr(x, "status", std::string(validation::status_name(e.status)));
    h5::write_attr(x, "diagnosis", excerpt(e.diagnosis, 4096));
    h5::write_attr(x, "reason", excerpt(e.reason, 4096));
  }
  return g;
}

std::string opt_string(const h5::Node& n, const std::string& name) {
  return h5::has_attr(n, name) ? h5::read_attr_string(n, name) : std::string();
}

// Version 1 traces recorded how the run went as scheduling facts: `not_supported` (the reason) and
// `run_failed` (a CUDA error, or "out-of-bounds writes: ..." when guard bands were overwritten).
RunRecord run_record_from_v1_scheduling(std::map<std::string, std::string>& sched) {
  RunRecord r;
  if (auto it = sched.find("not_supported"); it != sched.end()) {
    r = {RunStatus::not_supported, it->second};
    sched.erase(it);
  } else if (auto f = sched.find("run_failed"); f != sched.end()) {
    const std::string guards = "out-of-bounds writes: ";
    if (f->second.rfind(guards, 0) == 0) r = {RunStatus::guards_overwritten, f->second.substr(guards.size())};
    else r = {RunStatus::launch_failed, f->second};
    sched.erase(f);
  }
  return r;
}

Trace read_trace_group(const h5::Node& g) {
  Trace t;
  t.kase = ff::read_case(g);
  try {
    if (!h5::has_group(g, "observed")) ff::format_error(g, "observed", "missing group (a trace records observed outputs)");
    h5::Node obs = h5::open_group(g, "observed");
    for (const ObservedSpec& s : kObserved) {
      if (!h5::has_child(obs, s.name)) continue;
      std::string rel = std::string("observed/") + s.name;
      Tensor x;
      try {
        // dtype and shape from the metadata first: nothing is read that the case does not expect
        const h5::DatasetInfo info = h5::dataset_info(obs, s.name);
        Tensor meta;
        meta.shape = info.shape;
        if (auto d = info.dtype_attr ? h5::dtype_from_label(*info.dtype_attr) : std::nullopt) meta.dtype = *d;
        else ff::format_error(g, rel, "dtype attribute missing or unknown ('" + info.dtype_attr.value_or("") + "')");
        if (std::string bad = check_observed(t.kase, s, meta); !bad.empty()) ff::format_error(g, rel, bad);
        x = h5::read_tensor(obs, s.name);
      } catch (const h5::H5Error& e) {
        ff::format_error(g, rel, e.what());
      }
      std::string bad = check_observed(t.kase, s, x);
      if (!bad.empty()) ff::format_error(g, rel, bad);
      observed_tensor(t.observed, s) = std::move(x);
    }
    if (h5::has_group(g, "provenance")) {
      h5::Node prov = h5::open_group(g, "provenance");
      Provenance& p = t.provenance;
      p.kernel_name = opt_string(prov, "kernel_name");
      p.kernel_version = opt_string(prov, "kernel_version");
      p.device = opt_string(prov, "device");
      p.driver = opt_string(prov, "driver");
      p.date = opt_string(prov, "date");
      p.source = opt_string(prov, "source");
      if (h5::has_group(prov, "scheduling")) {
        h5::Node sched = h5::open_group(prov, "scheduling");
        for (const std::string& k : h5::attr_names(sched)) p.scheduling[k] = h5::read_attr_text(sched, k);
      }
    }
    // The run record: run/ from version 2 on (required), scheduling facts in version 1.
    if (h5::read_attr_int(g, "format_version") >= 2) {
      if (!h5::has_group(g, "run")) ff::format_error(g, "run", "missing group (a version 2 trace records how the run went)");
      h5::Node run = h5::open_group(g, "run");
      if (!h5::has_attr(run, "status")) ff::format_error(g, "run@status", "missing attribute");
      const std::string st = h5::read_attr_string(run, "status");
      try {
        t.run.status = run_status_from_name(st);
      } catch (const std::invalid_argument& e) {
        ff::format_error(g, "run@status", e.what());
      }
      t.run.message = opt_string(run, "message");
    } else {
      t.run = run_record_from_v1_scheduling(t.provenance.scheduling);
    }
    if (h5::has_group(g, "expected")) {
      h5::Node exp = h5::open_group(g, "expected");
      std::vector<std::string> names = h5::children(exp);
      // numeric order: "10" after "9"
      std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
        return a.size() != b.size() ? a.size() < b.size() : a < b;
      });
      for (const std::string& n : names) {
        h5::Node x = h5::open_group(exp, n);
        Expectation e;
        std::string rel = "expected/" + n;
        for (const char* req : {"profile", "status"})
          if (!h5::has_attr(x, req)) ff::format_error(g, rel + "@" + req, "missing attribute");
        try {
          e.profile = profile_from_name(h5::read_attr_string(x, "profile"));
        } catch (const std::invalid_argument& err) {
          ff::format_error(g, rel + "@profile", err.what());
        }
        try {
          e.status = validation::status_from_name(h5::read_attr_string(x, "status"));
        } catch (const std::invalid_argument& err) {
          ff::format_error(g, rel + "@status", err.what());
        }
        e.diagnosis = opt_string(x, "diagnosis");
        e.reason = opt_string(x, "reason");
        t.expected.push_back(std::move(e));
      }
    }
  } catch (const h5::H5Error& e) {
    ff::format_error(g, "", e.what());
  }
  return t;
}

h5::Node open_trace_file(const std::string& path) {
  std::string fmt;
  h5::Node root = ff::open_podcheck_file(path, &fmt);
  if (fmt != ff::kTraceFormat)
    throw FormatError("file '" + path + "': expected a '" + ff::kTraceFormat + "' file, found format '" + fmt + "'");
  return root;
}

// diff/<name> = observed - reference (float64), for every observed tensor whose side the reference has:
// where a failing kernel is off, without recomputing anything.
void write_diff(const h5::Node& case_group, const Trace& t, const PodResult& ref, const h5::TensorWriteOptions& o) {
  bool any = false;
  h5::Node g;
  for (SideKind k : {SideKind::prefill, SideKind::decode}) {
    const SideResult* r = ref.side(k);
    if (!r) continue;
    const std::string suf = k == SideKind::prefill ? "_p" : "_d";
    const std::pair<const std::optional<Tensor>*, const std::vector<double>*> items[] = {
        {&t.observed.out(k), &r->out}, {&t.observed.lse(k), &r->lse}};
    for (const auto& [obs, want] : items) {
      if (!*obs || (*obs)->numel() != static_cast<std::int64_t>(want->size())) continue;
      if (!any) {
        g = h5::create_group(case_group, "diff");
        any = true;
      }
      std::vector<double> d(want->size());
      for (std::size_t i = 0; i < d.size(); ++i) d[i] = (*obs)->get(static_cast<std::int64_t>(i)) - (*want)[i];
      const std::string name = (obs == &t.observed.out(k) ? "out" : "lse") + suf;
      h5::write_doubles(g, name, (*obs)->shape, d, DType::float64, o);
    }
  }
}

}  // namespace

struct TraceWriter::File {
  File(const std::string& path, bool force) : file(path, ff::kTraceFormat, force) {}
  ff::NewFile file;
  h5::TensorWriteOptions tensor_options;
};

TraceWriter::TraceWriter(const std::string& path, const TraceWriteOptions& options) : path_(path), options_(options) {
  ff::translate_h5_errors(path_, [&] {
    file_ = std::make_unique<File>(path_, options_.force);
    file_->tensor_options.gzip_level = options_.gzip_level;
    return 0;
  });
}

TraceWriter::~TraceWriter() = default;

void TraceWriter::add(const Trace& t) {
  if (!file_) throw FormatError("file '" + path_ + "': trace writer used after commit");
  ff::translate_h5_errors(path_, [&] {
    const h5::TensorWriteOptions& o = file_->tensor_options;
    h5::Node g = write_trace(file_->file.cases, t, o, options_.inputs_by_id);
    if (options_.with_reference) {
      // intended semantics, LSE in the case's base (what a fixture of the same case holds)
      const PodResult ref = reference_fast(t.kase);
      ff::write_reference(g, ref, DType::float64, o);
      write_diff(g, t, ref, o);
    }
    return 0;
  });
  ++count_;
}

void TraceWriter::commit() {
  if (!file_) throw FormatError("file '" + path_ + "': trace writer committed twice");
  ff::translate_h5_errors(path_, [&] {
    file_->file.writer.commit();
    return 0;
  });
  file_.reset();
}

void write_traces(const std::string& path, const std::vector<Trace>& traces, const TraceWriteOptions& options) {
  TraceWriter w(path, options);
  for (const Trace& t : traces) w.add(t);
  w.commit();
}

std::vector<std::string> list_trace_cases(const std::string& path) { return ff::case_ids(open_trace_file(path)); }

Trace read_trace(const std::string& path, const std::string& case_id) {
  h5::Node root = open_trace_file(path);
  h5::Node g = ff::open_case(root, case_id);
  return ff::translate_h5_errors(path, [&] { return read_trace_group(g); });
}

std::vector<Trace> read_traces(const std::string& path) {
  FileRead<Trace> r = read_trace_file(path);  // isolated: a libhdf5 crash is an error, not a signal
  if (!r.ok()) throw FormatError(r.error);
  std::vector<Trace> out;
  for (CaseRead<Trace>& c : r.cases) {
    if (!c.ok()) throw FormatError(c.error);
    out.push_back(std::move(*c.value));
  }
  return out;
}

FileRead<Trace> read_trace_file(const std::string& path, const ReadOptions& options) {
  isolation::Source src;
  src.list = [&] { return list_trace_cases(path); };
  src.read_case = [&](const std::string& id) { return wire::encode(read_trace(path, id)); };
  return isolation::typed<Trace>(path, isolation::read(path, src, options),
                                 [](const std::string& b) { return wire::decode<Trace>(b); });
}

namespace wire {
void put(Writer& w, const Trace& t) {
  put(w, t.kase);
  for (const auto* o : {&t.observed.out_p, &t.observed.out_d, &t.observed.lse_p, &t.observed.lse_d}) put(w, *o);
  w.u8(static_cast<std::uint8_t>(t.run.status));
  w.str(t.run.message);
  const Provenance& p = t.provenance;
  for (const std::string* s : {&p.kernel_name, &p.kernel_version, &p.device, &p.driver, &p.date, &p.source}) w.str(*s);
  w.u64(p.scheduling.size());
  for (const auto& [k, v] : p.scheduling) {
    w.str(k);
    w.str(v);
  }
  w.u64(t.expected.size());
  for (const Expectation& e : t.expected) {
    w.u8(static_cast<std::uint8_t>(e.profile));
    w.u8(static_cast<std::uint8_t>(e.status));
    w.str(e.diagnosis);
    w.str(e.reason);
  }
}
void get(Reader& r, Trace& t) {
  get(r, t.kase);
  for (auto* o : {&t.observed.out_p, &t.observed.out_d, &t.observed.lse_p, &t.observed.lse_d}) get(r, *o);
  t.run.status = static_cast<RunStatus>(r.enum8(static_cast<std::uint8_t>(RunStatus::guards_overwritten)));
  t.run.message = r.str();
  Provenance& p = t.provenance;
  for (std::string* s : {&p.kernel_name, &p.kernel_version, &p.device, &p.driver, &p.date, &p.source}) *s = r.str();
  p.scheduling.clear();
  for (std::uint64_t n = r.u64(), i = 0; i < n; ++i) {
    std::string k = r.str();
    p.scheduling[k] = r.str();
  }
  t.expected.clear();
  for (std::uint64_t n = r.u64(), i = 0; i < n; ++i) {
    Expectation e;
    e.profile = static_cast<Profile>(r.enum8(static_cast<std::uint8_t>(Profile::flashinfer_pod)));
    e.status = static_cast<validation::Status>(r.enum8(static_cast<std::uint8_t>(validation::Status::skipped)));
    e.diagnosis = r.str();
    e.reason = r.str();
    t.expected.push_back(std::move(e));
  }
}
}  // namespace wire

bool is_trace_file(const std::string& path) {
  std::string fmt;
  ff::open_podcheck_file(path, &fmt);
  return fmt == ff::kTraceFormat;
}

}  // namespace podcheck

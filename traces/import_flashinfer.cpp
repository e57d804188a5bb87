// FlashInfer recordings -> traces (import_flashinfer.hpp). Layouts: /work-independent description in
// docs/FORMAT.md ("Importing FlashInfer recordings").
#include "traces/import_flashinfer.hpp"

#include "fixtures/fixture_io.hpp"
#include "fixtures/h5/case_group.hpp"
#include "fixtures/h5/h5.hpp"
#include "fixtures/wire.hpp"
#include "traces/trace_io.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>

namespace podcheck {

namespace {

// One recorded group, read with messages that name file, recorded case and attribute/dataset.
struct Rec {
  h5::Node g;
  std::string file, name;

  [[noreturn]] void fail(const std::string& what) const {
    throw FormatError("file '" + file + "', recorded case '" + name + "': " + what);
  }
  bool has(const std::string& a) const { return h5::has_attr(g, a); }
  bool has_data(const std::string& d) const { return h5::has_dataset(g, d); }
  template <class F>
  auto attr(const std::string& a, F&& f) const {
    if (!has(a)) fail("missing attribute '" + a + "'");
    try {
      return f();
    } catch (const h5::H5Error& e) {
      fail(std::string("attribute '") + a + "': " + e.what());
    }
  }
  std::int64_t i64(const std::string& a) const { return attr(a, [&] { return h5::read_attr_int(g, a); }); }
  double f64(const std::string& a) const { return attr(a, [&] { return h5::read_attr_double(g, a); }); }
  std::string str(const std::string& a) const { return attr(a, [&] { return h5::read_attr_string(g, a); }); }
  std::string text(const std::string& a) const { return attr(a, [&] { return h5::read_attr_text(g, a); }); }
  std::int64_t i64_or(const std::string& a, std::int64_t d) const { return has(a) ? i64(a) : d; }
  double f64_or(const std::string& a, double d) const { return has(a) ? f64(a) : d; }
  std::string str_or(const std::string& a, const std::string& d) const { return has(a) ? str(a) : d; }

  // The shape from the metadata, before any data are read (dimension -1: any; empty: no check).
  std::vector<std::int64_t> shape(const std::string& d) const {
    if (!has_data(d)) fail("missing dataset '" + d + "'");
    try {
      return h5::dataset_info(g, d).shape;
    } catch (const h5::H5Error& e) {
      fail(std::string("dataset '") + d + "': " + e.what());
    }
  }
  Tensor tensor(const std::string& d, const std::vector<std::int64_t>& want = {}) const {
    if (!want.empty()) {
      const std::vector<std::int64_t> got = shape(d);
      bool ok = got.size() == want.size();
      for (std::size_t i = 0; ok && i < got.size(); ++i) ok = want[i] < 0 || want[i] == got[i];
      if (!ok) {
        std::string w, f;
        for (auto x : want) w += (w.empty() ? "" : ", ") + (x < 0 ? std::string("*") : std::to_string(x));
        for (auto x : got) f += (f.empty() ? "" : ", ") + std::to_string(x);
        fail("dataset '" + d + "': expected shape [" + w + "], found [" + f + "]");
      }
    }
    if (!has_data(d)) fail("missing dataset '" + d + "'");
    try {
      return h5::read_tensor(g, d);
    } catch (const h5::H5Error& e) {
      fail(std::string("dataset '") + d + "': " + e.what());
    }
  }
  // An integer attribute that must fit [lo, hi]: never cut to a narrower field.
  int i32(const std::string& a, std::int64_t lo, std::int64_t hi) const {
    return static_cast<int>(attr(a, [&] { return h5::read_attr_int(g, a, lo, hi); }));
  }
  int i32_or(const std::string& a, int d, std::int64_t lo, std::int64_t hi) const { return has(a) ? i32(a, lo, hi) : d; }
  std::vector<std::int32_t> ints(const std::string& d) const {
    Tensor t = tensor(d, {-1});
    if (t.dtype != DType::int32) fail("dataset '" + d + "': expected int32, found " + std::string(dtype_name(t.dtype)));
    std::vector<std::int32_t> v(t.bytes.size() / 4);
    if (!v.empty()) std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
    return v;
  }
  DType dtype(const std::string& a) const {
    std::string s = str(a);
    auto d = h5::dtype_from_label(s);
    if (!d) fail("attribute '" + a + "': unknown dtype '" + excerpt(s) + "'");
    return *d;
  }
  Layout layout(const std::string& a) const {
    std::string s = str(a);
    if (s != "NHD" && s != "HND") fail("attribute '" + a + "': expected NHD or HND, found '" + excerpt(s) + "'");
    return s == "NHD" ? Layout::NHD : Layout::HND;
  }
  MaskMode mask(const std::string& mode_attr, const std::string& causal_attr) const {
    std::int64_t m = has(mode_attr) ? i64(mode_attr) : i64(causal_attr);
    if (m < 0 || m > 2) fail("attribute '" + mode_attr + "': expected 0 (none), 1 (causal) or 2 (custom), found " + std::to_string(m));
    return m == 0 ? MaskMode::none : m == 1 ? MaskMode::causal : MaskMode::custom;
  }
  PosEncoding pos() const {
    std::string s = str_or("pos_encoding_mode", "NONE");
    if (s == "NONE") return PosEncoding::none;
    if (s == "ROPE_LLAMA") return PosEncoding::rope_llama;
    if (s == "ALIBI") return PosEncoding::alibi;
    fail("attribute 'pos_encoding_mode': expected NONE, ROPE_LLAMA or ALIBI, found '" + excerpt(s) + "'");
  }
};

std::vector<std::int32_t> iota_indptr(std::int64_t n) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(n + 1));
  for (std::int64_t i = 0; i <= n; ++i) v[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i);
  return v;
}

// Parameters shared by both sides of a launch.
void common_params(const Rec& r, SideParams& p) {
  p.logits_soft_cap = r.f64_or("logits_soft_cap", 0.0);
  p.pos_encoding = r.pos();
  p.rope_scale = r.f64_or("rope_scale", 1.0);
  p.rope_theta = r.f64_or("rope_theta", 1e4);
}

constexpr int kMaxWindow = std::numeric_limits<std::int32_t>::max();

Side dense_side(const Rec& r, const Case& c, const std::string& q, const std::string& k, const std::string& v,
                Layout layout) {
  Side s;
  s.q = r.tensor(q, {-1, c.num_qo_heads, c.head_dim});
  if (s.q.shape.size() != 3) r.fail("dataset '" + q + "': expected [rows, heads, head_dim], found rank " + std::to_string(s.q.shape.size()));
  s.qo_indptr = {0, static_cast<std::int32_t>(s.q.shape[0])};
  s.kv.paged = false;
  s.kv.layout = layout;
  const std::vector<std::int64_t> kv = layout == Layout::NHD ? std::vector<std::int64_t>{-1, c.num_kv_heads, c.head_dim}
                                                             : std::vector<std::int64_t>{c.num_kv_heads, -1, c.head_dim};
  s.kv.k = r.tensor(k, kv);
  s.kv.v = r.tensor(v, s.kv.k.shape);
  return s;
}

Side paged_side(const Rec& r, const Case& c, const std::string& q, const std::string& k, const std::string& v,
                const std::string& suffix, Layout layout, std::int64_t page_size, bool has_qo_indptr) {
  Side s;
  s.q = r.tensor(q, {-1, c.num_qo_heads, c.head_dim});
  if (s.q.shape.size() != 3) r.fail("dataset '" + q + "': expected [rows, heads, head_dim], found rank " + std::to_string(s.q.shape.size()));
  s.kv.paged = true;
  s.kv.layout = layout;
  const std::vector<std::int64_t> kv = layout == Layout::NHD
                                           ? std::vector<std::int64_t>{-1, page_size, c.num_kv_heads, c.head_dim}
                                           : std::vector<std::int64_t>{-1, c.num_kv_heads, page_size, c.head_dim};
  s.kv.k = r.tensor(k, kv);
  s.kv.v = r.tensor(v, s.kv.k.shape);
  s.kv.pages.page_size = static_cast<int>(page_size);
  s.kv.pages.indptr = r.ints("kv_indptr" + suffix);
  s.kv.pages.indices = r.ints("kv_indices" + suffix);
  s.kv.pages.last_page_len = r.ints("kv_last_page_len" + suffix);
  if (has_qo_indptr) s.qo_indptr = r.ints("qo_indptr" + suffix);
  else s.qo_indptr = iota_indptr(s.q.shape[0]);  // one query token per decode request
  return s;
}

// Page size from the cache's shape where no attribute names it.
std::int64_t page_size_of(const Rec& r, const std::string& cache, Layout layout) {
  const std::vector<std::int64_t> k = r.shape(cache);  // metadata only
  if (k.size() != 4) r.fail("dataset '" + cache + "': expected a 4-D paged cache");
  const std::int64_t ps = layout == Layout::NHD ? k[1] : k[2];
  if (ps < 1 || ps > fileformat::kMaxPageSize) r.fail("dataset '" + cache + "': page size " + std::to_string(ps) + " out of range");
  return ps;
}

void base_case(const Rec& r, Case& c) {
  c.num_qo_heads = r.i32("num_qo_heads", 1, fileformat::kMaxHeads);
  c.num_kv_heads = r.i32("num_kv_heads", 1, fileformat::kMaxHeads);
  c.head_dim = r.i32("head_dim", 1, fileformat::kMaxHeadDim);
  c.dtype_q = r.dtype("dtype_q");
  c.dtype_kv = r.dtype("dtype_kv");
  c.dtype_o = r.dtype("dtype_o");
  c.lse_base = LseBase::base2;  // FlashInfer returns log2-sum-exp (README: confirmed on every case)
  c.fp8_overflow = Fp8Overflow::saturate;
  c.seed = static_cast<std::uint64_t>(r.has("seed") ? r.attr("seed", [&] {
    return h5::read_attr_int(r.g, "seed", 0, std::numeric_limits<std::int64_t>::max());
  }) : 0);
  c.distribution = "flashinfer-recorded";
  if (r.has("special") && r.str("special") != "none") c.distribution += ":" + r.str("special");
}

void take_observed(const Rec& r, KernelOutputs& o, const std::string& out, const std::string& lse, SideKind side) {
  if (r.has_data(out)) o.out(side) = r.tensor(out);
  if (r.has_data(lse)) o.lse(side) = r.tensor(lse);
}

// File-level provenance (shared by every case of a file).
struct FileProv {
  std::string commit, device, driver, date, nvcc_flags, kernel_text;
};

FileProv file_provenance(const h5::Node& root) {
  FileProv p;
  auto s = [&](const char* a) { return h5::has_attr(root, a) ? h5::read_attr_text(root, a) : std::string(); };
  p.commit = s("flashinfer_commit");
  p.date = s("date_utc");
  p.nvcc_flags = s("nvcc_flags");
  p.kernel_text = s("flashinfer_kernel");
  if (p.kernel_text.empty()) p.kernel_text = s("flashinfer_kernels");
  p.device = s("gpu");
  std::string dev = s("device");
  if (!dev.empty()) {
    auto j = nlohmann::json::parse(dev, nullptr, false);
    if (j.is_object()) {
      if (p.device.empty() && j.contains("gpu_name")) p.device = j["gpu_name"].get<std::string>();
      std::string extra;
      if (j.contains("cc") && j["cc"].is_string()) {
        std::string cc = j["cc"].get<std::string>();
        cc.erase(std::remove(cc.begin(), cc.end(), '.'), cc.end());
        extra = "sm_" + cc;
      }
      if (j.contains("num_sms") && j["num_sms"].is_number_integer())
        extra += (extra.empty() ? "" : ", ") + std::to_string(j["num_sms"].get<int>()) + " SMs";
      if (!extra.empty()) p.device += " (" + extra + ")";
    }
  }
  std::string smi = s("nvidia_smi");  // "NVIDIA H200, 580.159.04, 143771 MiB"
  auto a = smi.find(", ");
  if (a != std::string::npos) {
    auto b = smi.find(",", a + 2);
    p.driver = smi.substr(a + 2, b == std::string::npos ? std::string::npos : b - a - 2);
  }
  return p;
}

Provenance case_provenance(const Rec& r, const FileProv& fp, const std::string& kernel_name) {
  Provenance p;
  p.kernel_name = kernel_name;
  p.kernel_version = fp.commit.empty() ? "unknown" : "flashinfer@" + fp.commit;
  p.device = fp.device;
  p.driver = fp.driver;
  p.date = fp.date;
  p.source = "podcheck import flashinfer: " + std::filesystem::path(r.file).filename().string() + " group '" + r.name + "'";
  if (!fp.nvcc_flags.empty()) p.scheduling["nvcc_flags"] = fp.nvcc_flags;
  if (!fp.kernel_text.empty()) p.scheduling["kernel_source"] = fp.kernel_text;
  for (const char* k : {"plan_info", "plan_info_p", "plan_info_d", "cta_tile_q_p", "cta_tile_q_expected",
                        "prefill_split_kv_observed", "split_kv_observed", "split_kv", "num_colocated_ctas",
                        "kv_chunk_size_tokens_p", "kv_chunk_size_tokens_d", "deterministic_2runs", "enable_pdl",
                        "kernel", "variant", "backend", "use_tensor_cores", "rope_rcp_scale_f32", "rope_rcp_theta_f32",
                        "sm_scale", "sm_scale_p", "sm_scale_d", "note", "tu"})
    if (r.has(k)) p.scheduling[k] = r.text(k);
  return p;
}

using validation::Status;

void expect_pass(Trace& t, std::initializer_list<Profile> profiles) {
  for (Profile p : profiles) t.expected.push_back({p, Status::passed, "", "FlashInfer matches the float64 model (README)"});
}

Trace import_single_pod(const Rec& r, const FileProv& fp) {
  Trace t;
  Case& c = t.kase;
  c.id = "fi_pod_" + r.name;
  base_case(r, c);
  Side p = dense_side(r, c, "q_p", "k_p", "v_p", r.layout("layout_p"));
  common_params(r, p.params);
  p.params.mask_mode = r.mask("mask_mode_p", "causal_p");
  p.params.window_left = r.i32_or("window_left_p", -1, -1, kMaxWindow);
  p.params.sm_scale = r.f64("sm_scale_p_f32");
  if (p.params.mask_mode == MaskMode::custom) {
    Tensor m = r.tensor("custom_mask_p_packed");
    p.params.custom_mask = m.bytes;
    p.params.custom_mask_indptr = {0, static_cast<std::int64_t>(m.bytes.size())};
  }
  Layout ld = r.layout("layout_d");
  std::int64_t ps = r.has("page_size_d") ? r.i32("page_size_d", 1, fileformat::kMaxPageSize) : page_size_of(r, "paged_k_cache", ld);
  Side d = paged_side(r, c, "q_d", "paged_k_cache", "paged_v_cache", "_d", ld, ps, r.has_data("qo_indptr_d"));
  common_params(r, d.params);
  d.params.mask_mode = r.mask("mask_mode_d", "mask_mode_d");
  d.params.window_left = r.i32_or("window_left_d", -1, -1, kMaxWindow);
  d.params.sm_scale = r.f64("sm_scale_d_f32");
  c.prefill = std::move(p);
  c.decode = std::move(d);
  take_observed(r, t.observed, "out_p", "lse_p", SideKind::prefill);
  take_observed(r, t.observed, "out_d", "lse_d", SideKind::decode);
  t.provenance = case_provenance(r, fp, "flashinfer-pod");
  if (c.num_qo_heads / c.num_kv_heads > 16) {
    // README "A real defect": the POD decode CTA tile is 16 while the plan sizes work for 64.
    for (Profile prof : {Profile::intended, Profile::flashinfer, Profile::flashinfer_pod})
      t.expected.push_back({prof, Status::incorrect, "never written",
                            "FlashInfer POD decode never writes query heads 16-31 of each GQA group (group " +
                                std::to_string(c.num_qo_heads / c.num_kv_heads) +
                                " > decode CTA tile 16; SPEC 11 item 9): NaN sentinel left in out_d/lse_d"});
  } else {
    expect_pass(t, {Profile::intended, Profile::flashinfer, Profile::flashinfer_pod});
  }
  return t;
}

Trace import_batch_pod(const Rec& r, const FileProv& fp) {
  Trace t;
  Case& c = t.kase;
  c.id = "fi_batchpod_" + r.name;
  base_case(r, c);
  Layout l = r.layout("kv_layout");
  std::int64_t ps = r.i32("page_size", 1, fileformat::kMaxPageSize);
  int window = r.i32_or("window_left", -1, -1, kMaxWindow);
  double sm = r.f64("sm_scale_f32");
  Side p = paged_side(r, c, "q_p", "paged_k_cache_p", "paged_v_cache_p", "_p", l, ps, true);
  Side d = paged_side(r, c, "q_d", "paged_k_cache_d", "paged_v_cache_d", "_d", l, ps, r.has_data("qo_indptr_d"));
  for (Side* s : {&p, &d}) {
    common_params(r, s->params);
    s->params.window_left = window;  // one window_left for both sides
    s->params.sm_scale = sm;
  }
  p.params.mask_mode = r.mask("mask_mode_p", "causal_p");
  d.params.mask_mode = r.has("mask_mode_d") ? r.mask("mask_mode_d", "mask_mode_d") : MaskMode::none;
  c.prefill = std::move(p);
  c.decode = std::move(d);
  take_observed(r, t.observed, "out_p", "lse_p", SideKind::prefill);
  take_observed(r, t.observed, "out_d", "lse_d", SideKind::decode);
  t.provenance = case_provenance(r, fp, "flashinfer-batch-pod");
  expect_pass(t, {Profile::intended, Profile::flashinfer, Profile::flashinfer_pod});
  return t;
}

Trace import_feature(const Rec& r, const FileProv& fp) {
  Trace t;
  Case& c = t.kase;
  base_case(r, c);
  std::string kind = r.str("kind");
  Layout l = r.layout("layout");
  Side s;
  SideKind sk;
  if (kind == "single_prefill") {
    c.id = "fi_prefill_" + r.name;
    sk = SideKind::prefill;
    s = dense_side(r, c, "q", "k", "v", l);
    s.params.mask_mode = r.mask("mask_mode", "causal");
  } else if (kind == "batch_decode") {
    c.id = "fi_decode_" + r.name;
    sk = SideKind::decode;
    std::int64_t ps = r.has("page_size") ? r.i32("page_size", 1, fileformat::kMaxPageSize) : page_size_of(r, "paged_k_cache", l);
    s = paged_side(r, c, "q", "paged_k_cache", "paged_v_cache", "", l, ps, r.has_data("qo_indptr"));
    s.params.mask_mode = r.has("mask_mode") ? r.mask("mask_mode", "mask_mode") : MaskMode::none;
  } else {
    r.fail("attribute 'kind': expected 'single_prefill' or 'batch_decode', found '" + kind + "'");
  }
  common_params(r, s.params);
  s.params.window_left = r.i32_or("window_left", -1, -1, kMaxWindow);
  s.params.sm_scale = r.f64("sm_scale_f32");
  if (s.params.pos_encoding == PosEncoding::alibi) {
    if (!r.has_data("alibi_slopes")) r.fail("ALIBI case without dataset 'alibi_slopes'");
    s.params.alibi_slopes = r.tensor("alibi_slopes").to_doubles();
  }
  (sk == SideKind::prefill ? c.prefill : c.decode) = std::move(s);
  take_observed(r, t.observed, "out", "lse", sk);
  t.provenance = case_provenance(r, fp, sk == SideKind::prefill ? "flashinfer-single-prefill" : "flashinfer-batch-decode");
  bool double_scale = c.side(sk)->params.pos_encoding == PosEncoding::alibi && c.side(sk)->params.logits_soft_cap > 0;
  if (double_scale) {
    t.expected.push_back({Profile::intended, Status::incorrect, "sm_scale applied twice",
                          "FlashInfer with ALiBi and soft cap computes cap*tanh((sm_scale*x + bias)*sm_scale/cap) (SPEC 2.2)"});
    t.expected.push_back({Profile::flashinfer, Status::passed, "", "the flashinfer profile models the double sm_scale"});
  } else {
    expect_pass(t, {Profile::intended, Profile::flashinfer});
  }
  return t;
}

}  // namespace

namespace {
h5::Node open_recording(const std::string& path) {
  try {
    return h5::open_file(path);
  } catch (const h5::H5Error& e) {
    throw FormatError(e.what());
  }
}

// The recorded groups of a file, sorted.
std::vector<std::string> recorded_groups(const std::string& path, const h5::Node& root) {
  std::vector<std::string> names;
  try {
    for (const std::string& name : h5::children(root))
      if (h5::has_group(root, name)) names.push_back(name);
  } catch (const h5::H5Error& e) {
    throw FormatError("file '" + path + "': " + e.what());
  }
  if (names.empty()) throw FormatError("file '" + path + "': no recorded cases (no groups at the root)");
  return names;
}

Trace import_group(const std::string& path, const h5::Node& root, const FileProv& fp, const std::string& name) {
  try {
    Rec r{h5::open_group(root, name), path, name};
    if (name.find('/') != std::string::npos) r.fail("group name contains '/'");
    Trace t;
    if (r.has("kind")) t = import_feature(r, fp);
    else if (r.has_data("paged_k_cache_p")) t = import_batch_pod(r, fp);
    else if (r.has_data("q_p")) t = import_single_pod(r, fp);
    else r.fail("unknown layout: neither a single POD (q_p), a BatchPOD (paged_k_cache_p) nor a feature case (kind)");
    try {
      validate_case(t.kase);
    } catch (const InvalidCase& e) {
      r.fail(std::string("the recorded case is not valid: ") + e.what());
    }
    return t;
  } catch (const h5::H5Error& e) {
    throw FormatError("file '" + path + "', recorded case '" + name + "': " + e.what());
  }
}

FileProv file_provenance_of(const std::string& path, const h5::Node& root) {
  try {
    return file_provenance(root);
  } catch (const h5::H5Error& e) {
    throw FormatError("file '" + path + "': " + e.what());
  }
}
}  // namespace

std::vector<Trace> import_flashinfer(const std::string& path) {
  h5::Node root = open_recording(path);
  const FileProv fp = file_provenance_of(path, root);
  std::vector<Trace> out;
  for (const std::string& name : recorded_groups(path, root)) out.push_back(import_group(path, root, fp, name));
  return out;
}

FileRead<Trace> import_flashinfer_file(const std::string& path, const ReadOptions& options) {
  isolation::Source src;
  src.list = [&] { return recorded_groups(path, open_recording(path)); };
  src.read_case = [&](const std::string& name) {
    h5::Node root = open_recording(path);
    return wire::encode(import_group(path, root, file_provenance_of(path, root), name));
  };
  return isolation::typed<Trace>(path, isolation::read(path, src, options),
                                 [](const std::string& b) { return wire::decode<Trace>(b); });
}

}  // namespace podcheck

// Case and Side, built directly from every parameter the trace format has (docs/FORMAT.md: the case group's
// attributes, the side groups' attributes and datasets, under the same names). A case is validated when it is
// made, with the checks a file's case gets: validate_case, then the readers' rule that every input element a
// request reads is finite. The FlashInfer-shaped constructors (podcheck/flashinfer.py) build on these.
#include "bindings.hpp"

#include "fixtures/input_check.hpp"

#include <pybind11/stl.h>

#include <cmath>

namespace podcheck::python {

namespace {

std::optional<py::array> optional_indices(const std::vector<std::int32_t>& v, bool present) {
  if (!present) return std::nullopt;
  py::array_t<std::int32_t> a(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

Side make_side(py::handle qo_indptr, py::handle q, py::handle k, py::handle v, py::handle kv, const std::string& layout,
               int page_size, py::handle kv_indptr, py::handle kv_indices, py::handle kv_last_page_len,
               const std::string& mask_mode, py::handle custom_mask, py::handle custom_mask_indptr, int window_left,
               std::optional<double> sm_scale, double logits_soft_cap, const std::string& pos_encoding,
               double rope_scale, double rope_theta, std::optional<std::vector<double>> alibi_slopes, double q_scale,
               double k_scale, double v_scale) {
  Side s;
  s.qo_indptr = index_arg(qo_indptr, "qo_indptr");
  s.q = tensor_arg(q, "q");
  s.kv.layout = layout_from_name(layout);
  s.kv.paged = !kv_indptr.is_none();
  if (s.kv.paged) {
    if (kv_indices.is_none() || kv_last_page_len.is_none())
      throw py::value_error("a paged side needs kv_indptr, kv_indices and kv_last_page_len");
    if (page_size <= 0) throw py::value_error("a paged side needs page_size (> 0)");
    s.kv.pages.page_size = page_size;
    s.kv.pages.indptr = index_arg(kv_indptr, "kv_indptr");
    s.kv.pages.indices = index_arg(kv_indices, "kv_indices");
    s.kv.pages.last_page_len = index_arg(kv_last_page_len, "kv_last_page_len");
  } else if (!kv_indices.is_none() || !kv_last_page_len.is_none()) {
    throw py::value_error("kv_indices / kv_last_page_len given without kv_indptr");
  }
  if (!kv.is_none()) {
    if (!k.is_none() || !v.is_none()) throw py::value_error("give either kv (stacked K/V) or k and v, not both");
    if (!s.kv.paged) throw py::value_error("a stacked kv tensor is paged storage: give its page table (kv_indptr, ...)");
    s.kv.kv_stacked = tensor_arg(kv, "kv");
  } else {
    if (k.is_none() || v.is_none()) throw py::value_error("give k and v (or a stacked kv for paged storage)");
    s.kv.k = tensor_arg(k, "k");
    s.kv.v = tensor_arg(v, "v");
  }
  SideParams& p = s.params;
  p.mask_mode = mask_mode_from_name(mask_mode);
  if (!custom_mask.is_none()) p.custom_mask = tensor_arg(custom_mask, "custom_mask", DType::uint8).bytes;
  if (!custom_mask_indptr.is_none()) {
    const auto ind = index_arg(custom_mask_indptr, "custom_mask_indptr");
    p.custom_mask_indptr.assign(ind.begin(), ind.end());
  }
  p.window_left = window_left;
  p.sm_scale = sm_scale;
  p.logits_soft_cap = logits_soft_cap;
  p.pos_encoding = pos_encoding_from_name(pos_encoding);
  p.rope_scale = rope_scale;
  p.rope_theta = rope_theta;
  if (alibi_slopes) p.alibi_slopes = *alibi_slopes;
  p.q_scale = q_scale;
  p.k_scale = k_scale;
  p.v_scale = v_scale;
  return s;
}

Case make_case(const std::string& id, int num_qo_heads, int num_kv_heads, int head_dim, std::optional<Side> prefill,
               std::optional<Side> decode, py::handle dtype_q, py::handle dtype_kv, py::handle dtype_o,
               py::handle lse_base, const std::string& fp8_overflow, std::uint64_t seed,
               const std::string& distribution) {
  Case c;
  c.id = id;
  c.num_qo_heads = num_qo_heads;
  c.num_kv_heads = num_kv_heads;
  c.head_dim = head_dim;
  c.prefill = std::move(prefill);
  c.decode = std::move(decode);
  const Side* first = c.prefill ? &*c.prefill : c.decode ? &*c.decode : nullptr;
  if (!first) throw InvalidCase("case '" + id + "' has neither a prefill nor a decode side");
  // Unless said, the dtypes are those of the tensors; the output's is the query's (FlashInfer's default).
  c.dtype_q = optional_dtype_arg(dtype_q).value_or(first->q.dtype);
  c.dtype_kv = optional_dtype_arg(dtype_kv).value_or(first->kv.k_tensor().dtype);
  c.dtype_o = optional_dtype_arg(dtype_o).value_or(c.dtype_q);
  c.lse_base = lse_base_from_name(std::string(py::str(lse_base)));
  c.fp8_overflow = fp8_overflow_from_name(fp8_overflow);
  c.seed = seed;
  c.distribution = distribution;
  if (c.id.empty() || c.id.find('/') != std::string::npos)
    throw InvalidCase("case id '" + c.id + "' must be non-empty and hold no '/'");
  validate_case(c);
  if (const std::string what = nonfinite_input(c); !what.empty()) throw InvalidCase("case '" + c.id + "', " + what);
  return c;
}

std::string side_text(const Side& s) {
  std::string t = std::to_string(s.num_requests()) + " request(s), " + std::to_string(s.num_rows()) + " rows, ";
  if (s.kv.paged) {
    t += std::string("paged ") + std::string(layout_name(s.kv.layout)) + (s.kv.stacked() ? " stacked" : "") +
         " page_size " + std::to_string(s.kv.pages.page_size);
  } else {
    t += "dense " + std::string(layout_name(s.kv.layout)) + " kv_len " + std::to_string(s.kv_len(0));
  }
  t += ", mask " + std::string(mask_mode_name(s.params.mask_mode));
  if (s.params.window_left >= 0) t += ", window_left " + std::to_string(s.params.window_left);
  if (s.params.pos_encoding != PosEncoding::none) t += ", " + std::string(pos_encoding_name(s.params.pos_encoding));
  if (s.params.logits_soft_cap > 0) t += ", soft cap " + std::to_string(s.params.logits_soft_cap);
  return t;
}

py::object side_of(Case& c, SideKind k, py::handle self) {
  Side* s = c.side(k);
  return s ? py::cast(s, py::return_value_policy::reference_internal, self) : py::none();
}

}  // namespace

void bind_cases(py::module_& m) {
  py::class_<Side>(m, "Side",
                   "One side of a case (docs/FORMAT.md, side groups): query rows ragged by qo_indptr attending to "
                   "dense K/V (one request) or a paged cache reached through kv_indptr / kv_indices / "
                   "kv_last_page_len; the side's mask, window, scales and position encoding.")
      .def(py::init(&make_side), py::arg("qo_indptr"), py::arg("q"), py::kw_only(), py::arg("k") = py::none(),
           py::arg("v") = py::none(), py::arg("kv") = py::none(), py::arg("layout") = "NHD", py::arg("page_size") = 0,
           py::arg("kv_indptr") = py::none(), py::arg("kv_indices") = py::none(),
           py::arg("kv_last_page_len") = py::none(), py::arg("mask_mode") = "none",
           py::arg("custom_mask") = py::none(), py::arg("custom_mask_indptr") = py::none(),
           py::arg("window_left") = -1, py::arg("sm_scale") = py::none(), py::arg("logits_soft_cap") = 0.0,
           py::arg("pos_encoding") = "NONE", py::arg("rope_scale") = 1.0, py::arg("rope_theta") = 1e4,
           py::arg("alibi_slopes") = py::none(), py::arg("q_scale") = 1.0, py::arg("k_scale") = 1.0,
           py::arg("v_scale") = 1.0)
      .def_property_readonly("num_requests", &Side::num_requests)
      .def_property_readonly("num_rows", &Side::num_rows)
      .def_property_readonly("qo_indptr", [](const Side& s) { return *optional_indices(s.qo_indptr, true); })
      .def_property_readonly("q", [](const Side& s) -> const Tensor& { return s.q; },
                             py::return_value_policy::reference_internal)
      .def_property_readonly("paged", [](const Side& s) { return s.kv.paged; })
      .def_property_readonly("stacked", [](const Side& s) { return s.kv.stacked(); })
      .def_property_readonly("layout", [](const Side& s) { return std::string(layout_name(s.kv.layout)); })
      .def_property_readonly("k", [](const Side& s) { return s.kv.stacked() ? std::nullopt : std::optional(s.kv.k); })
      .def_property_readonly("v", [](const Side& s) { return s.kv.stacked() ? std::nullopt : std::optional(s.kv.v); })
      .def_property_readonly("kv", [](const Side& s) { return s.kv.kv_stacked; })
      .def_property_readonly("page_size", [](const Side& s) { return s.kv.paged ? s.kv.pages.page_size : 0; })
      .def_property_readonly("kv_indptr", [](const Side& s) { return optional_indices(s.kv.pages.indptr, s.kv.paged); })
      .def_property_readonly("kv_indices", [](const Side& s) { return optional_indices(s.kv.pages.indices, s.kv.paged); })
      .def_property_readonly("kv_last_page_len",
                             [](const Side& s) { return optional_indices(s.kv.pages.last_page_len, s.kv.paged); })
      .def_property_readonly("kv_lens",
                             [](const Side& s) {
                               std::vector<std::int64_t> out;
                               for (int r = 0; r < s.num_requests(); ++r) out.push_back(s.kv_len(r));
                               return out;
                             })
      .def_property_readonly("mask_mode", [](const Side& s) { return std::string(mask_mode_name(s.params.mask_mode)); })
      .def_property_readonly("window_left", [](const Side& s) { return s.params.window_left; })
      .def_property_readonly("sm_scale", [](const Side& s) { return s.params.sm_scale; })
      .def_property_readonly("logits_soft_cap", [](const Side& s) { return s.params.logits_soft_cap; })
      .def_property_readonly("pos_encoding",
                             [](const Side& s) { return std::string(pos_encoding_name(s.params.pos_encoding)); })
      .def_property_readonly("rope_scale", [](const Side& s) { return s.params.rope_scale; })
      .def_property_readonly("rope_theta", [](const Side& s) { return s.params.rope_theta; })
      .def_property_readonly("alibi_slopes", [](const Side& s) { return s.params.alibi_slopes; })
      .def_property_readonly("q_scale", [](const Side& s) { return s.params.q_scale; })
      .def_property_readonly("k_scale", [](const Side& s) { return s.params.k_scale; })
      .def_property_readonly("v_scale", [](const Side& s) { return s.params.v_scale; })
      .def("__repr__", [](const Side& s) { return "podcheck.Side(" + side_text(s) + ")"; });

  py::class_<Case>(m, "Case",
                   "One POD invocation (docs/FORMAT.md, case group): a prefill side, a decode side, or both. "
                   "Validated when made (as a file's case is read): shapes, dtypes, page tables, masks, "
                   "parameters, and finite inputs wherever a request reads.")
      .def(py::init(&make_case), py::arg("id"), py::arg("num_qo_heads"), py::arg("num_kv_heads"),
           py::arg("head_dim"), py::kw_only(), py::arg("prefill") = py::none(), py::arg("decode") = py::none(),
           py::arg("dtype_q") = py::none(), py::arg("dtype_kv") = py::none(), py::arg("dtype_o") = py::none(),
           py::arg("lse_base") = "2", py::arg("fp8_overflow") = "saturate", py::arg("seed") = 0,
           py::arg("distribution") = "python")
      .def_property(
          "id", [](const Case& c) { return c.id; },
          [](Case& c, const std::string& id) {
            if (id.empty() || id.find('/') != std::string::npos)
              throw InvalidCase("case id '" + id + "' must be non-empty and hold no '/'");
            c.id = id;
          })
      .def_property_readonly("kind", &Case::kind)
      .def_readonly("num_qo_heads", &Case::num_qo_heads)
      .def_readonly("num_kv_heads", &Case::num_kv_heads)
      .def_readonly("head_dim", &Case::head_dim)
      .def_property_readonly("dtype_q", [](const Case& c) { return std::string(dtype_name(c.dtype_q)); })
      .def_property_readonly("dtype_kv", [](const Case& c) { return std::string(dtype_name(c.dtype_kv)); })
      .def_property_readonly("dtype_o", [](const Case& c) { return std::string(dtype_name(c.dtype_o)); })
      .def_property_readonly("prefill", [](py::object self) { return side_of(self.cast<Case&>(), SideKind::prefill, self); })
      .def_property_readonly("decode", [](py::object self) { return side_of(self.cast<Case&>(), SideKind::decode, self); })
      .def_property_readonly("lse_base", [](const Case& c) { return std::string(lse_base_name(c.lse_base)); })
      .def_property_readonly("fp8_overflow", [](const Case& c) { return std::string(fp8_overflow_name(c.fp8_overflow)); })
      .def_readonly("seed", &Case::seed)
      .def_readonly("distribution", &Case::distribution)
      .def("__repr__", [](const Case& c) {
        std::string t = "podcheck.Case('" + c.id + "', " + c.kind() + ", H_qo " + std::to_string(c.num_qo_heads) +
                        ", H_kv " + std::to_string(c.num_kv_heads) + ", D " + std::to_string(c.head_dim) + ", " +
                        std::string(dtype_name(c.dtype_q)) + "/" + std::string(dtype_name(c.dtype_kv)) + "->" +
                        std::string(dtype_name(c.dtype_o)) + ", LSE base " + std::string(lse_base_name(c.lse_base));
        if (c.prefill) t += "; prefill: " + side_text(*c.prefill);
        if (c.decode) t += "; decode: " + side_text(*c.decode);
        return t + ")";
      });
}

}  // namespace podcheck::python

// Tensors between Python and the case model: in through podcheck/_arrays.py (which turns numpy, torch, DLPack
// and ml_dtypes arrays into storage arrays without changing a bit), out as storage or decoded float64 arrays.
#include "bindings.hpp"

#include <pybind11/stl.h>

#include <cstring>
#include <stdexcept>

namespace podcheck::python {

namespace {

// Kept for the process and never destroyed: a static py::object would be released after the interpreter
// has finalised.
py::handle arrays_module() {
  static py::object* mod = new py::object(py::module_::import("podcheck._arrays"));
  return *mod;
}

std::vector<py::ssize_t> shape_of(const Tensor& t) { return {t.shape.begin(), t.shape.end()}; }

py::dtype numpy_storage_dtype(DType t) {
  switch (t) {
    case DType::float16: return py::dtype::from_args(py::str("float16"));
    case DType::bfloat16: return py::dtype::from_args(py::str("uint16"));
    case DType::float8_e4m3fn:
    case DType::float8_e5m2:
    case DType::uint8: return py::dtype::from_args(py::str("uint8"));
    case DType::float32: return py::dtype::from_args(py::str("float32"));
    case DType::float64: return py::dtype::from_args(py::str("float64"));
    case DType::int32: return py::dtype::from_args(py::str("int32"));
  }
  throw std::logic_error("dtype");
}

}  // namespace

DType dtype_arg(const std::string& name) { return dtype_from_name(name); }

std::optional<DType> optional_dtype_arg(py::handle obj) {
  if (obj.is_none()) return std::nullopt;
  std::string name = py::str(obj);
  if (name.rfind("torch.", 0) == 0) name = name.substr(6);  // torch.bfloat16, as FlashInfer's *_data_type take
  return dtype_arg(name);
}

Tensor tensor_arg(py::handle obj, const char* what, std::optional<DType> dtype) {
  if (py::isinstance<Tensor>(obj)) {
    Tensor t = obj.cast<Tensor>();
    if (dtype && t.dtype != *dtype)
      throw py::value_error(std::string(what) + ": a " + std::string(dtype_name(t.dtype)) + " tensor was given where " +
                            std::string(dtype_name(*dtype)) + " is required");
    return t;
  }
  py::object want = dtype ? py::object(py::str(std::string(dtype_name(*dtype)))) : py::object(py::none());
  py::tuple st = arrays_module().attr("storage")(obj, want, what);
  py::array a = st[0];
  Tensor t;
  try {
    t.dtype = dtype_from_name(st[1].cast<std::string>());
  } catch (const std::invalid_argument& e) {
    throw py::value_error(std::string(what) + ": " + e.what());
  }
  if (static_cast<std::size_t>(a.itemsize()) != dtype_size(t.dtype))
    throw py::value_error(std::string(what) + ": storage of " + std::to_string(a.itemsize()) + " bytes per element for " +
                          std::string(dtype_name(t.dtype)));
  for (py::ssize_t i = 0; i < a.ndim(); ++i) t.shape.push_back(a.shape(i));
  t.bytes.resize(static_cast<std::size_t>(a.nbytes()));
  if (!t.bytes.empty()) std::memcpy(t.bytes.data(), a.data(), t.bytes.size());  // C-contiguous (_arrays.storage)
  return t;
}

std::vector<std::int32_t> index_arg(py::handle obj, const char* what) {
  py::array_t<std::int32_t> a = arrays_module().attr("indices")(obj, what);
  return {a.data(), a.data() + a.size()};
}

py::array storage_array(const Tensor& t) {
  py::array a(numpy_storage_dtype(t.dtype), shape_of(t));
  if (!t.bytes.empty()) std::memcpy(a.mutable_data(), t.bytes.data(), t.bytes.size());
  return a;
}

py::array_t<double> double_array(const std::vector<double>& v, const std::vector<std::int64_t>& shape) {
  py::array_t<double> a(std::vector<py::ssize_t>(shape.begin(), shape.end()));
  if (!v.empty()) std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(double));
  return a;
}

py::array_t<double> values_array(const Tensor& t) { return double_array(t.to_doubles(), t.shape); }

void bind_tensors(py::module_& m) {
  py::class_<Tensor>(m, "Tensor",
                     "A tensor as podcheck keeps it: logical dtype, shape, storage bits (docs/FORMAT.md, Tensors).")
      .def(py::init([](py::handle array, py::handle dtype) {
             return tensor_arg(array, "Tensor", optional_dtype_arg(dtype));
           }),
           py::arg("array"), py::arg("dtype") = py::none(),
           "From numpy, torch (any device), DLPack or ml_dtypes arrays, bits kept. Raw-bits arrays need dtype: "
           "uint16 with dtype='bfloat16', uint8 with dtype='float8_e4m3fn' or 'float8_e5m2'.")
      .def_property_readonly("dtype", [](const Tensor& t) { return std::string(dtype_name(t.dtype)); })
      .def_property_readonly("shape", [](const Tensor& t) { return py::tuple(py::cast(t.shape)); })
      .def("numpy", &storage_array, "The storage array (bfloat16 as uint16 bits, float8 as uint8 bits).")
      .def("values", &values_array, "The values, decoded exactly, as float64.")
      .def("__repr__", [](const Tensor& t) {
        return "podcheck.Tensor(" + std::string(dtype_name(t.dtype)) + ", " + t.shape_string() + ")";
      });
}

}  // namespace podcheck::python

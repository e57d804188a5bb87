// What the binding files share: the bind_* function of each concern (module.cpp calls them in order) and the
// two conversions every entry point needs — arrays in (through podcheck/_arrays.py, which knows numpy, torch,
// DLPack and ml_dtypes) and names in (dtype, policy, profile, ...), with errors as Python exceptions.
#pragma once

#include "reference/case.hpp"
#include "reference/tensor.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace podcheck::python {

namespace py = pybind11;

void bind_tensors(py::module_& m);
void bind_cases(py::module_& m);
void bind_judging(py::module_& m);
void bind_traces(py::module_& m);
void bind_gpu(py::module_& m);

// A Tensor from a podcheck.Tensor or anything podcheck._arrays.storage() takes (numpy, torch, DLPack, the
// array interface, nested lists). `dtype`: the logical dtype the tensor must have (nullopt: the array's own);
// raw-bits arrays (uint16 for bfloat16, uint8 for float8) need it. `what` names the argument in errors.
Tensor tensor_arg(py::handle obj, const char* what, std::optional<DType> dtype = std::nullopt);
// Index arrays (qo_indptr, kv_indices, ...): integers converted to int32 without loss, else ValueError.
std::vector<std::int32_t> index_arg(py::handle obj, const char* what);
// The storage array of a tensor (float16, uint16 bits for bfloat16, uint8 bits for float8, float32, ...).
py::array storage_array(const Tensor& t);
// Decoded values, float64, same shape.
py::array_t<double> values_array(const Tensor& t);
py::array_t<double> double_array(const std::vector<double>& v, const std::vector<std::int64_t>& shape);

// Names (docs/FORMAT.md spellings) with ValueError naming the choices.
DType dtype_arg(const std::string& name);
// py::none() -> nullopt
std::optional<DType> optional_dtype_arg(py::handle obj);

}  // namespace podcheck::python

// The extension module podcheck._podcheck; the package podcheck (podcheck/__init__.py) is its public face.
#include "bindings.hpp"

#include "fixtures/fixture_io.hpp"

#include <omp.h>

namespace podcheck::python {

PYBIND11_MODULE(_podcheck, m) {
  m.doc() = "podcheck's C++ reference, judging and trace files (docs/PYTHON.md)";
  // A case the model refuses, and a file the readers refuse: ValueError, with the message naming what is wrong.
  py::register_exception<InvalidCase>(m, "InvalidCaseError", PyExc_ValueError);
  py::register_exception<FormatError>(m, "FormatError", PyExc_ValueError);
  m.def("set_threads", [](int n) { omp_set_num_threads(n); }, py::arg("n"),
        "OpenMP threads of the reference and the judging (the CLI's -j); the default is all cores "
        "(or OMP_NUM_THREADS).");
  m.def("threads", [] { return omp_get_max_threads(); });
  bind_tensors(m);
  bind_cases(m);
  bind_judging(m);
  bind_traces(m);
  bind_gpu(m);
}

}  // namespace podcheck::python

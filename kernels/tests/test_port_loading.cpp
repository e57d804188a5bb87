// Host-side test (no GPU): a port written in plain C (tests/stub_port.c, a shared library) is loaded with
// dlopen through KernelHandle::load, exactly as `podcheck run --kernel-lib PATH.so` does; the entry points
// resolve, the info and the not-supported reason come back. The built-in kernel's table answers the same way.
#include "kernels/host/case_problem.hpp"
#include "kernels/host/kernel_runner.hpp"
#include "kernels/tests/test_cases.hpp"
#include "testing/catch.hpp"

#include <stdexcept>
#include <cstdlib>
#include <string>

using namespace podcheck;
using namespace podcheck::kernels;

TEST_CASE("a plain-C port loads with dlopen and answers through the ABI", "[kernels][host]") {
  // PODCHECK_STUB_PORT in the environment overrides the build-tree path (binaries run from another tree).
  const char* env_port = std::getenv("PODCHECK_STUB_PORT");
  const KernelHandle port = KernelHandle::load(env_port && *env_port ? env_port : PODCHECK_STUB_PORT);
  CHECK(port.name() == "stub-port");
  CHECK(port.version() == "0.1");
  test::CaseSpec s;
  s.head_dim = 128;
  s.decode.present = true;
  s.decode.qo_lens = {1, 1};
  s.decode.kv_lens = {5, 40};
  const Case c = test::build_case(s);
  PackedProblem pp;
  pack_case(c, pp);
  CHECK(port.vtable().supports(&pp.problem) == POD_NOT_SUPPORTED);
  CHECK(std::string(port.vtable().last_error()) == "stub-port: head_dim 128 is not supported");
  pp.problem.abi_version = 99;
  CHECK(port.vtable().supports(&pp.problem) == POD_INVALID);
  // The built-in kernel supports the same problem (it only plans on the host here: no launch).
  pp.problem.abi_version = POD_ABI_VERSION;
  const KernelHandle builtin = KernelHandle::builtin();
  CHECK(builtin.name() == "podcheck-cuda");
  CHECK(builtin.vtable().supports(&pp.problem) == POD_OK);
}

TEST_CASE("loading a missing kernel library names the file", "[kernels][host]") {
  try {
    (void)KernelHandle::load("/nonexistent/libport.so");
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("/nonexistent/libport.so") != std::string::npos);
  }
}

// Trace files: C++ round trip (observed NaN sentinels bit-exact, provenance, expectations), a trace
// written by h5py alone (docs/FORMAT.md) read and checked value by value, malformed observed outputs.
#include "fixtures/case_digest.hpp"
#include "fixtures/h5/h5.hpp"
#include "fixtures/sweep.hpp"
#include "fixtures/tests/format_test_util.hpp"
#include "testing/catch.hpp"
#include "traces/trace_io.hpp"

#include <cmath>
#include <cstring>
#include <filesystem>

using namespace podcheck;
using podcheck::test::TempDir;

namespace {
Trace small_trace() {
  Trace t;
  t.kase = test::small_single_case();
  const Case& c = t.kase;
  t.observed.out_p = test::lcg_tensor(c.dtype_o, {5, 4, 8}, 31);
  t.observed.out_d = test::lcg_tensor(c.dtype_o, {3, 4, 8}, 32);
  t.observed.lse_d = test::lcg_tensor(DType::float32, {3, 4}, 33);
  t.observed.out_d->set_bits(5, kPoisonF16);  // the poison payload survives bit-exactly
  t.observed.lse_d->set_bits(2, kPoisonF32);
  t.provenance = {"podcheck-cuda", "v3", "NVIDIA H200 (sm_90, 132 SMs)", "580.159.04", "2026-11-29T12:00:00Z",
                  "unit test", {{"num_splits", "4"}, {"cta_tile_q", "64"}}};
  t.run = {RunStatus::guards_overwritten, "out_d: 12 guard elements overwritten"};
  t.expected = {{Profile::intended, validation::Status::incorrect, "never written", "why"},
                {Profile::flashinfer, validation::Status::passed, "", ""}};
  return t;
}

// Same formula as write_trace_h5py.py: ((i*7 + salt) mod 13 - 6) / 8.
double eighth(std::int64_t i, int salt) { return static_cast<double>((i * 7 + salt) % 13 - 6) / 8.0; }
void check_values(const Tensor& t, int salt) {
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    CAPTURE(i, salt);
    REQUIRE(t.get(i) == eighth(i, salt));
  }
}
}  // namespace

TEST_CASE("traces round-trip cases, observed outputs, provenance and expectations", "[traces]") {
  TempDir tmp;
  std::string path = tmp.path("t.h5");
  Trace t = small_trace();
  write_traces(path, {t});
  CHECK(is_trace_file(path));
  REQUIRE(list_trace_cases(path) == std::vector<std::string>{t.kase.id});
  Trace b = read_trace(path, t.kase.id);
  CHECK(b.kase.decode->kv.pages.indices == t.kase.decode->kv.pages.indices);
  CHECK(b.kase.prefill->q.bytes == t.kase.prefill->q.bytes);
  REQUIRE(b.observed.out_p.has_value());
  CHECK(b.observed.out_p->bytes == t.observed.out_p->bytes);
  CHECK(b.observed.out_d->bytes == t.observed.out_d->bytes);
  CHECK(b.observed.out_d->bits(5) == kPoisonF16);
  CHECK(b.observed.lse_d->bits(2) == kPoisonF32);
  CHECK_FALSE(b.observed.lse_p.has_value());
  CHECK(b.provenance.kernel_name == "podcheck-cuda");
  CHECK(b.provenance.device == t.provenance.device);
  CHECK(b.provenance.scheduling == t.provenance.scheduling);
  CHECK(b.run == t.run);
  REQUIRE(b.expected.size() == 2);
  CHECK(b.expected[0].profile == Profile::intended);
  CHECK(b.expected[0].status == validation::Status::incorrect);
  CHECK(b.expected[0].diagnosis == "never written");
  CHECK(b.expected[1].status == validation::Status::passed);
  // a fixture is not a trace
  std::string fx = tmp.path("f.h5");
  write_fixtures(fx, {{t.kase, std::nullopt}});
  CHECK_FALSE(is_trace_file(fx));
  CHECK_THROWS_WITH(read_traces(fx), HasSubstring("expected a 'podcheck-trace' file"));
}

TEST_CASE("the run record round-trips for every status, and version 1 scheduling keys map onto it", "[traces][python]") {
  TempDir tmp;
  for (RunStatus st : {RunStatus::ran, RunStatus::not_supported, RunStatus::launch_failed, RunStatus::guards_overwritten}) {
    CAPTURE(run_status_name(st));
    Trace t = small_trace();
    t.run = {st, st == RunStatus::ran ? "" : "what happened"};
    if (st == RunStatus::not_supported) t.observed = {};
    const std::string v2 = tmp.path("v2.h5"), v1 = tmp.path("v1.h5");
    std::filesystem::remove(v2);
    write_traces(v2, {t});
    CHECK(read_trace(v2, t.kase.id).run == t.run);
    std::filesystem::remove(v1);
    REQUIRE(test::run_python(test::source_path("traces/tests/trace_to_v1.py") + " " + v2 + " " + v1 + " v1") == 0);
    const Trace old = read_trace(v1, t.kase.id);
    CHECK(old.run == t.run);
    CHECK(old.provenance.scheduling == t.provenance.scheduling);  // the mapped keys are gone from the facts
  }
}

TEST_CASE("a kernel's very long error message is kept readable: shortened visibly, not refused", "[traces]") {
  TempDir tmp;
  Trace t = small_trace();
  t.run = {RunStatus::launch_failed, std::string(100000, 'e')};
  const std::string path = tmp.path("long_message.h5");
  write_traces(path, {t});  // a string over h5::kMaxAttrString would be written, then refused by every reader
  const std::string back = read_trace(path, t.kase.id).run.message;
  CHECK(back.size() < 4200);
  CHECK(back.rfind(std::string(4096, 'e') + "... (100000 bytes)", 0) == 0);
}

TEST_CASE("a run record or expectation the reader does not know is refused, naming case and attribute", "[traces][python]") {
  TempDir tmp;
  const Trace t = small_trace();
  const std::string good = tmp.path("good.h5");
  write_traces(good, {t});
  const std::pair<const char*, const char*> bads[] = {
      {"bad_status", "unknown run status 'exploded'"},
      {"no_run", "missing group"},
      {"bad_expectation", "unknown status 'pased'"},
  };
  for (const auto& [mode, what] : bads) {
    CAPTURE(mode);
    const std::string bad = tmp.path(std::string(mode) + ".h5");
    REQUIRE(test::run_python(test::source_path("traces/tests/trace_to_v1.py") + " " + good + " " + bad + " " + mode) == 0);
    CHECK_THROWS_WITH(read_trace(bad, t.kase.id), HasSubstring(what) && HasSubstring(t.kase.id) &&
                                                      HasSubstring(bad));
  }
}

TEST_CASE("observed outputs of the wrong shape or dtype are refused", "[traces]") {
  TempDir tmp;
  Trace t = small_trace();
  t.observed.lse_p = test::lcg_tensor(DType::float16, {5, 4}, 1);
  CHECK_THROWS_WITH(write_traces(tmp.path("a.h5"), {t}), HasSubstring("lse_p") && HasSubstring("expected dtype float32"));
  t = small_trace();
  t.observed.out_d = test::lcg_tensor(DType::float16, {4, 4, 8}, 1);
  CHECK_THROWS_WITH(write_traces(tmp.path("b.h5"), {t}), HasSubstring("out_d") && HasSubstring("[3, 4, 8]"));
  CHECK(tmp.file_count() == 0);
}

TEST_CASE("a trace written with h5py alone reads back with exact values", "[traces][python]") {
  TempDir tmp;
  std::string path = tmp.path("py.h5");
  REQUIRE(test::run_python(test::source_path("traces/tests/write_trace_h5py.py") + " " + path) == 0);
  auto traces = read_traces(path);
  REQUIRE(traces.size() == 1);
  const Trace& t = traces[0];
  const Case& c = t.kase;
  CHECK(c.id == "py_single_h4k2d8");
  CHECK(c.dtype_q == DType::bfloat16);
  CHECK(c.seed == 7);
  REQUIRE(c.prefill.has_value());
  REQUIRE(c.decode.has_value());
  CHECK(c.kind() == "single");
  CHECK(c.prefill->params.mask_mode == MaskMode::causal);
  CHECK(c.prefill->params.sm_scale == 0.25);
  CHECK_FALSE(c.decode->params.sm_scale.has_value());
  CHECK(c.decode->params.window_left == 3);
  CHECK(c.decode->kv.pages.indices == std::vector<std::int32_t>{2, 0, 1});
  CHECK(c.decode->kv_len(0) == 7);
  CHECK(c.decode->kv_len(1) == 2);
  check_values(c.prefill->q, 1);
  check_values(c.prefill->kv.k, 2);
  check_values(c.prefill->kv.v, 3);
  check_values(c.decode->q, 4);
  check_values(c.decode->kv.k, 5);
  check_values(c.decode->kv.v, 6);
  REQUIRE(t.observed.out_p.has_value());
  REQUIRE(t.observed.lse_d.has_value());
  CHECK_FALSE(t.observed.out_d.has_value());
  check_values(*t.observed.out_p, 8);
  check_values(*t.observed.lse_d, 9);
  CHECK(t.provenance.kernel_name == "my-port");
  CHECK(t.provenance.scheduling.at("num_splits") == "3");
  REQUIRE(t.expected.size() == 1);
  CHECK(t.expected[0].diagnosis == "never written");
}

TEST_CASE("the h5py example in docs/FORMAT.md writes a trace the reader accepts", "[traces][python]") {
  TempDir tmp;
  std::string path = tmp.path("doc_example.h5");
  REQUIRE(test::run_python(test::source_path("traces/tests/run_format_doc_example.py") + " " +
                           std::string(PODCHECK_SOURCE_DIR) + " " + path) == 0);
  Trace t = read_trace(path, "my_case");
  CHECK(t.kase.kind() == "prefill");
  CHECK(t.kase.prefill->params.mask_mode == MaskMode::causal);
  CHECK(t.kase.prefill->kv_len(0) == 9);
  CHECK(t.observed.out_p.has_value());
  CHECK(t.observed.lse_p.has_value());
  CHECK(t.provenance.kernel_name == "my-kernel");
}

TEST_CASE("a trace written with its reference reads as a fixture too", "[traces]") {
  TempDir tmp;
  std::string path = tmp.path("with_ref.h5");
  Trace t = small_trace();
  TraceWriteOptions o;
  o.with_reference = true;
  write_traces(path, {t}, o);
  Fixture f = read_fixture(path, t.kase.id);
  REQUIRE(f.reference.has_value());
  REQUIRE(f.reference->prefill.has_value());
  REQUIRE(f.reference->decode.has_value());
  CHECK(f.reference->prefill->out.size() == 5u * 4 * 8);
  CHECK(f.reference->decode->lse.size() == 3u * 4);
  // causal rows see keys (row 0: keys 0..2 of 7), so the reference output is not all zero
  double norm = 0;
  for (double x : f.reference->prefill->out) norm += x * x;
  CHECK(norm > 0);
  CHECK(read_trace(path, t.kase.id).observed.out_p->bytes == t.observed.out_p->bytes);
  // diff/ = observed - reference, checked by an independent reader (h5py + numpy)
  REQUIRE(test::run_python(test::source_path("traces/tests/check_diff.py") + " " + path + " '" + t.kase.id + "'") == 0);
}

TEST_CASE("generated cases stored by id rebuild their inputs, checked by digest", "[traces][python]") {
  TempDir tmp;
  const std::string id = "pod_f16_h8kv8d128_ps16_nhd(qo_p=33,kv_p=100,causal,bs_d=9,kv_d=ragged80,seed=0)";
  Trace t;
  t.kase = make_case(id);
  const Case& c = t.kase;
  t.observed.out_p = test::lcg_tensor(c.dtype_o, {c.prefill->num_rows(), c.num_qo_heads, c.head_dim}, 41);
  t.observed.lse_d = test::lcg_tensor(DType::float32, {c.decode->num_rows(), c.num_qo_heads}, 42);
  t.provenance.kernel_name = "unit-test";
  const std::string full = tmp.path("full.h5"), by_id = tmp.path("by_id.h5");
  write_traces(full, {t});
  TraceWriteOptions o;
  o.inputs_by_id = true;
  write_traces(by_id, {t}, o);
  // the input tensors are what makes a trace big; by id only the outputs and attributes remain
  CHECK(std::filesystem::file_size(by_id) * 4 < std::filesystem::file_size(full));
  {
    const h5::Node root = h5::open_file(by_id);
    h5::Node g = h5::open_group(h5::open_group(root, "cases"), id);
    CHECK(h5::read_attr_string(g, "inputs") == "by-id");
    CHECK(h5::read_attr_string(g, "inputs_digest") == case_digest(c));
    CHECK_FALSE(h5::has_child(h5::open_group(g, "prefill"), "q"));
    CHECK_FALSE(h5::has_child(h5::open_group(g, "decode"), "kv_indices"));
  }
  const Trace b = read_trace(by_id, id);
  CHECK(case_digest(b.kase) == case_digest(c));
  CHECK(b.kase.prefill->q.bytes == c.prefill->q.bytes);
  CHECK(b.kase.decode->kv.pages.indices == c.decode->kv.pages.indices);
  CHECK(b.observed.out_p->bytes == t.observed.out_p->bytes);
  CHECK(b.observed.lse_d->bytes == t.observed.lse_d->bytes);
  CHECK(b.provenance.kernel_name == "unit-test");

  // a change to any input changes the digest
  Case changed = c;
  changed.decode->q.bytes[17] ^= 1;
  CHECK(case_digest(changed) != case_digest(c));
  changed = c;
  changed.prefill->params.window_left = 5;
  CHECK(case_digest(changed) != case_digest(c));

  // a drifted or edited by-id group is refused, naming the file, the case and the attribute
  const std::pair<const char*, const char*> broken[] = {
      {"inputs_digest", "attribute 'inputs_digest'"},
      {"inputs_unknown", "expected 'tensors' or 'by-id', found 'somewhere-else'"},
      {"byid_seed", "attribute 'seed'"},
      {"byid_not_generated", "podcheck cannot generate this id"}};
  for (const auto& [mode, phrase] : broken) {
    CAPTURE(mode);
    const std::string bad = tmp.path(std::string(mode) + ".h5");
    REQUIRE(test::run_python(test::source_path("fixtures/tests/format_mutate.py") + " " + by_id + " " + bad + " " +
                             mode + " '" + id + "'") == 0);
    CHECK_THROWS_WITH(read_traces(bad), HasSubstring(bad) && HasSubstring(phrase));
  }
}

TEST_CASE("a trace writer adds cases one by one and leaves nothing behind without commit", "[traces]") {
  TempDir tmp;
  const std::string path = tmp.path("stream.h5");
  Trace a = small_trace(), b = small_trace();
  b.kase.id = "second_case";
  {
    TraceWriter w(path);
    w.add(a);
    w.add(b);
    CHECK(w.size() == 2);
    CHECK_FALSE(std::filesystem::exists(path));  // only the temp file exists until commit
    w.commit();
    CHECK_THROWS_WITH(w.add(a), HasSubstring("after commit"));
  }
  REQUIRE(list_trace_cases(path) == std::vector<std::string>{"second_case", a.kase.id});  // sorted
  const auto before = std::filesystem::file_size(path);
  CHECK_THROWS_WITH(TraceWriter(path), HasSubstring(path));  // exists, no force
  {
    TraceWriteOptions o;
    o.force = true;
    TraceWriter w(path, o);
    w.add(a);
  }  // abandoned (as on an error mid-run): the committed file is untouched, no temp file is left
  CHECK(std::filesystem::file_size(path) == before);
  CHECK(list_trace_cases(path).size() == 2);
  CHECK(tmp.file_count() == 1);
}

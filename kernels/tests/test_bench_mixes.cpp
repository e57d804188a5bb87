// Host-side tests (no GPU): the benchmark's mixes are canonical case ids whose shapes are the ones the
// bench reports (the three historical POD shapes, a BatchPOD mix, a decode-heavy mix with group size 8), and
// the serving set (decode-heavy and prefill-heavy steps, mix A with fp8 KV and with page size 1).
#include "fixtures/case_spec.hpp"
#include "kernels/bench/kernel_bench.hpp"
#include "testing/catch.hpp"

#include <string>
#include <vector>

using namespace podcheck;

TEST_CASE("bench mixes are canonical case ids with the advertised shapes", "[kernels][host][bench]") {
  const auto& mixes = kernels::bench_mixes();
  REQUIRE(mixes.size() == 5);
  for (const auto& m : mixes) {
    INFO(m.name << ": " << m.id);
    const podcheck::CaseSpec s = parse_case_id(m.id);  // throws on a non-canonical spelling
    CHECK(case_id(s) == m.id);
    CHECK(spec_problem(s).empty());
    CHECK(s.dtype_q == DType::bfloat16);
    CHECK(s.dtype_kv == DType::bfloat16);
    CHECK(s.head_dim == 128);
    CHECK(s.page_size == 16);
    CHECK(s.mask_p == MaskMode::causal);
    CHECK(s.has_prefill());
    CHECK(s.has_decode());
  }
  struct Shape {
    int qo, kv, bs, kvd;
  };
  const Shape abc[] = {{2048, 2048, 128, 2048}, {1024, 8192, 64, 4096}, {512, 4096, 256, 1024}};
  for (int i = 0; i < 3; ++i) {
    const podcheck::CaseSpec s = parse_case_id(mixes[i].id);
    CHECK(s.kind == CaseKind::pod);
    CHECK(s.h_qo == 32);
    CHECK(s.h_kv == 8);
    CHECK(s.qo_p == std::vector<int>{abc[i].qo});
    CHECK(s.kv_p == std::vector<int>{abc[i].kv});
    CHECK(s.bs_d == abc[i].bs);
    CHECK(s.kv_d == abc[i].kvd);
  }
  CHECK(parse_case_id(mixes[3].id).kind == CaseKind::bpod);
  CHECK(parse_case_id(mixes[3].id).qo_p.size() > 1);
  const podcheck::CaseSpec g8 = parse_case_id(mixes[4].id);
  CHECK(g8.h_qo / g8.h_kv == 8);
  CHECK(g8.bs_d * g8.kv_d > 64 * g8.qo_p[0]);  // decode-heavy: more decode KV tokens than prefill rows x 64
}

TEST_CASE("serving mixes are canonical POD case ids with the advertised shapes", "[kernels][host][bench]") {
  const auto& mixes = kernels::bench_serving_mixes();
  REQUIRE(mixes.size() == 4);
  std::vector<podcheck::CaseSpec> s;
  for (const auto& m : mixes) {
    INFO(m.name << ": " << m.id);
    s.push_back(parse_case_id(m.id));
    CHECK(case_id(s.back()) == m.id);
    CHECK(spec_problem(s.back()).empty());
    CHECK(s.back().kind == CaseKind::pod);
    CHECK(s.back().dtype_q == DType::bfloat16);
    CHECK(s.back().head_dim == 128);
    CHECK(s.back().mask_p == MaskMode::causal);
  }
  // decode-heavy: 256 decodes of 4k context beside a 512-token chunk at the end of a 4k prompt
  CHECK(s[0].bs_d == 256);
  CHECK(s[0].kv_d == 4096);
  CHECK(s[0].qo_p == std::vector<int>{512});
  CHECK(s[0].kv_p == std::vector<int>{4096});
  // prefill-heavy: a 4k prompt beside few decodes
  CHECK(s[1].qo_p == std::vector<int>{4096});
  CHECK(s[1].bs_d * s[1].kv_d < s[1].qo_p[0] * 16);
  // mix A with fp8 e4m3 KV, and with page size 1: otherwise A's shape
  const podcheck::CaseSpec a = parse_case_id(kernels::bench_mixes()[0].id);
  CHECK(s[2].dtype_kv == DType::float8_e4m3fn);
  CHECK(s[3].page_size == 1);
  for (int i : {2, 3}) {
    CHECK(s[i].qo_p == a.qo_p);
    CHECK(s[i].kv_p == a.kv_p);
    CHECK(s[i].bs_d == a.bs_d);
    CHECK(s[i].kv_d == a.kv_d);
    CHECK(s[i].h_qo == a.h_qo);
    CHECK(s[i].h_kv == a.h_kv);
  }
}

// The bench's figures (kernels/bench/bench_report.cpp): FLOPs and bytes of a case counted by hand, and the
// bound the targets are stated against.
#include "kernels/tests/test_cases.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

TEST_CASE("bench work: causal FLOPs by hand, bytes at each dtype's size, bound = the slower ceiling",
          "[kernels][host][bench]") {
  kernels::test::CaseSpec s;
  s.heads = 8;
  s.kv_heads = 2;
  s.head_dim = 64;
  s.dtype_q = DType::bfloat16;
  s.prefill.present = true;
  s.prefill.paged = true;
  s.prefill.qo_lens = {4};
  s.prefill.kv_lens = {6};
  s.prefill.mask = MaskMode::causal;
  s.decode.present = true;
  s.decode.qo_lens = {1, 1};
  s.decode.kv_lens = {10, 0};
  for (DType kv : {DType::bfloat16, DType::float8_e4m3fn}) {
    s.dtype_kv = kv;
    const Case c = kernels::test::build_case(s);
    kernels::BenchRow row;
    kernels::set_work(c, row);
    const double ekv = kv == DType::bfloat16 ? 2 : 1;
    // prefill rows i = 0..3 see L - Q + i + 1 = 3, 4, 5, 6 keys (bottom-right causal): 18 (row, key) pairs
    CHECK(row.flops_p == 4.0 * 64 * 8 * 18);
    CHECK(row.flops_d == 4.0 * 64 * 8 * 10);
    // q and o: rows x 8 heads x 64 x 2 bytes each; K and V: tokens x 2 heads x 64 x ekv each; LSE: 4 bytes
    CHECK(row.bytes_p == 4 * 8 * 64 * 4.0 + 2 * 6 * 2 * 64 * ekv + 4 * 8 * 4.0);
    CHECK(row.bytes_d == 2 * 8 * 64 * 4.0 + 2 * 10 * 2 * 64 * ekv + 2 * 8 * 4.0);
    CHECK(row.flops == row.flops_p + row.flops_d);
    CHECK(row.bytes == row.bytes_p + row.bytes_d);
  }

  kernels::BenchReport rep;
  rep.version = "v";
  rep.device = "dev";
  rep.copy_tbps = 4.0;
  rep.gemm_tflops = 800.0;
  kernels::BenchRow compute, memory;
  compute.mix = {"compute-bound", "id-c"};
  compute.flops = 8e11;  // 1.0 ms at the GEMM rate
  compute.bytes = 2e9;   // 0.5 ms at the copy rate
  memory.mix = {"memory-bound", "id-m"};
  memory.flops = 8e10;   // 0.1 ms
  memory.bytes = 1e9;    // 0.25 ms
  CHECK(std::fabs(kernels::bound_ms(compute, rep) - 1.0) < 1e-12);
  CHECK(std::fabs(kernels::bound_ms(memory, rep) - 0.25) < 1e-12);
  compute.ours = {true, "", 1.2, 0.7, 0.6, "s"};
  memory.ours = {true, "", 0.5, 0.2, 0.4, "s"};
  rep.rows = {compute, memory};
  char* text = nullptr;
  std::size_t len = 0;
  std::FILE* f = open_memstream(&text, &len);
  REQUIRE(f);
  kernels::print_bench(rep, f);
  std::fclose(f);
  const std::string out(text, len);
  std::free(text);
  INFO(out);
  // each row ends with the bound (ms) and fused / bound
  CHECK(out.find("    1.000     1.20\n") != std::string::npos);
  CHECK(out.find("    0.250     2.00\n") != std::string::npos);
  CHECK(out.find("fus/bnd") != std::string::npos);
}

TEST_CASE("bench exit status: a peer that does not support a mix is reported, not a failure; ours must run every mix",
          "[kernels][host][bench]") {
  kernels::BenchReport r;
  r.rows.resize(2);
  for (auto& row : r.rows) row.ours.ran = true;
  CHECK(r.all_validated());  // no peer: ours ran everything
  r.peer_name = "flashinfer-port";
  r.rows[0].peer.ran = true;
  r.rows[1].peer.unsupported = true;  // e.g. a mix whose instantiation the port build lacks
  r.rows[1].peer.failure = "not supported: instantiation not compiled";
  CHECK(r.all_validated());
  r.rows[1].peer.unsupported = false;  // the peer ran and its outputs failed validation: not timed, a failure
  r.rows[1].peer.failure = "fused launch: incorrect";
  CHECK_FALSE(r.all_validated());
  r.rows[1].peer.unsupported = true;
  r.rows[0].ours.ran = false;  // ours not supported or failed: always a failure
  r.rows[0].ours.unsupported = true;
  CHECK_FALSE(r.all_validated());
}

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
    const CaseSpec s = parse_case_id(m.id);  // throws on a non-canonical spelling
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
    const CaseSpec s = parse_case_id(mixes[i].id);
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
  const CaseSpec g8 = parse_case_id(mixes[4].id);
  CHECK(g8.h_qo / g8.h_kv == 8);
  CHECK(g8.bs_d * g8.kv_d > 64 * g8.qo_p[0]);  // decode-heavy: more decode KV tokens than prefill rows x 64
}

TEST_CASE("serving mixes are canonical POD case ids with the advertised shapes", "[kernels][host][bench]") {
  const auto& mixes = kernels::bench_serving_mixes();
  REQUIRE(mixes.size() == 4);
  std::vector<CaseSpec> s;
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
  const CaseSpec a = parse_case_id(kernels::bench_mixes()[0].id);
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

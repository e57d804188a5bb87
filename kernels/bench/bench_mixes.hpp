// The benchmark's mixes (`podcheck bench kernel`): named canonical case ids, with no CUDA in this header so
// that app/ resolves `--mix` names before it loads the GPU module.
#pragma once

#include <string>
#include <vector>

namespace podcheck::kernels {

struct BenchMix {
  std::string name;  // short label, e.g. "A p2048/2048c+d128x2048"
  std::string id;    // canonical case id (a POD or BatchPOD case: both sides)
};

// The standard set, timed by default: A, B, C (the three historical shapes), BatchPOD, decode-heavy g = 8.
// bf16, 32/8 heads (G8: 64/8), head_dim 128, page 16, causal prefill.
inline const std::vector<BenchMix>& bench_mixes() {
  static const std::vector<BenchMix> mixes = {
      {"A p2048/2048c+d128x2048", "pod_bf16_h32kv8d128_ps16_nhd(qo_p=2048,kv_p=2048,causal,bs_d=128,kv_d=2048,seed=0)"},
      {"B p1024@8192c+d64x4096", "pod_bf16_h32kv8d128_ps16_nhd(qo_p=1024,kv_p=8192,causal,bs_d=64,kv_d=4096,seed=0)"},
      {"C p512/4096c+d256x1024", "pod_bf16_h32kv8d128_ps16_nhd(qo_p=512,kv_p=4096,causal,bs_d=256,kv_d=1024,seed=0)"},
      {"BPOD 4x256c+d128x2048",
       "bpod_bf16_h32kv8d128_ps16_nhd(qo_p=256+256+256+256,kv_p=1024+2048+3072+4096,causal,bs_d=128,kv_d=2048,seed=0)"},
      {"G8 p128/1024c+d256x2048", "pod_bf16_h64kv8d128_ps16_nhd(qo_p=128,kv_p=1024,causal,bs_d=256,kv_d=2048,seed=0)"},
  };
  return mixes;
}

// The serving set (`--mix serving`), the shapes issue 13 asks to report beside the standard ones: a
// decode-heavy step (256 decodes of 4k context beside a 512-token chunk of a 4k prompt), a prefill-heavy one
// (a 4k prompt beside 16 decodes), mix A with fp8 e4m3 KV, and mix A's shape with page size 1.
inline const std::vector<BenchMix>& bench_serving_mixes() {
  static const std::vector<BenchMix> mixes = {
      {"Sd p512@4096c+d256x4096", "pod_bf16_h32kv8d128_ps16_nhd(qo_p=512,kv_p=4096,causal,bs_d=256,kv_d=4096,seed=0)"},
      {"Sp p4096/4096c+d16x2048", "pod_bf16_h32kv8d128_ps16_nhd(qo_p=4096,kv_p=4096,causal,bs_d=16,kv_d=2048,seed=0)"},
      {"A-e4m3 (A, fp8 e4m3 KV)",
       "pod_bf16_e4m3_h32kv8d128_ps16_nhd(qo_p=2048,kv_p=2048,causal,bs_d=128,kv_d=2048,seed=0)"},
      {"A-ps1 (A, page size 1)", "pod_bf16_h32kv8d128_ps1_nhd(qo_p=2048,kv_p=2048,causal,bs_d=128,kv_d=2048,seed=0)"},
  };
  return mixes;
}

}  // namespace podcheck::kernels

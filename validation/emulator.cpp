// The kernel-precision emulator (see emulator.hpp for the rounding points it models).
#include "validation/emulator.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

namespace podcheck::validation {

namespace {

constexpr float kNegInfF = -std::numeric_limits<float>::infinity();
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2F = 0.6931471805599453f;

std::uint32_t fbits(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}
float bitsf(std::uint32_t b) {
  float x;
  std::memcpy(&x, &b, 4);
  return x;
}

// Round a finite float to `mbits` explicit mantissa bits, nearest even (exponent range of float).
float round_mantissa(float x, int mbits) {
  if (!std::isfinite(x)) return x;
  const int drop = 23 - mbits;
  std::uint32_t b = fbits(x);
  const std::uint32_t lsb = (b >> drop) & 1u;
  b += (1u << (drop - 1)) - 1u + lsb;
  b &= ~((1u << drop) - 1u);
  return bitsf(b);
}

// Decodes the elements of a tensor to float through a lookup table (16-bit and 8-bit floats are exact in float).
class FloatReader {
 public:
  explicit FloatReader(const Tensor& t) : t_(t) {
    switch (t.dtype) {
      case DType::float16: lut_ = &lut16(); break;
      case DType::float8_e4m3fn: lut_ = &lut8(DType::float8_e4m3fn); break;
      case DType::float8_e5m2: lut_ = &lut8(DType::float8_e5m2); break;
      case DType::bfloat16:
      case DType::float32:
      case DType::float64: break;
      default: throw std::invalid_argument("emulator: tensor of dtype " + std::string(dtype_name(t.dtype)));
    }
  }
  float operator()(std::int64_t i) const {
    const std::uint8_t* p = t_.bytes.data();
    switch (t_.dtype) {
      case DType::float16: {
        std::uint16_t b;
        std::memcpy(&b, p + 2 * i, 2);
        return (*lut_)[b];
      }
      case DType::bfloat16: {
        std::uint16_t b;
        std::memcpy(&b, p + 2 * i, 2);
        return bitsf(static_cast<std::uint32_t>(b) << 16);
      }
      case DType::float8_e4m3fn:
      case DType::float8_e5m2: return (*lut_)[p[i]];
      case DType::float32: {
        float x;
        std::memcpy(&x, p + 4 * i, 4);
        return x;
      }
      case DType::float64: {
        double x;
        std::memcpy(&x, p + 8 * i, 8);
        return static_cast<float>(x);
      }
      default: return 0.0f;
    }
  }

 private:
  static const std::vector<float>& lut16() {
    static const std::vector<float> lut = [] {
      std::vector<float> v(65536);
      for (std::uint32_t b = 0; b < 65536; ++b) v[b] = static_cast<float>(decode_bits(DType::float16, b));
      return v;
    }();
    return lut;
  }
  static const std::vector<float>& lut8(DType t) {
    static const std::vector<float> e4 = make8(DType::float8_e4m3fn), e5 = make8(DType::float8_e5m2);
    return t == DType::float8_e4m3fn ? e4 : e5;
  }
  static std::vector<float> make8(DType t) {
    std::vector<float> v(256);
    for (std::uint32_t b = 0; b < 256; ++b) v[b] = static_cast<float>(decode_bits(t, b));
    return v;
  }
  const Tensor& t_;
  const std::vector<float>* lut_ = nullptr;
};

float dot(const float* a, const float* b, int n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int d = 0;
  for (; d + 8 <= n; d += 8)
    for (int u = 0; u < 8; ++u) acc[u] += a[d + u] * b[d + u];
  float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; d < n; ++d) s += a[d] * b[d];
  return s;
}

// RoPE-LLaMA ("rotate half") of one vector at position pos, in float, rounded back to dtype `t`.
void rope_inplace(float* x, int D, double pos, double rope_scale, double rope_theta, DType t) {
  const int half = D / 2;
  for (int i = 0; i < half; ++i) {
    const double f = (1.0 / rope_scale) * std::pow(rope_theta, -2.0 * i / D);
    const float ang = static_cast<float>(pos * f);
    const float cs = std::cos(ang), sn = std::sin(ang);
    const float a = x[i], b = x[i + half];
    x[i] = round_float_to(t, a * cs - b * sn);
    x[i + half] = round_float_to(t, b * cs + a * sn);
  }
}

struct SideSetup {
  const Case& c;
  const Side& s;
  const Semantics& sem;
  int H, Hkv, D, g;
  float sm;           // effective logit scale
  float sm_log2e;
  float cap;
  bool alibi, rope;
  std::vector<float> slopes;
  DType tq, to;
  float v_scale;
};

bool visible(const SideSetup& st, int r, std::int64_t i, std::int64_t j, std::int64_t Q, std::int64_t L) {
  const SideParams& p = st.s.params;
  const std::int64_t pos = i + L - Q;
  if (p.mask_mode == MaskMode::causal) {
    if (j > pos) return false;
  } else if (p.mask_mode == MaskMode::custom) {
    std::int64_t base = 0;
    if (static_cast<std::int64_t>(p.custom_mask_indptr.size()) > r) base = p.custom_mask_indptr[r] * 8;
    const std::int64_t bit = base + i * L + j;
    const std::size_t byte = static_cast<std::size_t>(bit >> 3);
    if (byte >= p.custom_mask.size() || !((p.custom_mask[byte] >> (bit & 7)) & 1)) return false;
  }
  if (p.window_left >= 0) {
    if (j < pos - p.window_left) return false;
  }
  return true;
}

// One (row, head): chunked online softmax over K/V of its kv head. Writes out[D] (double) and lse.
void emulate_row(const SideSetup& st, int r, std::int64_t i, std::int64_t Q, std::int64_t L, int h,
                 const float* q, const float* K, const float* V, double* out, double& lse_out) {
  const int D = st.D;
  const std::int64_t nchunks = L >= 2 * kEmuSplitChunk ? (L + kEmuSplitChunk - 1) / kEmuSplitChunk : 1;
  const std::int64_t chunk = nchunks > 1 ? kEmuSplitChunk : std::max<std::int64_t>(L, 1);
  std::vector<float> o(D), s2(kEmuTileKv), merged(D, 0.0f);
  std::vector<float> part_o;  // nchunks * D
  std::vector<float> part_lse;
  if (nchunks > 1) {
    part_o.assign(static_cast<std::size_t>(nchunks) * D, 0.0f);
    part_lse.assign(nchunks, kNegInfF);
  }
  const float slope = st.alibi ? st.slopes[h] : 0.0f;
  const std::int64_t ipos = i;
  float final_lse = kNegInfF;
  for (std::int64_t ch = 0; ch < nchunks; ++ch) {
    const std::int64_t j0 = ch * chunk, j1 = std::min(L, j0 + chunk);
    float m = kNegInfF, d = 0.0f;
    std::fill(o.begin(), o.end(), 0.0f);
    for (std::int64_t t0 = j0; t0 < j1; t0 += kEmuTileKv) {
      const std::int64_t t1 = std::min(j1, t0 + kEmuTileKv);
      float mt = kNegInfF;
      for (std::int64_t j = t0; j < t1; ++j) {
        float v = kNegInfF;
        if (visible(st, r, i, j, Q, L)) {
          const float x = dot(q, K + j * D, D);
          if (!st.alibi && st.cap == 0.0f) {
            v = x * st.sm_log2e;
          } else {
            float s = x * st.sm;
            if (st.alibi) s += slope * static_cast<float>(j - ipos);
            if (st.cap > 0.0f) {
              const float pre = (st.alibi && st.sem.alibi_softcap_double_sm_scale) ? s * st.sm : s;
              s = st.cap * std::tanh(pre / st.cap);
            }
            v = s * kLog2e;
          }
        }
        s2[j - t0] = v;
        mt = std::max(mt, v);
      }
      if (mt == kNegInfF) continue;
      const float m_new = std::max(m, mt);
      const float scale = m == kNegInfF ? 0.0f : std::exp2(m - m_new);
      d *= scale;
      for (int k = 0; k < D; ++k) o[k] *= scale;
      for (std::int64_t j = t0; j < t1; ++j) {
        if (s2[j - t0] == kNegInfF) continue;
        const float p = round_float_to(st.tq, std::exp2(s2[j - t0] - m_new));
        d += p;
        const float* vj = V + j * D;
        for (int k = 0; k < D; ++k) o[k] += p * vj[k];
      }
      m = m_new;
    }
    const float lse = (m == kNegInfF || d == 0.0f) ? kNegInfF : m + std::log2(d);
    const float rcp = lse == kNegInfF ? 0.0f : 1.0f / d;
    if (nchunks == 1) {
      for (int k = 0; k < D; ++k) merged[k] = o[k] * rcp;
      final_lse = lse;
    } else {
      for (int k = 0; k < D; ++k) part_o[ch * D + k] = round_float_to(st.to, o[k] * rcp);
      part_lse[ch] = lse;
    }
  }
  if (nchunks > 1) {
    float smax = kNegInfF;
    for (float s : part_lse) smax = std::max(smax, s);
    if (smax == kNegInfF) {
      std::fill(merged.begin(), merged.end(), 0.0f);
      final_lse = kNegInfF;
    } else {
      float wsum = 0.0f;
      std::fill(merged.begin(), merged.end(), 0.0f);
      for (std::int64_t ch = 0; ch < nchunks; ++ch) {
        if (part_lse[ch] == kNegInfF) continue;
        const float w = std::exp2(part_lse[ch] - smax);
        wsum += w;
        for (int k = 0; k < D; ++k) merged[k] += w * part_o[ch * D + k];
      }
      for (int k = 0; k < D; ++k) merged[k] /= wsum;
      final_lse = smax + std::log2(wsum);
    }
  }
  for (int k = 0; k < D; ++k) {
    float v = round_float_to(st.to, merged[k]);
    if (st.v_scale != 1.0f) v = round_float_to(st.to, v * st.v_scale);
    out[k] = v;
  }
  if (final_lse != kNegInfF && st.c.lse_base == LseBase::base_e) final_lse *= kLn2F;
  lse_out = final_lse;
}

}  // namespace

float round_float_to(DType t, float x) {
  switch (t) {
    case DType::bfloat16: return round_mantissa(x, 7);
    case DType::float16: {
      const float ax = std::abs(x);
      if (!(ax < 65520.0f)) return std::isnan(x) ? x : std::copysign(std::numeric_limits<float>::infinity(), x);
      if (ax < 6.103515625e-05f) {  // fp16 subnormal range: quantum 2^-24
        return std::nearbyint(x * 16777216.0f) / 16777216.0f;
      }
      return round_mantissa(x, 10);
    }
    default: return x;
  }
}

SideResult emulate_side(const Case& c, SideKind which, const Semantics& sem) {
  const Side* sp = c.side(which);
  if (!sp) throw std::invalid_argument("emulate_side: case '" + c.id + "' has no " + std::string(side_name(which)) + " side");
  const Side& s = *sp;
  SideSetup st{c, s, sem, c.num_qo_heads, c.num_kv_heads, c.head_dim, c.group_size(), 0, 0, 0, false, false, {},
               c.dtype_q, c.dtype_o, 1.0f};
  const SideParams& p = s.params;
  st.sm = static_cast<float>(effective_logit_scale(c, p));
  st.sm_log2e = st.sm * kLog2e;
  st.cap = static_cast<float>(p.logits_soft_cap);
  st.alibi = p.pos_encoding == PosEncoding::alibi;
  st.rope = p.pos_encoding == PosEncoding::rope_llama;
  if (st.alibi) {
    const auto sl = p.alibi_slopes.empty() ? default_alibi_slopes(st.H) : p.alibi_slopes;
    st.slopes.assign(sl.begin(), sl.end());
  }
  st.v_scale = static_cast<float>(p.v_scale);
  const int D = st.D, H = st.H, Hkv = st.Hkv;

  SideResult res;
  res.rows = s.num_rows();
  res.heads = H;
  res.head_dim = D;
  res.out.assign(static_cast<std::size_t>(res.rows) * H * D, 0.0);
  res.lse.assign(static_cast<std::size_t>(res.rows) * H, -std::numeric_limits<double>::infinity());

  const FloatReader qr(s.q), kr(s.kv.k_tensor()), vr(s.kv.v_tensor());
  const int nreq = s.num_requests();
  std::int64_t max_q = 0;
  for (int r = 0; r < nreq; ++r) max_q = std::max(max_q, s.qo_len(r));
  const int threads = omp_get_max_threads();
  const std::int64_t tasks = static_cast<std::int64_t>(nreq) * Hkv;
  const bool outer = tasks >= 2 * threads || max_q * std::max(1, st.g) < 8;

  auto run_task = [&](std::int64_t task, bool inner_parallel) {
    const int r = static_cast<int>(task / Hkv), kvh = static_cast<int>(task % Hkv);
    const std::int64_t Q = s.qo_len(r), L = s.kv_len(r);
    if (Q == 0) return;
    // Heads of this task: the query heads that read kv head kvh.
    std::vector<int> heads;
    for (int h = 0; h < H; ++h) {
      const int kh = h / std::max(1, st.g);
      if (kh == kvh) heads.push_back(h);
    }
    if (heads.empty()) return;
    std::vector<float> K(static_cast<std::size_t>(std::max<std::int64_t>(L, 1)) * D),
        V(static_cast<std::size_t>(std::max<std::int64_t>(L, 1)) * D);
    for (std::int64_t t = 0; t < L; ++t) {
      const auto [page, slot] = s.locate(r, t);
      const std::int64_t ko = s.kv.offset(false, page, slot, kvh), vo = s.kv.offset(true, page, slot, kvh);
      for (int d = 0; d < D; ++d) {
        K[t * D + d] = round_float_to(c.dtype_q, kr(ko + d));
        V[t * D + d] = round_float_to(c.dtype_q, vr(vo + d));
      }
      if (st.rope) rope_inplace(&K[t * D], D, static_cast<double>(t), p.rope_scale, p.rope_theta, c.dtype_q);
    }
    const std::int64_t items = Q * static_cast<std::int64_t>(heads.size());
    auto item = [&](std::int64_t it) {
      const std::int64_t i = it / static_cast<std::int64_t>(heads.size());
      const int h = heads[it % static_cast<std::int64_t>(heads.size())];
      const std::int64_t grow = s.qo_indptr[r] + i;
      std::vector<float> q(D);
      const std::int64_t qo = (grow * H + h) * D;
      for (int d = 0; d < D; ++d) q[d] = qr(qo + d);
      if (st.rope) rope_inplace(q.data(), D, static_cast<double>(i + L - Q), p.rope_scale, p.rope_theta, c.dtype_q);
      emulate_row(st, r, i, Q, L, h, q.data(), K.data(), V.data(), &res.out[qo], res.lse[grow * H + h]);
    };
    if (inner_parallel) {
#pragma omp parallel for schedule(dynamic, 4)
      for (std::int64_t it = 0; it < items; ++it) item(it);
    } else {
      for (std::int64_t it = 0; it < items; ++it) item(it);
    }
  };
  if (outer) {
#pragma omp parallel for schedule(dynamic, 1)
    for (std::int64_t task = 0; task < tasks; ++task) run_task(task, false);
  } else {
    for (std::int64_t task = 0; task < tasks; ++task) run_task(task, true);
  }
  return res;
}

PodResult emulate(const Case& c, const Semantics& sem) {
  PodResult r;
  if (c.prefill) r.prefill = emulate_side(c, SideKind::prefill, sem);
  if (c.decode) r.decode = emulate_side(c, SideKind::decode, sem);
  return r;
}

}  // namespace podcheck::validation

// The fast POD reference (reference/reference.hpp): same semantics as naive.hpp, organised for speed.
//
// Work unit: (request, kv head, block of query rows). The query rows of all query heads that read this kv
// head (GQA) are stacked into one matrix Qb of M = rows x group rows, so K and V are read once per block.
// For each block:
//   1. the key range any row of the block can see is computed from the mask rules (fully masked stretches
//      before and after it are skipped);
//   2. S = sm * Qb K^T over that range with cblas_dgemm;
//   3. three-pass softmax per row: max over the visible logits (ALiBi, soft cap applied here), then
//      P = exp(S - max) with its sum, then O = P V (cblas_dgemm) divided by the sum.
// K and V are decoded (and RoPE-rotated) into contiguous double buffers: once per (request, kv head) when
// that pair has enough blocks to keep every thread busy (blocks run in parallel and share the buffers), else
// by each block, 256 keys at a time into cache-sized buffers (pairs run in parallel; this keeps decode from
// streaming megabytes of doubles through memory). OpenBLAS runs single-threaded inside our OpenMP loops.
#include "reference/reference.hpp"

#include <cblas.h>
#include <omp.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace podcheck {
namespace {

constexpr int kTargetM = 128;  // rows (query rows x group) of one block

// 2^(i/64), i = 0..63, for the exp below.
const double* exp2_table() {
  static const std::vector<double> t = [] {
    std::vector<double> v(64);
    for (int i = 0; i < 64; ++i) v[i] = std::exp2(i / 64.0);
    return v;
  }();
  return t.data();
}

// exp(s[j] - m) for j < n into p, returns the sum. Vectorisable: x = (64 e + i) ln2/64 + r with |r| <= ln2/128
// (Cody-Waite, two-part ln2/64), exp(x) = 2^e 2^(i/64) exp(r), exp(r) by a degree-6 Taylor polynomial
// (truncation < 1e-19); 2^e is built from the rounding constant's bits. Arguments below -708 (including
// -inf, the masked sentinel) give 0.
// x86-64-v3 adds FMA (the polynomial's multiply-adds fuse), which GCC >= 12 can dispatch on.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#define PODCHECK_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "avx2", "default")))
#elif defined(__x86_64__) && defined(__GNUC__)
#define PODCHECK_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PODCHECK_VECTOR_CLONES
#endif
PODCHECK_VECTOR_CLONES double exp_shifted(const double* s, double m, double* p, std::int64_t n,
                                          const double* tab) {
  constexpr double k64OverLn2 = 92.33248261689366;  // 64 / ln 2
  constexpr double kLn2Hi64 = 6.93147180369123816490e-01 / 64;
  constexpr double kLn2Lo64 = 1.90821492927058770002e-10 / 64;
  constexpr double kShift = 6755399441055744.0;  // 1.5 * 2^52
  const std::int64_t shift_bits = std::bit_cast<std::int64_t>(kShift);
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (std::int64_t j = 0; j < n; ++j) {
    const double x = s[j] - m;
    const double xc = std::max(x, -708.0);
    const double t = xc * k64OverLn2 + kShift;
    const double k = t - kShift;
    const double r = (xc - k * kLn2Hi64) - k * kLn2Lo64;
    double q = 1.0 / 720.0;
    q = q * r + 1.0 / 120.0;
    q = q * r + 1.0 / 24.0;
    q = q * r + 1.0 / 6.0;
    q = q * r + 0.5;
    q = q * r + 1.0;
    q = q * r + 1.0;
    const std::int64_t ki = std::bit_cast<std::int64_t>(t) - shift_bits;
    const double scale = std::bit_cast<double>(static_cast<std::uint64_t>((ki >> 6) + 1023) << 52);
    const double keep = x >= -708.0 ? 1.0 : 0.0;
    const double y = tab[ki & 63] * scale * q * keep;
    p[j] = y;
    sum += y;
  }
  return sum;
}

// fp16 -> double through F16C (exact: fp16 -> fp32 -> fp64 are both exact widenings), 8 at a time.
#if defined(__x86_64__) && defined(__GNUC__)
#define PODCHECK_HAVE_F16C_PATH 1
__attribute__((target("avx,f16c"))) void decode_fp16_f16c(const std::uint8_t* src, std::int64_t n, double* dst) {
  std::int64_t d = 0;
  for (; d + 8 <= n; d += 8) {
    const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * d)));
    _mm256_storeu_pd(dst + d, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
    _mm256_storeu_pd(dst + d + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
  }
  for (; d < n; ++d) {
    std::uint16_t b;
    std::memcpy(&b, src + 2 * d, 2);
    dst[d] = static_cast<double>(_cvtsh_ss(b));
  }
}
bool have_f16c() {
  // F16C from CPUID leaf 1 (clang 14's __builtin_cpu_supports does not know "f16c"; gcc's does)
  static const bool yes = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) && __builtin_cpu_supports("avx");
  }();
  return yes;
}
#endif

// Decode n consecutive elements of t starting at element flat into dst, exactly. bf16 is the top half of an
// fp32 (a shift), fp16 goes through F16C where the CPU has it, 8-bit floats (and fp16 elsewhere) through the
// decode table, fp32/fp64 are widened or copied; anything else goes through Tensor::get.
PODCHECK_VECTOR_CLONES void decode_row(const Tensor& t, const double* table, std::int64_t flat, std::int64_t n,
                                       double* dst) {
  const std::uint8_t* base = t.bytes.data();
  switch (t.dtype) {
    case DType::bfloat16: {
      const std::uint8_t* src = base + flat * 2;
      for (std::int64_t d = 0; d < n; ++d) {
        std::uint16_t b;
        std::memcpy(&b, src + 2 * d, 2);
        dst[d] = static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16));
      }
      return;
    }
    case DType::float16: {
      const std::uint8_t* src = base + flat * 2;
#ifdef PODCHECK_HAVE_F16C_PATH
      if (have_f16c()) {
        decode_fp16_f16c(src, n, dst);
        return;
      }
#endif
      for (std::int64_t d = 0; d < n; ++d) {
        std::uint16_t b;
        std::memcpy(&b, src + 2 * d, 2);
        dst[d] = table[b];
      }
      return;
    }
    case DType::float8_e4m3fn:
    case DType::float8_e5m2: {
      const std::uint8_t* src = base + flat;
      for (std::int64_t d = 0; d < n; ++d) dst[d] = table[src[d]];
      return;
    }
    case DType::float32: {
      const std::uint8_t* src = base + flat * 4;
      for (std::int64_t d = 0; d < n; ++d) {
        float f;
        std::memcpy(&f, src + 4 * d, 4);
        dst[d] = static_cast<double>(f);
      }
      return;
    }
    case DType::float64:
      std::memcpy(dst, base + flat * 8, static_cast<std::size_t>(n) * 8);
      return;
    default:
      for (std::int64_t d = 0; d < n; ++d) dst[d] = t.get(flat + d);
      return;
  }
}

struct SideCtx {
  const Case& c;
  const Side& s;
  const SideParams& p;
  const Semantics& sem;
  int D, H, Hkv, g;
  double sm;
  double cap;
  bool rope, alibi;
  std::vector<double> slopes;     // per query head (ALiBi)
  std::vector<double> rope_freq;  // D/2 frequencies
  const double* k_table;          // decode tables (nullptr: Tensor::get)
  const double* v_table;
  const double* q_table;
  int W;  // window_left (-1: none)

  SideCtx(const Case& cc, const Side& ss, const Semantics& se)
      : c(cc), s(ss), p(ss.params), sem(se), D(cc.head_dim), H(cc.num_qo_heads), Hkv(cc.num_kv_heads),
        g(cc.group_size()) {
    sm = effective_logit_scale(c, p);
    cap = p.logits_soft_cap;
    rope = p.pos_encoding == PosEncoding::rope_llama;
    alibi = p.pos_encoding == PosEncoding::alibi;
    if (alibi) slopes = p.alibi_slopes.empty() ? default_alibi_slopes(H) : p.alibi_slopes;
    if (rope) {
      rope_freq.resize(D / 2);
      for (int t = 0; t < D / 2; ++t)
        rope_freq[t] = std::pow(p.rope_theta, -2.0 * t / D) / p.rope_scale;
    }
    k_table = decode_table(s.kv.k_tensor().dtype);
    v_table = decode_table(s.kv.v_tensor().dtype);
    q_table = decode_table(s.q.dtype);
    W = p.window_left;
  }

  void rotate(double* x, double pos) const {
    const int half = D / 2;
    for (int t = 0; t < half; ++t) {
      const double phi = pos * rope_freq[t];
      const double cs = std::cos(phi), sn = std::sin(phi);
      const double a = x[t], b = x[t + half];
      x[t] = a * cs - b * sn;
      x[t + half] = b * cs + a * sn;
    }
  }

  // Calls f(j, off) for keys j in [j0, j1) of request r, in order, with off the element offset of key j's row
  // relative to kv head kvh's first row: K's row is at offset(false, 0, 0, kvh) + off, V's at
  // offset(true, 0, 0, kvh) + off (K and V share their page and slot strides; KvStorage::offset is affine in
  // page and slot). Pages are looked up once per run of slots.
  template <class F>
  void for_each_key(int r, int kvh, std::int64_t j0, std::int64_t j1, F&& f) const {
    const std::int64_t head = s.kv.offset(false, 0, 0, kvh);
    const std::int64_t slot_stride = s.kv.offset(false, 0, 1, kvh) - head;
    const std::int64_t page_stride = s.kv.paged ? s.kv.offset(false, 1, 0, kvh) - head : 0;
    const std::int64_t ps = s.kv.paged ? s.kv.pages.page_size : std::numeric_limits<std::int64_t>::max();
    for (std::int64_t j = j0; j < j1;) {
      const auto [page, slot] = s.locate(r, j);
      const std::int64_t run = std::min(j1 - j, ps - slot);
      const std::int64_t base = page * page_stride + slot * slot_stride;
      for (std::int64_t t = 0; t < run; ++t, ++j) f(j, base + t * slot_stride);
    }
  }

  // Decode keys [j0, j1) of request r, kv head kvh into K, V (row-major, row stride ld >= D; RoPE on K).
  // Either pointer may be null (that tensor is skipped).
  void gather(int r, int kvh, std::int64_t j0, std::int64_t j1, double* K, double* V, std::int64_t ld = 0) const {
    if (ld == 0) ld = D;
    const Tensor& kt = s.kv.k_tensor();
    const Tensor& vt = s.kv.v_tensor();
    const std::int64_t k_head = s.kv.offset(false, 0, 0, kvh), v_head = s.kv.offset(true, 0, 0, kvh);
    for_each_key(r, kvh, j0, j1, [&](std::int64_t j, std::int64_t off) {
      if (K) {
        double* kr = K + (j - j0) * ld;
        decode_row(kt, k_table, k_head + off, D, kr);
        if (rope) rotate(kr, static_cast<double>(j));
      }
      if (V) decode_row(vt, v_table, v_head + off, D, V + (j - j0) * ld);
    });
  }

  // Ask for the storage of keys [j0, j1) (K or V) to be brought into cache ahead of a gather: paged rows are a
  // few hundred bytes at a page-table-dependent stride, which the hardware prefetchers do not follow.
  void prefetch(int r, int kvh, std::int64_t j0, std::int64_t j1, bool is_v) const {
    const Tensor& t = is_v ? s.kv.v_tensor() : s.kv.k_tensor();
    const std::int64_t es = static_cast<std::int64_t>(dtype_size(t.dtype));
    const std::uint8_t* base = t.bytes.data() + s.kv.offset(is_v, 0, 0, kvh) * es;
    const std::int64_t row_bytes = D * es;
    for_each_key(r, kvh, j0, j1, [&](std::int64_t, std::int64_t off) {
      const std::uint8_t* row = base + off * es;
      for (std::int64_t b = 0; b < row_bytes; b += 64) __builtin_prefetch(row + b, 0, 3);
      __builtin_prefetch(row + row_bytes - 1, 0, 3);
    });
  }

  // Visible key range [lo, hi) of local row i (before the custom mask's bits); empty when lo >= hi.
  std::pair<std::int64_t, std::int64_t> row_range(std::int64_t i, std::int64_t Q, std::int64_t L) const {
    const std::int64_t pos = i + L - Q;
    std::int64_t lo = 0, hi = L;
    if (p.mask_mode == MaskMode::causal) hi = std::min(L, pos + 1);
    if (W >= 0) lo = std::max<std::int64_t>(0, pos - W);
    return {lo, std::max(lo, hi)};
  }

  // Query heads reading kv head kvh, in block-row order.
  int head_of(int kvh, int hh) const { return kvh * g + hh; }
};

struct Workspace {
  std::vector<double> q, s, o, k, v, rowmax, rowsum;
  std::vector<std::int64_t> lo, hi;
};

constexpr std::int64_t kKeyChunk = 256;  // keys gathered at a time when K/V are not pre-gathered

// Rows of one block: local rows [i0, i1) of request r, kv head kvh, m = (i - i0) * g + hh. Sets ws.lo/ws.hi
// per row and the block's key range [jlo, jhi) (empty when jlo >= jhi).
struct BlockRows {
  std::int64_t Q, L, rows, M, row0, jlo, jhi;
};
BlockRows block_rows(const SideCtx& x, int r, std::int64_t i0, std::int64_t i1, Workspace& ws) {
  BlockRows b;
  b.Q = x.s.qo_len(r);
  b.L = x.s.kv_len(r);
  b.rows = i1 - i0;
  b.M = b.rows * x.g;
  b.row0 = x.s.qo_indptr[r];
  ws.lo.resize(b.M);
  ws.hi.resize(b.M);
  b.jlo = b.L;
  b.jhi = 0;
  for (std::int64_t i = i0; i < i1; ++i) {
    auto [lo, hi] = x.row_range(i, b.Q, b.L);
    for (int hh = 0; hh < x.g; ++hh) {
      ws.lo[(i - i0) * x.g + hh] = lo;
      ws.hi[(i - i0) * x.g + hh] = hi;
    }
    if (lo < hi) {
      b.jlo = std::min(b.jlo, lo);
      b.jhi = std::max(b.jhi, hi);
    }
  }
  return b;
}

void write_empty_row(const SideCtx& x, int kvh, std::int64_t row0_i0, std::int64_t m, SideResult& res) {
  const std::int64_t row = row0_i0 + m / x.g;
  const int h = x.head_of(kvh, static_cast<int>(m % x.g));
  std::fill_n(&res.out[(row * x.H + h) * x.D], x.D, 0.0);
  res.lse[row * x.H + h] = -std::numeric_limits<double>::infinity();
}

// Decoded, RoPE-rotated query rows of the block into q ([M, ld]) (>= D; the padding is zero).
void load_queries(const SideCtx& x, const BlockRows& b, int kvh, std::int64_t i0, std::int64_t i1, std::int64_t ld,
                  double* q) {
  for (std::int64_t i = i0; i < i1; ++i) {
    const std::int64_t pos = i + b.L - b.Q;
    for (int hh = 0; hh < x.g; ++hh) {
      const int h = x.head_of(kvh, hh);
      double* qr = q + ((i - i0) * x.g + hh) * ld;
      decode_row(x.s.q, x.q_table, ((b.row0 + i) * x.H + h) * x.D, x.D, qr);
      std::fill(qr + x.D, qr + ld, 0.0);
      if (x.rope) x.rotate(qr, static_cast<double>(pos));
    }
  }
}

// Passes 1 and 2 of the softmax on the block's logits S ([M, nk], keys jlo..jhi) for kv head kvh: custom mask,
// ALiBi and soft cap, then the row max and exp(s - max) with its sum. Every entry outside a row's visible keys
// ends as 0.
void softmax_rows(const SideCtx& x, int r, int kvh, std::int64_t i0, const BlockRows& b, const Workspace& ws,
                  double* S, double* rowmax, double* rowsum) {
  const std::int64_t M = b.M, jlo = b.jlo, jhi = b.jhi, nk = jhi - jlo, L = b.L;
  const int g = x.g;
  const bool custom = x.p.mask_mode == MaskMode::custom;
  const double ninf = -std::numeric_limits<double>::infinity();
  for (std::int64_t m = 0; m < M; ++m) {
    double* srow = S + m * nk;
    const std::int64_t i = i0 + m / g;
    const int h = x.head_of(kvh, static_cast<int>(m % g));
    const std::int64_t lo = ws.lo[m], hi = ws.hi[m];
    // Masked stretches of this row inside the block's range are never read below: passes 1 and 2 run over
    // [lo, hi) only and the stretches outside it are set to 0 for P V.
    if (custom && lo < hi) {
      const std::int64_t base = x.p.custom_mask_indptr[r] * 8 + i * L;
      const std::uint8_t* bits = x.p.custom_mask.data();
      for (std::int64_t j = lo; j < hi; ++j) {
        const std::int64_t bit = base + j;
        if (!((bits[bit >> 3] >> (bit & 7)) & 1)) srow[j - jlo] = ninf;
      }
    }
    // Pass 1: final logits (ALiBi, soft cap) and their max.
    if (x.alibi || x.cap > 0) {
      const double slope = x.alibi ? x.slopes[h] : 0.0;
      const double iref = static_cast<double>(i);
      const bool twice = x.alibi && x.sem.alibi_softcap_double_sm_scale;
      for (std::int64_t j = lo; j < hi; ++j) {
        double& v = srow[j - jlo];
        if (v == ninf) continue;
        if (x.alibi) v += slope * (static_cast<double>(j) - iref);
        if (x.cap > 0) v = twice ? x.cap * std::tanh(v * x.sm / x.cap) : x.cap * std::tanh(v / x.cap);
      }
    }
    double mx = ninf;
    const double* vis = srow + (lo - jlo);
#pragma omp simd reduction(max : mx)
    for (std::int64_t j = 0; j < hi - lo; ++j) mx = vis[j] > mx ? vis[j] : mx;
    rowmax[m] = mx;
    // Pass 2: exponentials and their sum (masked entries become 0).
    if (mx == ninf) {
      std::fill_n(srow, nk, 0.0);
      rowsum[m] = 0.0;
    } else {
      std::fill(srow, srow + (std::max(lo, jlo) - jlo), 0.0);
      std::fill(srow + (std::min(std::max(hi, jlo), jhi) - jlo), srow + nk, 0.0);
      rowsum[m] = exp_shifted(srow + (lo - jlo), mx, srow + (lo - jlo), hi - lo, exp2_table());
    }
  }
}

// out = v_scale * O / sum and the LSE for every row of the block (O has row stride ldo); empty rows get 0 / -inf.
void finish_rows(const SideCtx& x, int kvh, std::int64_t row0_i0, std::int64_t M, const double* O, std::int64_t ldo,
                 const double* rowmax, const double* rowsum, SideResult& res) {
  const double vs = x.p.v_scale;
  const double to_base = x.c.lse_base == LseBase::base2 ? 1.0 / std::log(2.0) : 1.0;
  for (std::int64_t m = 0; m < M; ++m) {
    if (rowsum[m] == 0.0) {
      write_empty_row(x, kvh, row0_i0, m, res);
      continue;
    }
    const std::int64_t row = row0_i0 + m / x.g;
    const int h = x.head_of(kvh, static_cast<int>(m % x.g));
    double* out = &res.out[(row * x.H + h) * x.D];
    const double f = vs / rowsum[m];
    for (int d = 0; d < x.D; ++d) out[d] = O[m * ldo + d] * f;
    res.lse[row * x.H + h] = (rowmax[m] + std::log(rowsum[m])) * to_base;
  }
}

// ---- The streaming block: for few stacked rows (decode), where dgemm's packing costs more than the product.
// K and V are decoded kStreamBytes of rows at a time into an L1-sized double buffer (row stride Dp = D rounded up
// to 4, zero padded) and consumed at once by small register-blocked kernels written with GCC vector extensions
// (compiled for x86-64-v3, AVX2 and baseline; the product terms are the same, only their summation order
// differs from dgemm's). Each K/V element is read from storage once per block and serves every row of it.
typedef double v4d __attribute__((vector_size(32)));
// The helpers below are always inlined into the target clones, so the -Wpsabi note about passing 32-byte
// vectors without AVX does not apply.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
[[gnu::always_inline]] inline v4d load4(const double* p) {
  v4d v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store4(double* p, v4d v) { std::memcpy(p, &v, sizeof v); }

// S[m][n] = sm * <q_m, k_n> for MR rows and NR keys (row strides Dp, S row stride lds).
template <int MR, int NR>
[[gnu::always_inline]] inline void qk_tile(const double* q, const double* k, std::int64_t Dp, double sm, double* s,
                                           std::int64_t lds) {
  v4d acc[MR][NR];
  for (int m = 0; m < MR; ++m)
    for (int n = 0; n < NR; ++n) acc[m][n] = v4d{0, 0, 0, 0};
  for (std::int64_t d = 0; d < Dp; d += 4) {
    v4d kv[NR];
    for (int n = 0; n < NR; ++n) kv[n] = load4(k + n * Dp + d);
    for (int m = 0; m < MR; ++m) {
      const v4d qv = load4(q + m * Dp + d);
      for (int n = 0; n < NR; ++n) acc[m][n] += qv * kv[n];
    }
  }
  for (int m = 0; m < MR; ++m)
    for (int n = 0; n < NR; ++n) s[m * lds + n] = sm * ((acc[m][n][0] + acc[m][n][1]) + (acc[m][n][2] + acc[m][n][3]));
}

template <int MR, int NR>
[[gnu::always_inline]] inline void qk_rows(const double* q, const double* k, std::int64_t nk, std::int64_t Dp,
                                           double sm, double* s, std::int64_t lds) {
  std::int64_t n = 0;
  for (; n + NR <= nk; n += NR) qk_tile<MR, NR>(q, k + n * Dp, Dp, sm, s + n, lds);
  for (; n < nk; ++n) qk_tile<MR, 1>(q, k + n * Dp, Dp, sm, s + n, lds);
}

// S[m][n] = sm * <Q_m, K_n>, m < M, n < nk; Q [M, Dp], K [nk, Dp], S row stride lds.
PODCHECK_VECTOR_CLONES void qk_scores(const double* q, std::int64_t M, const double* k, std::int64_t nk,
                                      std::int64_t Dp, double sm, double* s, std::int64_t lds) {
  std::int64_t m = 0;
  for (; m + 4 <= M; m += 4) qk_rows<4, 2>(q + m * Dp, k, nk, Dp, sm, s + m * lds, lds);
  if (M - m >= 2) {
    qk_rows<2, 4>(q + m * Dp, k, nk, Dp, sm, s + m * lds, lds);
    m += 2;
  }
  if (M - m == 1) qk_rows<1, 8>(q + m * Dp, k, nk, Dp, sm, s + m * lds, lds);
}

// O[m][d0 .. d0 + 4 DW) += sum_n P[m][n] V[n][d0 ..] for MR rows.
template <int MR, int DW>
[[gnu::always_inline]] inline void pv_tile(const double* p, std::int64_t ldp, const double* v, std::int64_t nk,
                                           std::int64_t Dp, double* o) {
  v4d acc[MR][DW];
  for (int m = 0; m < MR; ++m)
    for (int w = 0; w < DW; ++w) acc[m][w] = load4(o + m * Dp + 4 * w);
  for (std::int64_t n = 0; n < nk; ++n) {
    v4d vv[DW];
    for (int w = 0; w < DW; ++w) vv[w] = load4(v + n * Dp + 4 * w);
    for (int m = 0; m < MR; ++m) {
      const double pm = p[m * ldp + n];
      for (int w = 0; w < DW; ++w) acc[m][w] += pm * vv[w];
    }
  }
  for (int m = 0; m < MR; ++m)
    for (int w = 0; w < DW; ++w) store4(o + m * Dp + 4 * w, acc[m][w]);
}

template <int MR, int DW>
[[gnu::always_inline]] inline void pv_rows(const double* p, std::int64_t ldp, const double* v, std::int64_t nk,
                                           std::int64_t Dp, double* o) {
  std::int64_t d = 0;
  for (; d + 4 * DW <= Dp; d += 4 * DW) pv_tile<MR, DW>(p, ldp, v + d, nk, Dp, o + d);
  for (; d < Dp; d += 4) pv_tile<MR, 1>(p, ldp, v + d, nk, Dp, o + d);
}

// O[m] += sum_n P[m][n] V[n], m < M, n < nk; P row stride ldp, V [nk, Dp], O [M, Dp].
PODCHECK_VECTOR_CLONES void pv_accumulate(const double* p, std::int64_t ldp, std::int64_t M, const double* v,
                                          std::int64_t nk, std::int64_t Dp, double* o) {
  std::int64_t m = 0;
  for (; m + 4 <= M; m += 4) pv_rows<4, 2>(p + m * ldp, ldp, v, nk, Dp, o + m * Dp);
  if (M - m >= 2) {
    pv_rows<2, 4>(p + m * ldp, ldp, v, nk, Dp, o + m * Dp);
    m += 2;
  }
  if (M - m == 1) pv_rows<1, 4>(p + m * ldp, ldp, v, nk, Dp, o + m * Dp);
}

#pragma GCC diagnostic pop

constexpr std::int64_t kStreamBytes = 16 * 1024;  // decoded K or V rows per step of the streaming block
constexpr std::int64_t kPrefetchAhead = 1;  // chunks between a prefetch and its use
constexpr std::int64_t kStreamLogitBytes = std::int64_t{4} << 20;  // logits of the kv heads streamed together

// Kv heads [kvh0, kvh1) of one block at once, chunk by chunk of keys: the rows of one key for all those heads
// share their 4 KiB pages (NHD: a head's rows are H_kv * D elements apart), so each page of storage touched is
// used whole while its TLB entry is fresh. Run head by head over the whole key range instead, decode cost a
// TLB miss every couple of rows (measured about 1.6x slower on 4 KiB pages).
void run_stream_block(const SideCtx& x, int r, int kvh0, int kvh1, std::int64_t i0, std::int64_t i1,
                      const BlockRows& b, Workspace& ws, SideResult& res) {
  const std::int64_t M = b.M, jlo = b.jlo, jhi = b.jhi, nk = jhi - jlo, nh = kvh1 - kvh0;
  const std::int64_t Dp = (x.D + 3) / 4 * 4;
  const std::int64_t kc = std::max<std::int64_t>(4, kStreamBytes / (Dp * 8));
  ws.q.resize(static_cast<std::size_t>(nh * M * Dp));
  for (int kvh = kvh0; kvh < kvh1; ++kvh) load_queries(x, b, kvh, i0, i1, Dp, &ws.q[(kvh - kvh0) * M * Dp]);
  ws.s.resize(static_cast<std::size_t>(nh * M * nk));
  // Decoded rows of one chunk of one head: [kc][Dp], the padding columns stay 0.
  const std::int64_t hs = kc * Dp;
  ws.k.assign(static_cast<std::size_t>(hs), 0.0);
  for (std::int64_t c0 = jlo; c0 < jhi; c0 += kc) {
    const std::int64_t c1 = std::min(jhi, c0 + kc);
    for (int kvh = kvh0; kvh < kvh1; ++kvh) {
      x.prefetch(r, kvh, std::min(jhi, c0 + kPrefetchAhead * kc), std::min(jhi, c1 + kPrefetchAhead * kc), false);
      x.gather(r, kvh, c0, c1, ws.k.data(), nullptr, Dp);
      qk_scores(&ws.q[(kvh - kvh0) * M * Dp], M, ws.k.data(), c1 - c0, Dp, x.sm,
                &ws.s[(kvh - kvh0) * M * nk + (c0 - jlo)], nk);
    }
  }
  ws.rowmax.resize(static_cast<std::size_t>(nh * M));
  ws.rowsum.resize(static_cast<std::size_t>(nh * M));
  for (int kvh = kvh0; kvh < kvh1; ++kvh)
    softmax_rows(x, r, kvh, i0, b, ws, &ws.s[(kvh - kvh0) * M * nk], &ws.rowmax[(kvh - kvh0) * M],
                 &ws.rowsum[(kvh - kvh0) * M]);
  ws.o.assign(static_cast<std::size_t>(nh * M * Dp), 0.0);
  for (std::int64_t c0 = jlo; c0 < jhi; c0 += kc) {
    const std::int64_t c1 = std::min(jhi, c0 + kc);
    for (int kvh = kvh0; kvh < kvh1; ++kvh) {
      x.prefetch(r, kvh, std::min(jhi, c0 + kPrefetchAhead * kc), std::min(jhi, c1 + kPrefetchAhead * kc), true);
      x.gather(r, kvh, c0, c1, nullptr, ws.k.data(), Dp);
      pv_accumulate(&ws.s[(kvh - kvh0) * M * nk + (c0 - jlo)], nk, M, ws.k.data(), c1 - c0, Dp,
                    &ws.o[(kvh - kvh0) * M * Dp]);
    }
  }
  for (int kvh = kvh0; kvh < kvh1; ++kvh)
    finish_rows(x, kvh, b.row0 + i0, M, &ws.o[(kvh - kvh0) * M * Dp], Dp, &ws.rowmax[(kvh - kvh0) * M],
                &ws.rowsum[(kvh - kvh0) * M], res);
}

// Which block runs a block without pre-gathered K/V: the streaming one up to this many stacked rows.
constexpr std::int64_t kStreamMaxRows = 32;
FastPath g_fast_path = FastPath::automatic;

void run_dgemm_block(const SideCtx& x, int r, int kvh, std::int64_t i0, std::int64_t i1, const BlockRows& br,
                     const double* K, const double* V, std::int64_t kbase, Workspace& ws, SideResult& res);

// One block: local rows [i0, i1) of request r, kv heads [kvh0, kvh1). K/V hold keys [kbase, kbase + n) of the
// request (then the range is a single head), or are null: then the block gathers its keys itself, either
// streaming (few rows; all heads at once) or head by head, kKeyChunk keys at a time into cache-sized buffers
// for dgemm.
void run_block(const SideCtx& x, int r, int kvh0, int kvh1, std::int64_t i0, std::int64_t i1, const double* K,
               const double* V, std::int64_t kbase, Workspace& ws, SideResult& res) {
  const BlockRows br = block_rows(x, r, i0, i1, ws);
  if (br.jlo >= br.jhi) {
    for (int kvh = kvh0; kvh < kvh1; ++kvh)
      for (std::int64_t m = 0; m < br.M; ++m) write_empty_row(x, kvh, br.row0 + i0, m, res);
    return;
  }
  const bool chunked = K == nullptr;
  if (chunked &&
      (g_fast_path == FastPath::stream || (g_fast_path == FastPath::automatic && br.M <= kStreamMaxRows))) {
    // Heads at a time such that their logits stay within kStreamLogitBytes.
    const std::int64_t per_head = br.M * (br.jhi - br.jlo) * 8;
    const int step = static_cast<int>(std::clamp<std::int64_t>(kStreamLogitBytes / per_head, 1, kvh1 - kvh0));
    for (int h0 = kvh0; h0 < kvh1; h0 += step) run_stream_block(x, r, h0, std::min(kvh1, h0 + step), i0, i1, br, ws, res);
    return;
  }
  for (int kvh = kvh0; kvh < kvh1; ++kvh) run_dgemm_block(x, r, kvh, i0, i1, br, K, V, kbase, ws, res);
}

// run_block's dgemm path for one kv head.
void run_dgemm_block(const SideCtx& x, int r, int kvh, std::int64_t i0, std::int64_t i1, const BlockRows& br,
                     const double* K, const double* V, std::int64_t kbase, Workspace& ws, SideResult& res) {
  const int D = x.D, g = x.g;
  const std::int64_t rows = br.rows, M = br.M, jlo = br.jlo, jhi = br.jhi;
  const bool chunked = K == nullptr;
  const std::int64_t nk = jhi - jlo;
  ws.q.resize(static_cast<std::size_t>(M * D));
  load_queries(x, br, kvh, i0, i1, D, ws.q.data());
  ws.s.resize(M * nk);
  ws.o.resize(M * D);
  // With K/V pre-gathered, the block's rows are cut into kSub bands of query rows; keys [jlo, common) are
  // multiplied for all rows at once, keys [common, band_hi) band by band, where band_hi is the last key a row of
  // the band can see. Near the causal diagonal this skips most of the masked triangle in both products; the
  // entries never computed lie outside every row's [lo, hi) and are never read.
  constexpr std::int64_t kSub = 4;
  const std::int64_t band = std::max<std::int64_t>(1, (rows + kSub - 1) / kSub);
  std::int64_t band_hi[kSub];
  std::int64_t common = jhi;
  const std::int64_t nbands = (rows + band - 1) / band;
  for (std::int64_t b = 0; b < nbands; ++b) {
    std::int64_t h = jlo;
    for (std::int64_t m = b * band * g; m < std::min(rows, (b + 1) * band) * g; ++m)
      if (ws.lo[m] < ws.hi[m]) h = std::max(h, ws.hi[m]);
    band_hi[b] = h;
    common = std::min(common, h);
  }
  auto band_rows = [&](std::int64_t b) {
    return std::pair<std::int64_t, std::int64_t>{b * band * g, std::min(rows, (b + 1) * band) * g};
  };
  if (!chunked) {
    if (common > jlo)
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(M), static_cast<int>(common - jlo), D,
                  x.sm, ws.q.data(), D, K + (jlo - kbase) * D, D, 0.0, ws.s.data(), static_cast<int>(nk));
    for (std::int64_t b = 0; b < nbands; ++b) {
      if (band_hi[b] <= common) continue;
      const auto [m0, m1] = band_rows(b);
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m1 - m0),
                  static_cast<int>(band_hi[b] - common), D, x.sm, &ws.q[m0 * D], D, K + (common - kbase) * D, D, 0.0,
                  &ws.s[m0 * nk + (common - jlo)], static_cast<int>(nk));
    }
  } else {
    ws.k.resize(kKeyChunk * D);
    for (std::int64_t c0 = jlo; c0 < jhi; c0 += kKeyChunk) {
      const std::int64_t c1 = std::min(jhi, c0 + kKeyChunk);
      x.gather(r, kvh, c0, c1, ws.k.data(), nullptr);
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(M), static_cast<int>(c1 - c0), D, x.sm,
                  ws.q.data(), D, ws.k.data(), D, 0.0, &ws.s[c0 - jlo], static_cast<int>(nk));
    }
  }

  ws.rowmax.resize(static_cast<std::size_t>(M));
  ws.rowsum.resize(static_cast<std::size_t>(M));
  softmax_rows(x, r, kvh, i0, br, ws, ws.s.data(), ws.rowmax.data(), ws.rowsum.data());
  // Pass 3: O = P V, normalised.
  if (!chunked) {
    if (common > jlo)
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(M), D, static_cast<int>(common - jlo),
                  1.0, ws.s.data(), static_cast<int>(nk), V + (jlo - kbase) * D, D, 0.0, ws.o.data(), D);
    for (std::int64_t b = 0; b < nbands; ++b) {
      if (band_hi[b] <= common) continue;
      const auto [m0, m1] = band_rows(b);
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m1 - m0), D,
                  static_cast<int>(band_hi[b] - common), 1.0, &ws.s[m0 * nk + (common - jlo)],
                  static_cast<int>(nk), V + (common - kbase) * D, D, common > jlo ? 1.0 : 0.0, &ws.o[m0 * D], D);
    }
  } else {
    ws.v.resize(kKeyChunk * D);
    for (std::int64_t c0 = jlo; c0 < jhi; c0 += kKeyChunk) {
      const std::int64_t c1 = std::min(jhi, c0 + kKeyChunk);
      x.gather(r, kvh, c0, c1, nullptr, ws.v.data());
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(M), D, static_cast<int>(c1 - c0), 1.0,
                  &ws.s[c0 - jlo], static_cast<int>(nk), ws.v.data(), D, c0 == jlo ? 0.0 : 1.0, ws.o.data(), D);
    }
  }
  finish_rows(x, kvh, br.row0 + i0, M, ws.o.data(), D, ws.rowmax.data(), ws.rowsum.data(), res);
}

// Key range [lo, hi) some row in [i0, i1) of request r can see; empty (lo >= hi) when none.
std::pair<std::int64_t, std::int64_t> span(const SideCtx& x, int r, std::int64_t i0, std::int64_t i1) {
  const std::int64_t Q = x.s.qo_len(r), L = x.s.kv_len(r);
  std::int64_t lo = L, hi = 0;
  for (std::int64_t i = i0; i < i1; ++i) {
    auto [a, b] = x.row_range(i, Q, L);
    if (a < b) {
      lo = std::min(lo, a);
      hi = std::max(hi, b);
    }
  }
  return {lo, hi};
}

struct BlasSingleThread {
  int saved;
  BlasSingleThread() : saved(openblas_get_num_threads()) { openblas_set_num_threads(1); }
  ~BlasSingleThread() { openblas_set_num_threads(saved); }
};

}  // namespace

SideResult reference_fast_side(const Case& c, SideKind kind, const Semantics& sem) {
  validate_case(c);
  const Side* sp = c.side(kind);
  if (!sp) throw InvalidCase("case '" + c.id + "' has no " + std::string(side_name(kind)) + " side");
  const SideCtx x(c, *sp, sem);
  SideResult res;
  res.rows = sp->num_rows();
  res.heads = c.num_qo_heads;
  res.head_dim = c.head_dim;
  res.out.assign(static_cast<std::size_t>(res.rows * res.heads * res.head_dim), 0.0);
  res.lse.assign(static_cast<std::size_t>(res.rows * res.heads), -std::numeric_limits<double>::infinity());
  BlasSingleThread blas1;

  const int nthreads = omp_get_max_threads();
  const std::int64_t bq = std::max(1, kTargetM / x.g);
  struct Pair {
    int r, kvh;
    int kvh_end;  // small units may span kv heads [kvh, kvh_end) (the streaming block reads them together)
  };
  std::vector<Pair> small;
  std::vector<Pair> big;
  std::vector<int> small_requests;
  for (int r = 0; r < sp->num_requests(); ++r) {
    if (sp->qo_len(r) == 0) continue;
    const std::int64_t nblocks = (sp->qo_len(r) + bq - 1) / bq;
    if (nblocks >= 2 * nthreads && g_fast_path != FastPath::stream) {
      for (int kvh = 0; kvh < c.num_kv_heads; ++kvh) big.push_back({r, kvh, kvh + 1});
    } else {
      small_requests.push_back(r);
    }
  }
  // Small requests run as units of several kv heads: all of them when there are enough requests to keep every
  // thread busy (at least 4 units per thread), else fewer.
  if (!small_requests.empty()) {
    const std::int64_t want = 4 * static_cast<std::int64_t>(nthreads);
    const std::int64_t nr = static_cast<std::int64_t>(small_requests.size());
    const int groups = static_cast<int>(std::min<std::int64_t>(c.num_kv_heads, (want + nr - 1) / nr));
    const int per = (c.num_kv_heads + groups - 1) / groups;
    for (int r : small_requests)
      for (int kvh = 0; kvh < c.num_kv_heads; kvh += per) small.push_back({r, kvh, std::min(c.num_kv_heads, kvh + per)});
  }
  // Exceptions must not leave an OpenMP region: record the first one and rethrow after.
  std::exception_ptr error;
  auto guarded = [&error](auto&& fn) {
    try {
      fn();
    } catch (...) {
#pragma omp critical(podcheck_fast_error)
      if (!error) error = std::current_exception();
    }
  };

  // Big pairs get their whole visible KV gathered once into shared buffers (in groups that fit a memory
  // budget); then every block of every pair, and every small pair, is one task of a single dynamic loop,
  // the costliest first. Two barriers per group, none per pair.
  constexpr std::int64_t kGatherBudgetBytes = std::int64_t{1} << 30;
  struct Task {
    int pair;  // index into `big`, or -1: small pair `small_index`, run whole with chunked gathers
    std::size_t small_index;
    std::int64_t i0, i1;
    double cost;
  };
  std::size_t next_big = 0;
  bool small_done = false;
  while (next_big < big.size() || !small_done) {
    // This group's big pairs and their buffers.
    std::vector<std::size_t> group;
    std::vector<std::int64_t> lo_of, hi_of;
    std::int64_t bytes = 0;
    while (next_big < big.size()) {
      const Pair& pr = big[next_big];
      const auto [lo, hi] = span(x, pr.r, 0, sp->qo_len(pr.r));
      const std::int64_t need = std::max<std::int64_t>(0, hi - lo) * x.D * 16;
      if (!group.empty() && bytes + need > kGatherBudgetBytes) break;
      bytes += need;
      group.push_back(next_big++);
      lo_of.push_back(lo);
      hi_of.push_back(hi);
    }
    // Left uninitialised: the parallel gather below writes every element (and takes the page faults).
    std::vector<std::unique_ptr<double[]>> Kbuf(group.size()), Vbuf(group.size());
    struct Chunk {
      std::size_t g;
      std::int64_t a, b;
    };
    std::vector<Chunk> chunks;
    std::vector<Task> tasks;
    for (std::size_t gi = 0; gi < group.size(); ++gi) {
      const Pair& pr = big[group[gi]];
      const std::int64_t Q = sp->qo_len(pr.r), L = sp->kv_len(pr.r);
      const std::int64_t n = std::max<std::int64_t>(0, hi_of[gi] - lo_of[gi]);
      Kbuf[gi].reset(new double[n * x.D]);
      Vbuf[gi].reset(new double[n * x.D]);
      for (std::int64_t a0 = lo_of[gi]; a0 < hi_of[gi]; a0 += 64)
        chunks.push_back({gi, a0, std::min(hi_of[gi], a0 + 64)});
      for (std::int64_t i0 = 0; i0 < Q; i0 += bq) {
        const std::int64_t i1 = std::min(Q, i0 + bq);
        const auto [a, b] = span(x, pr.r, i0, i1);
        tasks.push_back({static_cast<int>(gi), 0, i0, i1, static_cast<double>(i1 - i0) * std::max<std::int64_t>(1, b - a)});
      }
      (void)L;
    }
    if (next_big >= big.size()) {
      for (std::size_t t = 0; t < small.size(); ++t) {
        const Pair& pr = small[t];
        const auto [a, b] = span(x, pr.r, 0, sp->qo_len(pr.r));
        tasks.push_back({-1, t, 0, sp->qo_len(pr.r),
                         static_cast<double>(sp->qo_len(pr.r)) * std::max<std::int64_t>(1, b - a) *
                             (pr.kvh_end - pr.kvh)});
      }
      small_done = true;
    }
    std::stable_sort(tasks.begin(), tasks.end(), [](const Task& u, const Task& v) { return u.cost > v.cost; });
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 4)
      for (std::size_t ci = 0; ci < chunks.size(); ++ci) {
        const Chunk& ch = chunks[ci];
        const Pair& pr = big[group[ch.g]];
        const std::int64_t off = (ch.a - lo_of[ch.g]) * x.D;
        guarded([&] { x.gather(pr.r, pr.kvh, ch.a, ch.b, &Kbuf[ch.g][off], &Vbuf[ch.g][off]); });
      }
      static thread_local Workspace ws;  // kept between calls: no page faults for its buffers
#pragma omp for schedule(dynamic, 1)
      for (std::size_t ti = 0; ti < tasks.size(); ++ti) {
        const Task& t = tasks[ti];
        guarded([&] {
          if (t.pair >= 0) {
            const Pair& pr = big[group[t.pair]];
            const bool any = hi_of[t.pair] > lo_of[t.pair];
            run_block(x, pr.r, pr.kvh, pr.kvh + 1, t.i0, t.i1, any ? Kbuf[t.pair].get() : nullptr,
                      any ? Vbuf[t.pair].get() : nullptr, lo_of[t.pair], ws, res);
          } else {
            const Pair& pr = small[t.small_index];
            for (std::int64_t i0 = t.i0; i0 < t.i1; i0 += bq)
              run_block(x, pr.r, pr.kvh, pr.kvh_end, i0, std::min(t.i1, i0 + bq), nullptr, nullptr, 0, ws, res);
          }
        });
      }
    }
  }
  if (error) std::rethrow_exception(error);
  return res;
}

void set_fast_path(FastPath path) { g_fast_path = path; }

PodResult reference_fast(const Case& c, const Semantics& sem) {
  validate_case(c);
  PodResult r;
  if (c.prefill) r.prefill = reference_fast_side(c, SideKind::prefill, sem);
  if (c.decode) r.decode = reference_fast_side(c, SideKind::decode, sem);
  return r;
}

double useful_flops(const Case& c, SideKind kind) {
  const Side* s = c.side(kind);
  if (!s) return 0.0;
  const Semantics sem;
  const SideCtx x(c, *s, sem);
  double pairs = 0.0;
  for (int r = 0; r < s->num_requests(); ++r) {
    const std::int64_t Q = s->qo_len(r), L = s->kv_len(r);
    for (std::int64_t i = 0; i < Q; ++i) {
      const auto [lo, hi] = x.row_range(i, Q, L);
      if (x.p.mask_mode != MaskMode::custom) {
        pairs += static_cast<double>(hi - lo);
        continue;
      }
      const std::int64_t base = x.p.custom_mask_indptr[r] * 8 + i * L;
      for (std::int64_t j = lo; j < hi; ++j) {
        const std::int64_t b = base + j;
        pairs += (x.p.custom_mask[b >> 3] >> (b & 7)) & 1;
      }
    }
  }
  return pairs * c.num_qo_heads * 4.0 * c.head_dim;
}

double min_bytes(const Case& c, SideKind kind) {
  const Side* s = c.side(kind);
  if (!s) return 0.0;
  const Semantics sem;
  const SideCtx x(c, *s, sem);
  double keys = 0.0;  // distinct (request, key) pairs some row of the request can see
  for (int r = 0; r < s->num_requests(); ++r) {
    const std::int64_t Q = s->qo_len(r), L = s->kv_len(r);
    if (x.p.mask_mode != MaskMode::custom) {
      // Row ranges move monotonically with the row: merge them in order.
      std::int64_t cur_lo = 0, cur_hi = 0;
      for (std::int64_t i = 0; i < Q; ++i) {
        const auto [lo, hi] = x.row_range(i, Q, L);
        if (lo >= hi) continue;
        if (lo > cur_hi) {
          keys += static_cast<double>(cur_hi - cur_lo);
          cur_lo = lo;
          cur_hi = hi;
        } else {
          cur_hi = std::max(cur_hi, hi);
        }
      }
      keys += static_cast<double>(cur_hi - cur_lo);
      continue;
    }
    std::vector<char> seen(static_cast<std::size_t>(L), 0);
    for (std::int64_t i = 0; i < Q; ++i) {
      const auto [lo, hi] = x.row_range(i, Q, L);
      const std::int64_t base = x.p.custom_mask_indptr[r] * 8 + i * L;
      for (std::int64_t j = lo; j < hi; ++j) {
        const std::int64_t b = base + j;
        seen[j] |= (x.p.custom_mask[b >> 3] >> (b & 7)) & 1;
      }
    }
    keys += static_cast<double>(std::count(seen.begin(), seen.end(), 1));
  }
  const double kv = keys * c.num_kv_heads * c.head_dim *
                    static_cast<double>(dtype_size(s->kv.k_tensor().dtype) + dtype_size(s->kv.v_tensor().dtype));
  const double rows_heads = static_cast<double>(s->num_rows()) * c.num_qo_heads;
  const double q = rows_heads * c.head_dim * static_cast<double>(dtype_size(s->q.dtype));
  const double out = rows_heads * (c.head_dim + 1) * 8.0;  // float64 out and LSE
  return kv + q + out;
}

}  // namespace podcheck

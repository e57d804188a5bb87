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
  int W;  // effective window (-1: none)

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
    W = p.window_left >= 0 ? p.window_left + sem.window_shift : -1;
  }

  double dec(const Tensor& t, const double* table, std::int64_t flat) const {
    double v;
    decode_run(t, table, flat, 1, &v);
    return v;
  }

  // Decode n consecutive elements starting at flat into dst (table lookups for 8- and 16-bit floats).
  static void decode_run(const Tensor& t, const double* table, std::int64_t flat, int n, double* dst) {
    if (!table) {
      for (int d = 0; d < n; ++d) dst[d] = t.get(flat + d);
      return;
    }
    const std::uint8_t* base = t.bytes.data();
    if (t.dtype == DType::bfloat16) {  // exact: bfloat16 is the top half of a float32
      for (int d = 0; d < n; ++d) {
        std::uint16_t b;
        std::memcpy(&b, base + (flat + d) * 2, 2);
        dst[d] = static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16));
      }
    } else if (dtype_size(t.dtype) == 2) {
      for (int d = 0; d < n; ++d) {
        std::uint16_t b;
        std::memcpy(&b, base + (flat + d) * 2, 2);
        dst[d] = table[b];
      }
    } else {
      for (int d = 0; d < n; ++d) dst[d] = table[base[flat + d]];
    }
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

  std::pair<std::int64_t, std::int64_t> physical(int r, std::int64_t t) const {
    if (!s.kv.paged || !sem.ignore_page_table) return s.locate(r, t);
    const int ps = s.kv.pages.page_size;
    const std::int64_t page = s.kv.pages.indptr[r] + t / ps;
    if (page >= s.kv.num_pages())
      throw InvalidCase("ignore_page_table: request " + std::to_string(r) + " would read page " +
                        std::to_string(page) + " of " + std::to_string(s.kv.num_pages()));
    return {page, t % ps};
  }

  // Decode keys [j0, j1) of request r, kv head kvh into K, V (row-major [j1-j0, D]); RoPE on K.
  // Either pointer may be null (that tensor is skipped).
  void gather(int r, int kvh, std::int64_t j0, std::int64_t j1, double* K, double* V) const {
    const Tensor& kt = s.kv.k_tensor();
    const Tensor& vt = s.kv.v_tensor();
    for (std::int64_t j = j0; j < j1; ++j) {
      const auto [page, slot] = physical(r, j);
      if (K) {
        double* kr = K + (j - j0) * D;
        decode_run(kt, k_table, s.kv.offset(false, page, slot, kvh), D, kr);
        if (rope) rotate(kr, static_cast<double>(j));
      }
      if (V) decode_run(vt, v_table, s.kv.offset(true, page, slot, kvh), D, V + (j - j0) * D);
    }
  }

  // Visible key range [lo, hi) of local row i (before the custom mask's bits); empty when lo >= hi.
  std::pair<std::int64_t, std::int64_t> row_range(std::int64_t i, std::int64_t Q, std::int64_t L) const {
    const std::int64_t pos = i + L - Q;
    std::int64_t lo = 0, hi = L;
    if (p.mask_mode == MaskMode::causal) hi = std::min(L, (sem.causal_top_left ? i : pos) + 1);
    if (W >= 0) lo = std::max<std::int64_t>(0, pos - W);
    return {lo, std::max(lo, hi)};
  }

  // Query heads reading kv head kvh, in block-row order.
  int head_of(int kvh, int hh) const { return sem.gqa_modulo ? kvh + hh * Hkv : kvh * g + hh; }
};

struct Workspace {
  std::vector<double> q, s, o, k, v;
  std::vector<std::int64_t> lo, hi;
};

constexpr std::int64_t kKeyChunk = 256;  // keys gathered at a time when K/V are not pre-gathered

// One block: local rows [i0, i1) of request r, kv head kvh. K/V hold keys [kbase, kbase + n) of the request,
// or are null: then the block gathers its keys itself, kKeyChunk at a time into cache-sized buffers.
void run_block(const SideCtx& x, int r, int kvh, std::int64_t i0, std::int64_t i1, const double* K,
               const double* V, std::int64_t kbase, Workspace& ws, SideResult& res) {
  const std::int64_t Q = x.s.qo_len(r), L = x.s.kv_len(r);
  const int D = x.D, g = x.g;
  const std::int64_t rows = i1 - i0, M = rows * g;
  const std::int64_t row0 = x.s.qo_indptr[r];
  ws.lo.resize(M);
  ws.hi.resize(M);
  std::int64_t jlo = L, jhi = 0;
  for (std::int64_t i = i0; i < i1; ++i) {
    auto [lo, hi] = x.row_range(i, Q, L);
    for (int hh = 0; hh < g; ++hh) {
      ws.lo[(i - i0) * g + hh] = lo;
      ws.hi[(i - i0) * g + hh] = hi;
    }
    if (lo < hi) {
      jlo = std::min(jlo, lo);
      jhi = std::max(jhi, hi);
    }
  }
  auto write_empty = [&](std::int64_t m) {
    const std::int64_t row = row0 + i0 + m / g;
    const int h = x.head_of(kvh, static_cast<int>(m % g));
    std::fill_n(&res.out[(row * x.H + h) * D], D, 0.0);
    res.lse[row * x.H + h] = -std::numeric_limits<double>::infinity();
  };
  if (jlo >= jhi) {
    for (std::int64_t m = 0; m < M; ++m) write_empty(m);
    return;
  }
  const std::int64_t nk = jhi - jlo;
  ws.q.resize(M * D);
  ws.s.resize(M * nk);
  ws.o.resize(M * D);
  for (std::int64_t i = i0; i < i1; ++i) {
    const std::int64_t pos = i + L - Q;
    for (int hh = 0; hh < g; ++hh) {
      const int h = x.head_of(kvh, hh);
      double* qr = &ws.q[((i - i0) * g + hh) * D];
      const std::int64_t flat = ((row0 + i) * x.H + h) * D;
      SideCtx::decode_run(x.s.q, x.q_table, flat, D, qr);
      if (x.rope) x.rotate(qr, static_cast<double>(pos));
    }
  }
  const bool chunked = K == nullptr;
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

  const bool custom = x.p.mask_mode == MaskMode::custom;
  const double ninf = -std::numeric_limits<double>::infinity();
  std::vector<double> rowmax(M), rowsum(M);
  for (std::int64_t m = 0; m < M; ++m) {
    double* srow = &ws.s[m * nk];
    const std::int64_t i = i0 + m / g;
    const int h = x.head_of(kvh, static_cast<int>(m % g));
    const std::int64_t lo = ws.lo[m], hi = ws.hi[m];
    // Masked stretches of this row inside the block's range are never read below: passes 1 and 2 run over
    // [lo, hi) only and the stretches outside it are set to 0 for P V.
    if (custom && lo < hi) {
      const std::int64_t base = x.p.custom_mask_indptr[r] * 8 + i * L;
      const std::uint8_t* bits = x.p.custom_mask.data();
      for (std::int64_t j = lo; j < hi; ++j) {
        const std::int64_t b = base + j;
        if (!((bits[b >> 3] >> (b & 7)) & 1)) srow[j - jlo] = ninf;
      }
    }
    // Pass 1: final logits (ALiBi, soft cap) and their max.
    if (x.alibi || x.cap > 0) {
      const double slope = x.alibi ? x.slopes[h] : 0.0;
      const double iref = static_cast<double>(x.sem.alibi_true_position ? i + L - Q : i);
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
  const double vs = x.sem.v_scale_in_output ? x.p.v_scale : 1.0;
  const double to_base = x.sem.lse_base == LseBase::base2 ? 1.0 / std::log(2.0) : 1.0;
  for (std::int64_t m = 0; m < M; ++m) {
    if (rowsum[m] == 0.0) {
      write_empty(m);
      continue;
    }
    const std::int64_t row = row0 + i0 + m / g;
    const int h = x.head_of(kvh, static_cast<int>(m % g));
    double* out = &res.out[(row * x.H + h) * D];
    const double f = vs / rowsum[m];
    for (int d = 0; d < D; ++d) out[d] = ws.o[m * D + d] * f;
    res.lse[row * x.H + h] = (rowmax[m] + std::log(rowsum[m])) * to_base;
  }
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
  };
  std::vector<Pair> small;
  std::vector<Pair> big;
  for (int r = 0; r < sp->num_requests(); ++r) {
    if (sp->qo_len(r) == 0) continue;
    const std::int64_t nblocks = (sp->qo_len(r) + bq - 1) / bq;
    for (int kvh = 0; kvh < c.num_kv_heads; ++kvh)
      (nblocks >= 2 * nthreads ? big : small).push_back({r, kvh});
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
                         static_cast<double>(sp->qo_len(pr.r)) * std::max<std::int64_t>(1, b - a)});
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
            run_block(x, pr.r, pr.kvh, t.i0, t.i1, any ? Kbuf[t.pair].get() : nullptr,
                      any ? Vbuf[t.pair].get() : nullptr, lo_of[t.pair], ws, res);
          } else {
            const Pair& pr = small[t.small_index];
            for (std::int64_t i0 = t.i0; i0 < t.i1; i0 += bq)
              run_block(x, pr.r, pr.kvh, i0, std::min(t.i1, i0 + bq), nullptr, nullptr, 0, ws, res);
          }
        });
      }
    }
  }
  if (error) std::rethrow_exception(error);
  return res;
}

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

}  // namespace podcheck

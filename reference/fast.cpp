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
// per pair inside one thread (pairs run in parallel). OpenBLAS runs single-threaded inside our OpenMP loops.
#include "reference/reference.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace podcheck {
namespace {

constexpr int kTargetM = 128;  // rows (query rows x group) of one block

// exp(s[j] - m) for j < n into p, returns the sum. Vectorisable: Cody-Waite reduction to |r| <= ln2/2 and a
// degree-13 Taylor polynomial (truncation < 1e-17), scaled by 2^k built from the rounding constant's bits.
// Arguments below -708 (including -inf, the masked sentinel) give 0.
__attribute__((target_clones("avx2", "default"))) double exp_shifted(const double* s, double m, double* p,
                                                                      std::int64_t n) {
  constexpr double kLog2e = 1.4426950408889634;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kShift = 6755399441055744.0;  // 1.5 * 2^52
  const std::int64_t shift_bits = std::bit_cast<std::int64_t>(kShift);
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (std::int64_t j = 0; j < n; ++j) {
    const double x = s[j] - m;
    const double xc = x < -708.0 ? -708.0 : x;
    const double t = xc * kLog2e + kShift;
    const double k = t - kShift;
    const double r = (xc - k * kLn2Hi) - k * kLn2Lo;
    double q = 1.0 / 6227020800.0;
    q = q * r + 1.0 / 479001600.0;
    q = q * r + 1.0 / 39916800.0;
    q = q * r + 1.0 / 3628800.0;
    q = q * r + 1.0 / 362880.0;
    q = q * r + 1.0 / 40320.0;
    q = q * r + 1.0 / 5040.0;
    q = q * r + 1.0 / 720.0;
    q = q * r + 1.0 / 120.0;
    q = q * r + 1.0 / 24.0;
    q = q * r + 1.0 / 6.0;
    q = q * r + 0.5;
    q = q * r + 1.0;
    q = q * r + 1.0;
    const std::int64_t ki = std::bit_cast<std::int64_t>(t) - shift_bits;
    const double scale = std::bit_cast<double>(static_cast<std::uint64_t>(ki + 1023) << 52);
    const double y = x < -708.0 ? 0.0 : q * scale;
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
    if (!table) return t.get(flat);
    const std::size_t sz = dtype_size(t.dtype);
    std::uint32_t b = t.bytes[flat * sz];
    if (sz == 2) b |= static_cast<std::uint32_t>(t.bytes[flat * sz + 1]) << 8;
    return table[b];
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
  void gather(int r, int kvh, std::int64_t j0, std::int64_t j1, double* K, double* V) const {
    const Tensor& kt = s.kv.k_tensor();
    const Tensor& vt = s.kv.v_tensor();
    for (std::int64_t j = j0; j < j1; ++j) {
      const auto [page, slot] = physical(r, j);
      const std::int64_t ko = s.kv.offset(false, page, slot, kvh);
      const std::int64_t vo = s.kv.offset(true, page, slot, kvh);
      double* kr = K + (j - j0) * D;
      double* vr = V + (j - j0) * D;
      for (int d = 0; d < D; ++d) kr[d] = dec(kt, k_table, ko + d);
      for (int d = 0; d < D; ++d) vr[d] = dec(vt, v_table, vo + d);
      if (rope) rotate(kr, static_cast<double>(j));
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

// One block: local rows [i0, i1) of request r, kv head kvh. K/V hold keys [kbase, kbase + n) of the request.
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
      for (int d = 0; d < D; ++d) qr[d] = x.dec(x.s.q, x.q_table, flat + d);
      if (x.rope) x.rotate(qr, static_cast<double>(pos));
    }
  }
  const double* Kb = K + (jlo - kbase) * D;
  const double* Vb = V + (jlo - kbase) * D;
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(M), static_cast<int>(nk), D, x.sm,
              ws.q.data(), D, Kb, D, 0.0, ws.s.data(), static_cast<int>(nk));

  const bool custom = x.p.mask_mode == MaskMode::custom;
  const double ninf = -std::numeric_limits<double>::infinity();
  std::vector<double> rowmax(M), rowsum(M);
  for (std::int64_t m = 0; m < M; ++m) {
    double* srow = &ws.s[m * nk];
    const std::int64_t i = i0 + m / g;
    const int h = x.head_of(kvh, static_cast<int>(m % g));
    const std::int64_t lo = ws.lo[m], hi = ws.hi[m];
    // Masked stretches of this row inside the block's range are excluded (-inf).
    for (std::int64_t j = jlo; j < std::max(lo, jlo); ++j) srow[j - jlo] = ninf;
    for (std::int64_t j = std::max(hi, jlo); j < jhi; ++j) srow[j - jlo] = ninf;
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
    for (std::int64_t j = lo; j < hi; ++j) mx = std::max(mx, srow[j - jlo]);
    rowmax[m] = mx;
    // Pass 2: exponentials and their sum (masked entries become 0).
    if (mx == ninf) {
      std::fill_n(srow, nk, 0.0);
      rowsum[m] = 0.0;
    } else {
      rowsum[m] = exp_shifted(srow, mx, srow, nk);
    }
  }
  // Pass 3: O = P V, normalised.
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(M), D, static_cast<int>(nk), 1.0,
              ws.s.data(), static_cast<int>(nk), Vb, D, 0.0, ws.o.data(), D);
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
  std::string error;
  auto guarded = [&error](auto&& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
#pragma omp critical(podcheck_fast_error)
      if (error.empty()) error = e.what();
    }
  };

  // Big pairs: gather the whole KV once (in parallel), then blocks in parallel.
  std::vector<double> K, V;
  for (const Pair& pr : big) {
    const std::int64_t Q = sp->qo_len(pr.r);
    const auto [lo, hi] = span(x, pr.r, 0, Q);
    if (lo >= hi) {
      Workspace ws;
      guarded([&] { run_block(x, pr.r, pr.kvh, 0, Q, nullptr, nullptr, 0, ws, res); });
      continue;
    }
    K.resize((hi - lo) * x.D);
    V.resize((hi - lo) * x.D);
    const std::int64_t chunk = 64;
    const std::int64_t nchunks = (hi - lo + chunk - 1) / chunk;
#pragma omp parallel for schedule(static)
    for (std::int64_t ch = 0; ch < nchunks; ++ch) {
      const std::int64_t a = lo + ch * chunk, b = std::min(hi, a + chunk);
      guarded([&] { x.gather(pr.r, pr.kvh, a, b, &K[(a - lo) * x.D], &V[(a - lo) * x.D]); });
    }
    const std::int64_t nblocks = (Q + bq - 1) / bq;
#pragma omp parallel
    {
      Workspace ws;
      // Later blocks see more keys under a causal mask: hand them out first.
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t b = nblocks - 1; b >= 0; --b)
        guarded([&] { run_block(x, pr.r, pr.kvh, b * bq, std::min(Q, (b + 1) * bq), K.data(), V.data(), lo, ws, res); });
    }
  }
  // Small pairs: one pair per task, KV gathered by the thread that runs it.
#pragma omp parallel
  {
    Workspace ws;
#pragma omp for schedule(dynamic, 1)
    for (std::size_t t = 0; t < small.size(); ++t) {
      guarded([&] {
        const Pair& pr = small[t];
        const std::int64_t Q = sp->qo_len(pr.r);
        const auto [lo, hi] = span(x, pr.r, 0, Q);
        const std::int64_t n = std::max<std::int64_t>(0, hi - lo);
        ws.k.resize(n * x.D);
        ws.v.resize(n * x.D);
        if (n > 0) x.gather(pr.r, pr.kvh, lo, hi, ws.k.data(), ws.v.data());
        for (std::int64_t i0 = 0; i0 < Q; i0 += bq)
          run_block(x, pr.r, pr.kvh, i0, std::min(Q, i0 + bq), ws.k.data(), ws.v.data(), lo, ws, res);
      });
    }
  }
  if (!error.empty()) throw InvalidCase(error);
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

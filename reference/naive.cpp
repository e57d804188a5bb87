// Whole-side naive reference in double (reference/naive.hpp does the work, one row and head at a time).
#include "reference/naive.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace podcheck {

template void reference_naive_row<double>(const Case&, SideKind, std::int64_t, int, const Semantics&, double*,
                                          double&);

SideResult reference_naive_side(const Case& c, SideKind kind, const Semantics& sem) {
  validate_case(c);
  const Side* s = c.side(kind);
  if (!s) throw InvalidCase("case '" + c.id + "' has no " + std::string(side_name(kind)) + " side");
  SideResult res;
  res.rows = s->num_rows();
  res.heads = c.num_qo_heads;
  res.head_dim = c.head_dim;
  res.out.assign(static_cast<std::size_t>(res.rows * res.heads * res.head_dim), 0.0);
  res.lse.assign(static_cast<std::size_t>(res.rows * res.heads), 0.0);
#pragma omp parallel for schedule(dynamic, 1) collapse(2)
  for (std::int64_t row = 0; row < res.rows; ++row)
    for (int h = 0; h < res.heads; ++h)
      reference_naive_row<double>(c, kind, row, h, sem, &res.out[(row * res.heads + h) * res.head_dim],
                                  res.lse[row * res.heads + h]);
  return res;
}

bool key_visible(const Side& s, int r, std::int64_t i, std::int64_t j) {
  return naive_detail::visible(s, r, i, j, s.qo_len(r), s.kv_len(r));
}

double out_rel_diff(const double* oa, const double* ob, int D) {
  double num = 0.0, den = 0.0;
  for (int d = 0; d < D; ++d) {
    if (std::isnan(oa[d]) != std::isnan(ob[d])) return std::numeric_limits<double>::infinity();
    num = std::max(num, std::fabs(oa[d] - ob[d]));
    den = std::max(den, std::fabs(ob[d]));
  }
  const double rel = den > 0 ? num / den : (num > 0 ? std::numeric_limits<double>::infinity() : 0.0);
  return std::isnan(rel) ? std::numeric_limits<double>::infinity() : rel;
}

double lse_rel_diff(double la, double lb) {
  const bool ea = std::isinf(la) && la < 0, eb = std::isinf(lb) && lb < 0;
  if (ea != eb) return std::numeric_limits<double>::infinity();
  if (ea) return 0.0;
  const double rel = std::fabs(la - lb) / std::max(1.0, std::fabs(lb));
  return std::isnan(rel) ? std::numeric_limits<double>::infinity() : rel;
}

double row_rel_diff(const double* oa, double la, const double* ob, double lb, int D) {
  return std::max(out_rel_diff(oa, ob, D), lse_rel_diff(la, lb));
}

double max_rel_diff(const SideResult& a, const SideResult& b) {
  if (a.rows != b.rows || a.heads != b.heads || a.head_dim != b.head_dim)
    return std::numeric_limits<double>::infinity();
  double worst = 0.0;
  for (std::int64_t n = 0; n < a.rows * a.heads; ++n)
    worst = std::max(worst, row_rel_diff(&a.out[n * a.head_dim], a.lse[n], &b.out[n * b.head_dim], b.lse[n],
                                         a.head_dim));
  return worst;
}

PodResult reference_naive(const Case& c, const Semantics& sem) {
  PodResult r;
  if (c.prefill) r.prefill = reference_naive_side(c, SideKind::prefill, sem);
  if (c.decode) r.decode = reference_naive_side(c, SideKind::decode, sem);
  return r;
}

}  // namespace podcheck

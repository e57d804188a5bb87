// Division by a run-time divisor without a divide instruction sequence: the page size of a KV cache is known
// only at run time, and the KV copy loops divide every token index by it. Host and device (pure C++ on the
// host, so the host tests check it exhaustively over the range the kernel uses).
#pragma once

#include "reference/host_device.hpp"

#include <cstdint>

namespace podcheck::kernels {

// n / d for n in [0, 2^31) and d in [1, 2^31), with one multiply-high, one add and one shift. The "round-up"
// magic number of Granlund and Montgomery (PLDI 1994, section 4; Hacker's Delight 10-9): s = ceil(log2 d),
// m = floor(2^32 (2^s - d) / d) + 1, then n / d = (mulhi(n, m) + n) >> s. mulhi(n, m) <= n, so for n < 2^31
// the sum fits in 32 bits (the general 32-bit form needs an extra subtract and shift, not needed here).
struct FastDiv {
  std::uint32_t m = 1;
  std::uint32_t s = 0;
  std::int32_t d = 1;

  static FastDiv make(std::int32_t divisor) {
    FastDiv f;
    f.d = divisor;
    while ((std::uint64_t{1} << f.s) < static_cast<std::uint64_t>(divisor)) ++f.s;
    f.m = static_cast<std::uint32_t>(((std::uint64_t{1} << 32) * ((std::uint64_t{1} << f.s) - divisor)) /
                                         static_cast<std::uint64_t>(divisor) + 1);
    return f;
  }
  PODCHECK_HD std::int32_t div(std::int32_t n) const {
#if defined(__CUDA_ARCH__)
    const std::uint32_t hi = __umulhi(static_cast<std::uint32_t>(n), m);
#else
    const std::uint32_t hi =
        static_cast<std::uint32_t>((static_cast<std::uint64_t>(static_cast<std::uint32_t>(n)) * m) >> 32);
#endif
    return static_cast<std::int32_t>((hi + static_cast<std::uint32_t>(n)) >> s);
  }
  PODCHECK_HD std::int32_t mod(std::int32_t n, std::int32_t q) const { return n - q * d; }  // q = div(n)
};

}  // namespace podcheck::kernels

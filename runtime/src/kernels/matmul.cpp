// SPDX-License-Identifier: Apache-2.0
// Golden int8 matmul and the requantisation of its accumulators.
// RTL twins: rtl/matmul/psm_systolic_array.sv, rtl/common/psm_requant.sv.
#include "passim/kernels/matmul.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "passim/kernels/require.hpp"

namespace passim::kernels {

namespace {

/// Input channels widened to int16 at a time (a stack buffer: kernels never allocate).
constexpr std::size_t kWidenChunk = 512;

}  // namespace

void matmul_i8(std::span<const std::int8_t> a, std::span<const std::int8_t> w,
               std::span<std::int32_t> out, std::size_t m, std::size_t k, std::size_t n) {
  require_at_least("matmul_i8", "a", m * k, a.size());
  require_at_least("matmul_i8", "w", n * k, w.size());
  require_at_least("matmul_i8", "out", m * n, out.size());
  std::array<std::int16_t, kWidenChunk> a16;  // only the copied prefix is read
  for (std::size_t r = 0; r < m; ++r) {
    const std::int8_t* arow = a.data() + r * k;
    std::int32_t* orow = out.data() + r * n;
    // The input row in int16 (once per chunk, not once per column): int16 x int8 products
    // then vectorise as pairwise multiply-adds. Chunks add into the accumulators.
    for (std::size_t k0 = 0; k0 < k; k0 += kWidenChunk) {
      const std::size_t len = std::min(kWidenChunk, k - k0);
      std::copy(arow + k0, arow + k0 + len, a16.begin());
      for (std::size_t c = 0; c < n; ++c) {
        const std::int8_t* wrow = w.data() + c * k + k0;
        // Accumulate in uint32 so that overflow wraps (defined) exactly like the int32 PE
        // accumulators; integer addition is associative, so the compiler may vectorise.
        std::uint32_t acc = k0 == 0 ? 0u : static_cast<std::uint32_t>(orow[c]);
        for (std::size_t i = 0; i < len; ++i) {
          acc += static_cast<std::uint32_t>(std::int32_t{a16[i]} * std::int32_t{wrow[i]});
        }
        orow[c] = static_cast<std::int32_t>(acc);  // two's complement (C++20)
      }
    }
  }
}

void matmul_digits_i8(std::span<const std::int8_t> a, std::span<const std::int8_t> w,
                      std::span<std::int32_t> out, std::size_t m, std::size_t k, std::size_t n,
                      std::size_t digits) {
  require(digits >= 1 && digits <= 3, "matmul_digits_i8",
          "digits: expected 1..3, found " + std::to_string(digits));
  require_at_least("matmul_digits_i8", "a", m * digits * k, a.size());
  require_at_least("matmul_digits_i8", "w", n * digits * k, w.size());
  require_at_least("matmul_digits_i8", "out", m * n, out.size());
  if (digits == 1) {
    matmul_i8(a, w, out, m, k, n);  // the same sums, vectorised
    return;
  }
  for (std::size_t r = 0; r < m; ++r) {
    for (std::size_t c = 0; c < n; ++c) {
      std::uint32_t acc = 0;  // uint32: wraps like the int32 accumulator (Horner)
      for (std::size_t g = 0; g < digits; ++g) {
        const std::int8_t* arow = a.data() + (r * digits + g) * k;
        const std::int8_t* wrow = w.data() + (c * digits + g) * k;
        std::uint32_t sum = 0;
        for (std::size_t i = 0; i < k; ++i) {
          sum += static_cast<std::uint32_t>(std::int32_t{arow[i]} * std::int32_t{wrow[i]});
        }
        acc = (acc << 8) + sum;
      }
      out[r * n + c] = static_cast<std::int32_t>(acc);
    }
  }
}

namespace {
template <typename T>
void requantize_cols(std::span<const std::int32_t> acc, std::span<const Requant> rq,
                     std::span<T> out, int bits, std::string_view kernel) {
  const std::size_t n = rq.size();
  require_at_least(kernel, "rq", 1, n);
  require(acc.size() % n == 0, kernel,
          "acc: expected a multiple of rq.size() = " + std::to_string(n) + " elements, found " +
              std::to_string(acc.size()));
  require_at_least(kernel, "out", acc.size(), out.size());
  for (std::size_t r = 0; r < acc.size(); r += n) {  // one row of n columns at a time
    for (std::size_t c = 0; c < n; ++c) {
      out[r + c] = static_cast<T>(requantize_result(acc[r + c], rq[c], bits));
    }
  }
}
}  // namespace

void requantize_i8(std::span<const std::int32_t> acc, std::span<const Requant> rq,
                   std::span<std::int8_t> out) {
  requantize_cols(acc, rq, out, 8, "requantize_i8");
}
void requantize_i16(std::span<const std::int32_t> acc, std::span<const Requant> rq,
                    std::span<std::int16_t> out) {
  requantize_cols(acc, rq, out, 16, "requantize_i16");
}
void requantize_bits(std::span<const std::int32_t> acc, std::span<const Requant> rq,
                     std::span<std::int16_t> out, int bits) {
  require(bits >= 2 && bits <= 16, "requantize_bits",
          "bits: expected 2..16, found " + std::to_string(bits));
  requantize_cols(acc, rq, out, bits, "requantize_bits");
}
void requantize_i32(std::span<const std::int32_t> acc, std::span<const Requant> rq,
                    std::span<std::int32_t> out) {
  requantize_cols(acc, rq, out, 32, "requantize_i32");
}

}  // namespace passim::kernels

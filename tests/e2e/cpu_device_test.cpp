// SPDX-License-Identifier: Apache-2.0
// CpuDevice, the ISA reference, on hand-built programs for the GPT-style additions
// (docs/isa.md): LAYERNORM, BATCHNORM and GELU give exactly their golden kernels, MATMUL adds
// the parameter entry's bias before scaling, DMA_STORE `requant` requantises with param[0],
// bad operands stop the run naming the instruction, and `instr_passes` states the passes.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "passim/compiler/program.hpp"
#include "passim/device/cpu_device.hpp"
#include "passim/device/device.hpp"
#include "passim/fixed_point.hpp"
#include "passim/hw/spec.hpp"
#include "passim/kernels/batchnorm.hpp"
#include "passim/kernels/gelu.hpp"
#include "passim/kernels/layernorm.hpp"

namespace {

using namespace passim;
namespace f = hw::fields;

constexpr std::uint64_t kDram = 1 << 20;
constexpr std::uint64_t kProg = 0xF0000;  // program area
constexpr std::uint32_t kIn = 0x0000;     // inputs
constexpr std::uint32_t kIn2 = 0x20000;   // gains, biases, weights
constexpr std::uint32_t kPrm = 0x40000;   // parameter entries
constexpr std::uint32_t kOut = 0x60000;   // results
constexpr std::uint32_t kSeed = 2718;

/// The parameter entry of a Requant step: mult [31:0], shift [37:32], bias [63:38].
std::uint64_t entry(Requant rq) {
  const std::uint64_t bias_mask = (std::uint64_t{1} << kRequantBiasBits) - 1;
  return std::uint64_t(std::uint32_t(rq.mult)) | (std::uint64_t(std::uint32_t(rq.shift)) << 32) |
         ((std::uint64_t(std::int64_t{rq.bias}) & bias_mask) << 38);
}

hw::Instr dma(bool load, hw::Mem mem, std::uint32_t log2_size, std::uint32_t dram,
              std::uint32_t spad, std::uint32_t rows, std::uint32_t row_len) {
  hw::Instr in = hw::make_instr(load ? hw::Opcode::kDmaLoad : hw::Opcode::kDmaStore, 0);
  hw::set_field(in, f::dma_load::kMem, std::uint32_t(mem));
  hw::set_field(in, f::dma_load::kElemSize, log2_size);
  hw::set_field(in, f::dma_load::kDramAddr, dram);
  hw::set_field(in, f::dma_load::kSpadAddr, spad);
  hw::set_field(in, f::dma_load::kRows, rows);
  hw::set_field(in, f::dma_load::kRowLen, row_len);
  hw::set_field(in, f::dma_load::kDramStride, row_len << log2_size);
  return in;
}

hw::Instr store_requant(hw::Mem mem, std::uint32_t log2_size, std::uint32_t dram,
                        std::uint32_t spad, std::uint32_t rows, std::uint32_t row_len) {
  hw::Instr in = dma(false, mem, log2_size, dram, spad, rows, row_len);
  hw::set_field(in, f::dma_store::kRequant, 1);
  return in;
}

/// A vector opcode (every one shares RMSNORM's operand layout).
hw::Instr vec(hw::Opcode op, std::uint32_t src, std::uint32_t src2, std::uint32_t dst,
              std::uint32_t param, std::uint32_t len, std::uint32_t rows,
              std::uint32_t gain_frac_bits = 0) {
  hw::Instr in = hw::make_instr(op, 0);
  hw::set_field(in, f::rmsnorm::kSrcAddr, src);
  hw::set_field(in, f::rmsnorm::kSrc2Addr, src2);
  hw::set_field(in, f::rmsnorm::kDstAddr, dst);
  hw::set_field(in, f::rmsnorm::kParamAddr, param);
  hw::set_field(in, f::rmsnorm::kLen, len);
  hw::set_field(in, f::rmsnorm::kRows, rows);
  hw::set_field(in, f::rmsnorm::kGainFracBits, gain_frac_bits);
  return in;
}

template <typename T>
void put(CpuDevice& dev, std::uint64_t addr, const std::vector<T>& v) {
  dev.write_dram(addr, {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * sizeof(T)});
}

template <typename T>
std::vector<T> get(const CpuDevice& dev, std::uint64_t addr, std::size_t n) {
  std::vector<T> v(n);
  dev.read_dram(addr, {reinterpret_cast<std::uint8_t*>(v.data()), n * sizeof(T)});
  return v;
}

/// Runs `body` followed by END (instructions run in order, so no BARRIERs are needed).
RunStats run(CpuDevice& dev, std::vector<hw::Instr> body) {
  body.push_back(hw::make_instr(hw::Opcode::kEnd, 0));
  dev.write_dram(kProg, {reinterpret_cast<const std::uint8_t*>(body.data()), body.size() * 16});
  return dev.run(kProg, std::uint32_t(body.size()));
}

/// Expects the run of `body` to fail with a message naming instruction `index` and `what`.
void expect_error(CpuDevice& dev, std::vector<hw::Instr> body, std::uint32_t index,
                  const std::string& what) {
  try {
    (void)run(dev, std::move(body));
    ADD_FAILURE() << "expected an error about " << what;
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("instruction " + std::to_string(index)), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

std::vector<std::int16_t> random_i16(std::mt19937& rng, std::size_t n, int lo, int hi) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<std::int16_t> v(n);
  for (auto& x : v) {
    x = static_cast<std::int16_t>(d(rng));
  }
  return v;
}

std::uint32_t words(std::size_t n, std::size_t per_word) {
  return std::uint32_t((n + per_word - 1) / per_word);
}

// LAYERNORM: rows of random values, a constant row (output = the bias), and a row alternating
// +-1 around a large mean; the bias row sits right after the gain row.
TEST(CpuDeviceGpt, LayerNormRowsMatchTheKernel) {
  for (const hw::HwConfig* cfg : {&hw::kTiny, &hw::kSmall}) {
    SCOPED_TRACE(cfg->name);
    CpuDevice dev(*cfg, kDram);
    std::mt19937 rng(kSeed);
    for (const std::uint32_t len : {1u, 5u, 16u, 77u}) {
      const std::uint32_t rows = 4;
      std::vector<std::int16_t> x = random_i16(rng, rows * len, -32768, 32767);
      for (std::uint32_t i = 0; i < len; ++i) {
        x[len + i] = 20000;                                       // constant row
        x[2 * len + i] = std::int16_t(30000 + (i % 2 ? 1 : -1));  // +-1 around 30000
      }
      const auto gain = random_i16(rng, len, -20000, 20000);
      const auto bias = random_i16(rng, len, -300, 300);
      const std::uint64_t eps = len == 5 ? 0 : 1 << 10;
      const std::uint32_t gw = words(len, cfg->lanes), frac = 11;
      put(dev, kIn, x);
      put(dev, kIn2, gain);
      put(dev, kIn2 + 0x1000, bias);
      put(dev, kPrm, std::vector<std::uint64_t>{eps});
      run(dev, {dma(true, hw::Mem::kVector, 1, kIn, 0, rows, len),
                dma(true, hw::Mem::kVector, 1, kIn2, 500, 1, len),
                dma(true, hw::Mem::kVector, 1, kIn2 + 0x1000, 500 + gw, 1, len),
                dma(true, hw::Mem::kParam, 3, kPrm, 7, 1, 1),
                vec(hw::Opcode::kLayernorm, 0, 500, 300, 7, len, rows, frac),
                dma(false, hw::Mem::kVector, 0, kOut, 300, rows, len)});
      const auto got = get<std::int8_t>(dev, kOut, rows * len);
      for (std::uint32_t r = 0; r < rows; ++r) {
        std::vector<std::int8_t> want(len);
        kernels::layernorm_i8({x.data() + r * len, len}, {gain, bias, int(frac), eps}, want);
        ASSERT_EQ(std::vector<std::int8_t>(got.begin() + r * len, got.begin() + (r + 1) * len),
                  want)
            << "len " << len << " row " << r;
        if (r == 1) {
          for (std::uint32_t i = 0; i < len; ++i) {
            EXPECT_EQ(want[i], saturate(bias[i], 8)) << "a constant row gives its bias";
          }
        }
      }
    }
  }
}

TEST(CpuDeviceGpt, BatchNormRowsMatchTheKernel) {
  CpuDevice dev(hw::kTiny, kDram);
  std::mt19937 rng(kSeed);
  const std::uint32_t len = 37, rows = 3;
  const auto x = random_i16(rng, rows * len, -32768, 32767);
  const auto gain = random_i16(rng, len, -32768, 32767);
  const auto bias = random_i16(rng, len, -200, 200);
  const Requant rq = make_requant(1.0 / (1 << 22));
  put(dev, kIn, x);
  put(dev, kIn2, gain);
  put(dev, kIn2 + 0x1000, bias);
  put(dev, kPrm, std::vector<std::uint64_t>{entry(rq)});
  const std::uint32_t gw = words(len, hw::kTiny.lanes);
  run(dev, {dma(true, hw::Mem::kVector, 1, kIn, 0, rows, len),
            dma(true, hw::Mem::kVector, 1, kIn2, 400, 1, len),
            dma(true, hw::Mem::kVector, 1, kIn2 + 0x1000, 400 + gw, 1, len),
            dma(true, hw::Mem::kParam, 3, kPrm, 3, 1, 1),
            vec(hw::Opcode::kBatchnorm, 0, 400, 200, 3, len, rows),
            dma(false, hw::Mem::kVector, 0, kOut, 200, rows, len)});
  const auto got = get<std::int8_t>(dev, kOut, rows * len);
  std::vector<std::int8_t> want(rows * len);
  for (std::uint32_t r = 0; r < rows; ++r) {
    kernels::batchnorm_i8({x.data() + r * len, len}, {gain, bias, rq},
                          {want.data() + r * len, len});
  }
  EXPECT_EQ(got, want);
}

// GELU over every int8 input; the steps' bias bits are ignored (only MATMUL adds a bias).
TEST(CpuDeviceGpt, GeluEveryInt8Input) {
  CpuDevice dev(hw::kTiny, kDram);
  std::vector<std::int8_t> x(256);
  for (int i = 0; i < 256; ++i) {
    x[std::size_t(i)] = static_cast<std::int8_t>(i - 128);
  }
  const Requant to_q10 = make_requant(1024.0 / 16);   // s_in = 2^-4
  const Requant out_rq = make_requant(16.0 / 65536);  // s_out = 2^-4, Phi in Q0.16
  Requant to_q10_biased = to_q10;
  to_q10_biased.bias = -12345;
  put(dev, kIn, x);
  put(dev, kPrm, std::vector<std::uint64_t>{entry(to_q10_biased), entry(out_rq)});
  run(dev, {dma(true, hw::Mem::kVector, 0, kIn, 0, 2, 128),
            dma(true, hw::Mem::kParam, 3, kPrm, 20, 1, 2),
            vec(hw::Opcode::kGelu, 0, 0, 0, 20, 128, 2),  // in place
            dma(false, hw::Mem::kVector, 0, kOut, 0, 2, 128)});
  std::vector<std::int8_t> want(256);
  kernels::gelu_i8(x, to_q10, out_rq, want);
  EXPECT_EQ(get<std::int8_t>(dev, kOut, 256), want);
}

// MATMUL adds each column's bias to the int32 sum before the multiply, exactly in int64: the
// extremes of the 26-bit range, and a bias that takes the sum past INT32_MAX.
TEST(CpuDeviceGpt, MatmulAddsTheParamBias) {
  CpuDevice dev(hw::kTiny, kDram);
  const std::uint32_t k = 1024, n = 6;
  std::vector<std::int8_t> a(k, 127), wt(k * n);  // W^T (k, n)
  for (std::uint32_t i = 0; i < k; ++i) {
    wt[i * n + 0] = 127;   // sum 127 * 127 * 1024 = 16516096
    wt[i * n + 1] = -128;  // -16646144
    wt[i * n + 2] = 1;     // 127 * 1024 = 130048
    wt[i * n + 3] = -1;
    wt[i * n + 4] = 127;
    wt[i * n + 5] = 0;
  }
  const std::int32_t bmax = (1 << 25) - 1, bmin = -(1 << 25);
  // Column 4: the sum 16516096 plus 2^25 - 1, times 2^31 - 1 with shift 0, is far above
  // INT32_MAX and saturates. (A sum itself near INT32_MAX needs k > 2047: tests/sim drives
  // psm_requant with the whole int32 range and both bias extremes.)
  const std::vector<Requant> rq{{1 << 30, 30, bmax},    {1 << 30, 30, bmin},
                                {1 << 30, 31, bmin},    {0x7FFF'FFFF, 31, bmax},
                                {0x7FFF'FFFF, 0, bmax}, {1, 0, -7}};
  std::vector<std::uint64_t> e;
  for (const Requant& r : rq) {
    e.push_back(entry(r));
  }
  put(dev, kIn, a);
  put(dev, kIn2, wt);
  put(dev, kPrm, e);
  hw::Instr mm = hw::make_instr(hw::Opcode::kMatmul, 0);
  hw::set_field(mm, f::matmul::kOutBits, 32);
  hw::set_field(mm, f::matmul::kDstAddr, 10);
  hw::set_field(mm, f::matmul::kM, 1);
  hw::set_field(mm, f::matmul::kK, k);
  hw::set_field(mm, f::matmul::kN, n);
  run(dev,
      {dma(true, hw::Mem::kInput, 0, kIn, 0, 1, k), dma(true, hw::Mem::kWeight, 0, kIn2, 0, k, n),
       dma(true, hw::Mem::kParam, 3, kPrm, 0, 1, n), mm,
       dma(false, hw::Mem::kVector, 2, kOut, 10, 1, n)});
  const auto got = get<std::int32_t>(dev, kOut, n);
  const std::int64_t sums[] = {16516096, -16646144, 130048, -130048, 16516096, 0};
  for (std::uint32_t c = 0; c < n; ++c) {
    const std::int64_t prod = (sums[c] + rq[c].bias) * std::int64_t{rq[c].mult};
    EXPECT_EQ(got[c], saturate(round_shift(prod, rq[c].shift), 32)) << "column " << c;
  }
  EXPECT_EQ(got[0], 16516096 + bmax) << "mult 2^30 >> 30 is the identity";
  EXPECT_EQ(got[1], -16646144 + bmin);
  EXPECT_EQ(got[4], INT32_MAX) << "the biased sum times 2^31 - 1 saturates";
  EXPECT_EQ(got[5], -7);
}

// MATMUL_HEADS: every head of head_size columns starts a vector word, the rows are packed, and
// the lanes past a head's last column keep what they held.
TEST(CpuDeviceGpt, MatmulHeadsStartsEachHeadAtAWord) {
  CpuDevice dev(hw::kSmall, kDram);  // L = 8
  constexpr std::uint32_t m = 2, k = 5, n = 10, hs = 3, words = 4;  // heads of 3, 3, 3, 1
  std::vector<std::int8_t> a(m * k), wt(k * n);
  for (std::uint32_t i = 0; i < a.size(); ++i) {
    a[i] = std::int8_t(int(i) - 4);
  }
  for (std::uint32_t i = 0; i < wt.size(); ++i) {
    wt[i] = std::int8_t(3 * int(i % 17) - 20);  // W^T: row kk, column c at kk * n + c
  }
  const std::vector<std::int32_t> fill(m * words * 8, -999);
  put(dev, kIn, a);
  put(dev, kIn2, wt);
  put(dev, kOut + 0x1000, fill);
  hw::Instr mm = hw::make_instr(hw::Opcode::kMatmulHeads, 0);
  hw::set_field(mm, f::matmul_heads::kHeadSize, hs);
  hw::set_field(mm, f::matmul_heads::kDstAddr, 20);
  hw::set_field(mm, f::matmul_heads::kM, m);
  hw::set_field(mm, f::matmul_heads::kK, k);
  hw::set_field(mm, f::matmul_heads::kN, n);
  run(dev, {dma(true, hw::Mem::kVector, 2, kOut + 0x1000, 20, 1, m * words * 8),
            dma(true, hw::Mem::kInput, 0, kIn, 0, m, k),
            dma(true, hw::Mem::kWeight, 0, kIn2, 0, k, n), mm,
            dma(false, hw::Mem::kVector, 2, kOut, 20, 1, m * words * 8)});
  const auto got = get<std::int32_t>(dev, kOut, m * words * 8);
  std::vector<std::int32_t> want = fill;
  for (std::uint32_t r = 0; r < m; ++r) {
    for (std::uint32_t c = 0; c < n; ++c) {
      std::int32_t sum = 0;
      for (std::uint32_t i = 0; i < k; ++i) {
        sum += std::int32_t{a[r * k + i]} * wt[i * n + c];
      }
      want[(r * words + c / hs) * 8 + c % hs] = sum;
    }
  }
  EXPECT_EQ(got, want);
}

// MATMUL_ACT on tiny (R = 2, C = 4, L = 2: every operand spans several words): two digit
// groups (a's row r holds group g at words (r * 2 + g) * KT, W^T group g's rows from g * k on),
// out = 256 * a_0 w_0^T + a_1 w_1^T, written as rows and transposed (column c as vector row c).
TEST(CpuDeviceGpt, MatmulActAddsDigitGroupsAndTransposes) {
  constexpr std::uint32_t m = 3, k = 5, n = 5, g_n = 2;
  std::vector<std::int8_t> a(m * g_n * k), wt(g_n * k * n);  // a: (m * G, k), W^T: (G * k, n)
  for (std::uint32_t i = 0; i < a.size(); ++i) {
    a[i] = std::int8_t(7 * int(i % 29) - 100);
  }
  for (std::uint32_t i = 0; i < wt.size(); ++i) {
    wt[i] = std::int8_t(11 * int(i % 23) - 120);
  }
  std::vector<std::int32_t> want(m * n);  // row-major
  for (std::uint32_t r = 0; r < m; ++r) {
    for (std::uint32_t c = 0; c < n; ++c) {
      for (std::uint32_t g = 0; g < g_n; ++g) {
        std::int32_t sum = 0;
        for (std::uint32_t i = 0; i < k; ++i) {
          sum += std::int32_t{a[(r * g_n + g) * k + i]} * wt[(g * k + i) * n + c];
        }
        want[r * n + c] = 256 * want[r * n + c] + sum;
      }
    }
  }
  for (const bool trans : {false, true}) {
    CpuDevice dev(hw::kTiny, kDram);
    put(dev, kIn, a);
    put(dev, kIn2, wt);
    hw::Instr mm = hw::make_instr(hw::Opcode::kMatmulAct, 0);
    hw::set_field(mm, f::matmul_act::kDigits, g_n);
    hw::set_field(mm, f::matmul_act::kTranspose, trans ? 1 : 0);
    hw::set_field(mm, f::matmul_act::kDstAddr, 30);
    hw::set_field(mm, f::matmul_act::kM, m);
    hw::set_field(mm, f::matmul_act::kK, k);
    hw::set_field(mm, f::matmul_act::kN, n);
    EXPECT_EQ(instr_passes(mm, hw::kTiny), 2u * 3u * 2u);  // G * ceil(k / R) * ceil(n / C)
    run(dev, {dma(true, hw::Mem::kInput, 0, kIn, 0, m * g_n, k),
              dma(true, hw::Mem::kWeight, 0, kIn2, 0, g_n * k, n), mm,
              dma(false, hw::Mem::kVector, 2, kOut, 30, trans ? n : m, trans ? m : n)});
    const auto got = get<std::int32_t>(dev, kOut, n * m);
    for (std::uint32_t r = 0; r < m; ++r) {
      for (std::uint32_t c = 0; c < n; ++c) {
        EXPECT_EQ(got[trans ? c * m + r : r * n + c], want[r * n + c])
            << (trans ? "transposed, " : "") << "row " << r << ", column " << c;
      }
    }
  }
}

// The digits MATMUL_ACT multiplies come from DMA_STOREs (docs/numerics.md 4.13): for a 12-bit
// x, a plain store keeps the signed low byte and a `requant` store with {1, 8} gives
// round(x / 256); for a probability, {1, 8} saturates at 127 and {32897, 31} is 1 exactly from
// 32640 on. The digits recombine to x.
TEST(CpuDeviceGpt, DmaStoresSplitTwelveBitValuesIntoDigits) {
  std::vector<std::int32_t> x;
  for (int v = -2048; v <= 2047; v += 7) {
    x.push_back(v);
  }
  x.insert(x.end(), {-2048, -129, -128, -1, 0, 127, 128, 2047});
  std::vector<std::int32_t> p{0, 1, 127, 128, 255, 256, 16383, 32511, 32639, 32640, 32700, 32767};
  const auto run_split = [](const std::vector<std::int32_t>& v, std::uint64_t step0,
                            std::uint64_t step1) {
    CpuDevice dev(hw::kTiny, kDram);
    const auto len = std::uint32_t(v.size());
    put(dev, kIn, v);
    put(dev, kPrm, std::vector<std::uint64_t>{step0, step1});
    run(dev, {dma(true, hw::Mem::kVector, 2, kIn, 0, 1, len),
              dma(false, hw::Mem::kVector, 0, kOut, 0, 1, len),  // low byte
              dma(true, hw::Mem::kParam, 3, kPrm, 0, 1, 1),
              store_requant(hw::Mem::kVector, 0, kOut + 0x1000, 0, 1, len),
              dma(true, hw::Mem::kParam, 3, kPrm + 8, 0, 1, 1),
              store_requant(hw::Mem::kVector, 0, kOut + 0x2000, 0, 1, len)});
    return std::array<std::vector<std::int8_t>, 3>{get<std::int8_t>(dev, kOut, len),
                                                   get<std::int8_t>(dev, kOut + 0x1000, len),
                                                   get<std::int8_t>(dev, kOut + 0x2000, len)};
  };
  const std::uint64_t hi_step = entry(Requant{1, 8, 0}), top_step = entry(Requant{32897, 31, 0});
  const auto xd = run_split(x, hi_step, hi_step);
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(256 * xd[1][i] + xd[0][i], x[i]) << "x = " << x[i];
    EXPECT_GE(xd[1][i], -8);
    EXPECT_LE(xd[1][i], 8);
  }
  const auto pd = run_split(p, hi_step, top_step);
  for (std::size_t i = 0; i < p.size(); ++i) {
    EXPECT_EQ(256 * (pd[1][i] + pd[2][i]) + pd[0][i], p[i]) << "p = " << p[i];
    EXPECT_EQ(pd[2][i], p[i] >= 32640 ? 1 : 0) << "p = " << p[i];
  }
}

// DMA_STORE `requant`: int8, int16 and int32 stores of int32 lanes with param[0], saturating
// at both ends; the step's bias bits are ignored.
TEST(CpuDeviceGpt, DmaStoreRequantSaturates) {
  CpuDevice dev(hw::kTiny, kDram);
  const std::vector<std::int32_t> x{INT32_MIN, -1'000'000, -300, -129, -2,  -1,    0,
                                    1,         2,          3,    255,  256, 40000, INT32_MAX};
  const auto len = std::uint32_t(x.size());
  Requant rq{1 << 30, 31, 999};  // x / 2, ties up; bias ignored
  put(dev, kIn, x);
  put(dev, kPrm, std::vector<std::uint64_t>{entry(rq)});
  run(dev,
      {dma(true, hw::Mem::kVector, 2, kIn, 0, 1, len), dma(true, hw::Mem::kParam, 3, kPrm, 0, 1, 1),
       store_requant(hw::Mem::kVector, 0, kOut, 0, 1, len),
       store_requant(hw::Mem::kVector, 1, kOut + 0x100, 0, 1, len),
       store_requant(hw::Mem::kVector, 2, kOut + 0x200, 0, 1, len)});
  rq.bias = 0;
  const auto o8 = get<std::int8_t>(dev, kOut, len);
  const auto o16 = get<std::int16_t>(dev, kOut + 0x100, len);
  const auto o32 = get<std::int32_t>(dev, kOut + 0x200, len);
  for (std::uint32_t i = 0; i < len; ++i) {
    EXPECT_EQ(o8[i], requantize(x[i], rq, 8)) << "element " << i;
    EXPECT_EQ(o16[i], requantize(x[i], rq, 16)) << "element " << i;
    EXPECT_EQ(o32[i], requantize(x[i], rq, 32)) << "element " << i;
  }
  EXPECT_EQ(o8.front(), -128);
  EXPECT_EQ(o8.back(), 127);
  EXPECT_EQ(o16.front(), -32768);
  EXPECT_EQ(o16.back(), 32767);
  EXPECT_EQ(o8[4], -1) << "-2 / 2";
  EXPECT_EQ(o8[9], 2) << "3 / 2 = 1.5 rounds up";
}

TEST(CpuDeviceGpt, BadOperandsNameTheInstruction) {
  CpuDevice dev(hw::kTiny, kDram);
  expect_error(dev, {store_requant(hw::Mem::kInput, 0, kOut, 0, 1, 4)}, 0, "requant");
  expect_error(dev,
               {dma(true, hw::Mem::kVector, 1, kIn, 0, 1, 4),
                store_requant(hw::Mem::kParam, 3, kOut, 0, 1, 1)},
               1, "requant");
  expect_error(dev, {vec(hw::Opcode::kLayernorm, 0, 10, 20, 0, 4, 1, 14)}, 0,
               "LAYERNORM gain_frac_bits: expected 0..13, found 14");
  expect_error(dev, {vec(hw::Opcode::kGelu, 0, 0, 0, 0, 0, 1)}, 0,
               "GELU len and rows: expected >= 1, found 0 and 1");
  expect_error(dev,
               {vec(hw::Opcode::kBatchnorm, 0, 0, 0, std::uint32_t(hw::kTiny.param_depth), 4, 1)},
               0, "spad_range");
  // A DMA_LOAD ignores bit 26 (reserved there): no error.
  hw::Instr load = dma(true, hw::Mem::kInput, 0, kIn, 0, 1, 4);
  hw::set_field(load, f::dma_store::kRequant, 1);
  EXPECT_NO_THROW(run(dev, {load}));
}

// A DMA must stay inside the DRAM, checked before any row moves; it used to throw
// std::out_of_range out of run(), naming no instruction, after moving the rows that fit.
TEST(CpuDeviceGpt, DmaOutsideTheDramNamesTheInstruction) {
  CpuDevice dev(hw::kTiny, kDram);
  expect_error(dev, {dma(true, hw::Mem::kInput, 0, kDram - 2, 0, 1, 4)}, 0,
               "DMA from DRAM byte 0xffffe (rows 1, 4 bytes each, 4 bytes apart) ends at byte "
               "0x100002, past the 1048576-byte DRAM");
  put(dev, kIn, std::vector<std::int8_t>(8, 7));
  const std::uint32_t last_row_out = std::uint32_t(kDram) - 4 * 300;  // rows 4 bytes apart
  expect_error(dev,
               {dma(true, hw::Mem::kVector, 0, kIn, 0, 1, 8),
                dma(false, hw::Mem::kVector, 0, last_row_out, 0, 301, 4)},
               1, "past the 1048576-byte DRAM");
  EXPECT_EQ(get<std::int8_t>(dev, last_row_out, 4), std::vector<std::int8_t>(4, 0))
      << "no row of a refused DMA_STORE is written";
}

// ---- inputs found by tests/fuzz/program_fuzz.cpp, run as the target runs them ---------------

/// The error of `program` on the fuzz target's device: `tiny`, a 256 KiB DRAM of fixed LCG
/// bytes, the program in the last prog_depth instructions; "" when it runs cleanly.
std::string fuzz_target_error(const std::vector<std::uint8_t>& program) {
  constexpr std::uint64_t kFuzzDram = std::uint64_t{1} << 18;
  std::vector<std::uint8_t> image(kFuzzDram);
  std::uint32_t state = 12345;
  for (std::uint8_t& b : image) {
    state = state * 1664525u + 1013904223u;
    b = static_cast<std::uint8_t>(state >> 24);
  }
  CpuDevice dev(hw::kTiny, kFuzzDram);
  dev.write_dram(0, image);
  const std::uint64_t at = kFuzzDram - hw::kTiny.prog_depth * 16;
  dev.write_dram(at, program);
  try {
    (void)dev.run(at, std::uint32_t(program.size() / 16));
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// DMA_LOAD of 6 rows of 0 elements from DRAM byte 0x80001 (past the DRAM): std::out_of_range
// escaped run(). Rows and row_len of 0 are bad operands, as in rtl/top/psm_instr_check.sv.
TEST(CpuDeviceFuzzInputs, DmaOfEmptyRowsPastTheDram) {
  const std::vector<std::uint8_t> program = {0x10, 0x00, 0x01, 0x00, 0x01, 0x00, 0x08, 0x00,
                                             0x02, 0x00, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(fuzz_target_error(program),
            "program instruction 0: bad_operand (DMA_LOAD rows and row_len: expected >= 1, "
            "found 6 and 0)");
}

// 255 DMA_LOADs of 65535 rows of 0 elements, then END: 16.7 M empty row moves took over 1 s.
TEST(CpuDeviceFuzzInputs, DmaOfZeroLengthRowsIsRefusedAtOnce) {
  const std::vector<std::uint8_t> load = {0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0, 0};
  std::vector<std::uint8_t> program;
  for (int i = 0; i < 255; ++i) {
    program.insert(program.end(), load.begin(), load.end());
  }
  const std::vector<std::uint8_t> end = {0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  program.insert(program.end(), end.begin(), end.end());
  EXPECT_EQ(fuzz_target_error(program),
            "program instruction 0: bad_operand (DMA_LOAD rows and row_len: expected >= 1, "
            "found 65535 and 0)");
}

// A parameter entry of random DRAM bytes as eps: the sum of squares plus eps had no
// rsqrt_requant step (an assert; in Release a shift by 64 or more).
TEST(CpuDeviceFuzzInputs, NormEpsBeyondTheReciprocalSquareRoot) {
  const std::vector<std::uint8_t> rmsnorm = {
      0x10, 0x00, 0x35, 0x03, 0xC0, 0x2D, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,
      0x00, 0x31, 0x00, 0x73, 0x00, 0x00, 0x00, 0x08, 0x00, 0x04, 0x00, 0x00, 0x00, 0x01, 0x00,
      0x01, 0x00};
  EXPECT_EQ(fuzz_target_error(rmsnorm),
            "program instruction 1: bad_operand (RMSNORM: rmsnorm_i8: sum of squares + eps: "
            "expected below 2^56 (gain_frac_bits 7), found 4844641236429400124)");
  const std::vector<std::uint8_t> layernorm = {
      0x10, 0x00, 0x35, 0x03, 0x80, 0x20, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x08,
      0x00, 0x39, 0x00, 0x63, 0x00, 0x00, 0x00, 0x10, 0x00, 0x08, 0x00, 0x00, 0x00, 0x10, 0x00,
      0x01, 0x00};
  EXPECT_EQ(fuzz_target_error(layernorm),
            "program instruction 1: bad_operand (LAYERNORM: layernorm_i8: sum of squared "
            "deviations + eps: expected below 2^58 (gain_frac_bits 6), found 9129753949794369849)");
}

TEST(CpuDeviceGpt, PassesOfEveryOpcode) {
  const hw::HwConfig& c = hw::kTiny;
  EXPECT_EQ(instr_passes(vec(hw::Opcode::kLayernorm, 0, 0, 0, 0, 9, 5), c), 15u);
  EXPECT_EQ(instr_passes(vec(hw::Opcode::kBatchnorm, 0, 0, 0, 0, 9, 5), c), 5u);
  EXPECT_EQ(instr_passes(vec(hw::Opcode::kGelu, 0, 0, 0, 0, 9, 5), c), 5u);
  EXPECT_EQ(instr_passes(vec(hw::Opcode::kRmsnorm, 0, 0, 0, 0, 9, 5), c), 10u);
  hw::Instr sm = vec(hw::Opcode::kSoftmax, 0, 0, 0, 0, 9, 5);
  EXPECT_EQ(instr_passes(sm, c), 15u);
  hw::set_field(sm, f::softmax::kOnline, 1);
  EXPECT_EQ(instr_passes(sm, c), 10u);
  EXPECT_EQ(instr_passes(vec(hw::Opcode::kAttnScore, 0, 0, 0, 0, 8, 40), c), 40u);
  hw::Instr mm = hw::make_instr(hw::Opcode::kMatmul, 0);
  hw::set_field(mm, f::matmul::kK, 5);
  hw::set_field(mm, f::matmul::kN, 9);
  EXPECT_EQ(instr_passes(mm, c), 3u * 3u);
  EXPECT_EQ(instr_passes(store_requant(hw::Mem::kVector, 0, 0, 0, 7, 3), c), 7u);
  EXPECT_EQ(instr_passes(hw::make_instr(hw::Opcode::kBarrier, 0), c), 0u);
}

}  // namespace

// The program builder refuses an operand wider than its field instead of wrapping it.
TEST(ProgramBuilderFields, WideOperandsAreRefused) {
  passim::ProgramBuilder b;
  EXPECT_THROW(b.matmul({.m = 2, .k = 4, .n = 8, .dst_stride = 1024}), std::invalid_argument);
  EXPECT_THROW(b.matmul({.m = 1024, .k = 4, .n = 8}), std::invalid_argument);
  EXPECT_THROW(b.load({.spad = 1u << 16, .row_len = 1}), std::invalid_argument);
  EXPECT_NO_THROW(b.matmul({.m = 2, .k = 4, .n = 8, .dst_stride = 1023}));
  EXPECT_EQ(b.body().size(), 1u);
  EXPECT_THROW(b.matmul({.m = 2, .k = 4, .n = 8, .head_size = 1024}), std::invalid_argument);
  EXPECT_THROW(b.matmul({.m = 2, .k = 4, .n = 8, .dst_stride = 2, .head_size = 4}),
               std::invalid_argument);
}

TEST(ProgramBuilderFields, DigitsMakeAMatmulActAndMixedLayoutsAreRefused) {
  passim::ProgramBuilder b;
  b.matmul({.m = 3, .k = 10, .n = 7, .requant = false, .digits = 3, .transpose = true});
  ASSERT_EQ(b.body().size(), 1u);
  EXPECT_EQ(hw::get_field(b.body()[0], f::kOpcode), std::uint32_t(hw::Opcode::kMatmulAct));
  EXPECT_EQ(hw::get_field(b.body()[0], f::matmul_act::kDigits), 3u);
  EXPECT_EQ(hw::get_field(b.body()[0], f::matmul_act::kTranspose), 1u);
  EXPECT_EQ(hw::get_field(b.body()[0], f::matmul_act::kOutBits), 0u);
  EXPECT_EQ(hw::get_field(b.body()[0], f::matmul_act::kK), 10u);
  EXPECT_THROW(b.matmul({.m = 1, .k = 2, .n = 2, .head_size = 2, .digits = 2}),
               std::invalid_argument);
  EXPECT_THROW(b.matmul({.m = 1, .k = 2, .n = 2, .dst_stride = 4, .digits = 2}),
               std::invalid_argument);
  EXPECT_THROW(b.matmul({.m = 1, .k = 2, .n = 2, .transpose = true}), std::invalid_argument);
  EXPECT_THROW(b.matmul({.m = 1, .k = 2, .n = 2, .digits = 4}), std::invalid_argument);
}

TEST(ProgramBuilderFields, AHeadSizeMakesAMatmulHeads) {
  passim::ProgramBuilder b;
  b.matmul({.m = 2, .k = 4, .n = 16, .dst_stride = 5});
  b.matmul({.m = 2, .k = 4, .n = 16, .head_size = 8});
  ASSERT_EQ(b.body().size(), 2u);
  EXPECT_EQ(hw::get_field(b.body()[0], f::kOpcode), std::uint32_t(hw::Opcode::kMatmul));
  EXPECT_EQ(hw::get_field(b.body()[0], f::matmul::kDstStride), 5u);
  EXPECT_EQ(hw::get_field(b.body()[1], f::kOpcode), std::uint32_t(hw::Opcode::kMatmulHeads));
  EXPECT_EQ(hw::get_field(b.body()[1], f::matmul_heads::kHeadSize), 8u);
  EXPECT_EQ(hw::get_field(b.body()[1], f::matmul_heads::kN), 16u);
}

// SPDX-License-Identifier: Apache-2.0
// Every public kernel rejects an operand of the wrong size with std::invalid_argument naming
// the kernel and the operand, in every build type (these preconditions used to be asserts,
// which vanish in Release: an empty Softmax row read out of bounds or divided by zero).
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "passim/fixed_point.hpp"
#include "passim/kernels/attn.hpp"
#include "passim/kernels/batchnorm.hpp"
#include "passim/kernels/eltwise.hpp"
#include "passim/kernels/gelu.hpp"
#include "passim/kernels/layernorm.hpp"
#include "passim/kernels/matmul.hpp"
#include "passim/kernels/rmsnorm.hpp"
#include "passim/kernels/rope.hpp"
#include "passim/kernels/silu.hpp"
#include "passim/kernels/softmax.hpp"

namespace {

namespace k = passim::kernels;
using passim::Requant;

/// Runs `call` and expects std::invalid_argument whose message contains `expected`.
void expect_rejected(const std::function<void()>& call, const std::string& expected) {
  try {
    call();
    ADD_FAILURE() << "no exception; expected one naming \"" << expected << "\"";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos)
        << "message: " << e.what() << "\nexpected it to contain: " << expected;
  }
}

TEST(KernelSizeChecks, SoftmaxRejectsAnEmptyRow) {
  std::vector<std::int32_t> x;
  std::vector<std::uint32_t> e(4);
  std::vector<std::int16_t> out(4);
  expect_rejected([&] { k::softmax_i16(x, e, out); },
                  "softmax_i16: x: expected at least 1 element, found 0");
  expect_rejected([&] { k::softmax_max_i16(x, 0, e, out); }, "softmax_max_i16: x");
  expect_rejected([&] { k::softmax_online_i16(x, 4, out); },
                  "softmax_online_i16: x: expected at least 1 element, found 0");
  expect_rejected([&] { k::softmax_row_i16(x, {}, e, out); }, "softmax_i16: x");
}

TEST(KernelSizeChecks, SoftmaxRejectsAnEmptySubspanOfAValidBuffer) {
  std::vector<std::int32_t> buf = {1, 2, 3};
  std::vector<std::uint32_t> e(3);
  std::vector<std::int16_t> out(3);
  const std::span<const std::int32_t> empty = std::span<const std::int32_t>(buf).subspan(3);
  expect_rejected([&] { k::softmax_i16(empty, e, out); }, "softmax_i16: x");
  expect_rejected([&] { k::softmax_online_i16(empty, 2, out); }, "softmax_online_i16: x");
}

TEST(KernelSizeChecks, SoftmaxRejectsShortOutputsAndBadArguments) {
  std::vector<std::int32_t> x = {5, 7, 9};
  std::vector<std::uint32_t> e(3), short_e(2);
  std::vector<std::int16_t> out(3), short_out(1);
  expect_rejected([&] { k::softmax_i16(x, short_e, out); },
                  "softmax_i16: e_scratch: expected at least 3 elements, found 2");
  expect_rejected([&] { k::softmax_i16(x, e, short_out); }, "softmax_i16: out");
  expect_rejected([&] { k::softmax_max_i16(x, 7, e, out); },
                  "softmax_max_i16: m: expected max(x) = 9, found 7");
  expect_rejected([&] { k::softmax_online_i16(x, 0, out); }, "softmax_online_i16: lanes");
  expect_rejected([&] { k::softmax_online_i16(x, k::kMaxSoftmaxLanes + 1, out); },
                  "softmax_online_i16: lanes");
  EXPECT_NO_THROW(k::softmax_i16(x, e, out));  // the checks pass a valid row
}

TEST(KernelSizeChecks, NormsRejectEmptyRowsAndMismatchedParams) {
  std::vector<std::int16_t> x, gain3 = {1, 2, 3}, bias3 = {0, 0, 0};
  std::vector<std::int8_t> out(3);
  k::RmsNormParams rp{gain3, 0, 1};
  expect_rejected([&] { k::rmsnorm_i8(x, rp, out); }, "rmsnorm_i8: x: expected at least 1");
  std::vector<std::int16_t> x2 = {4, 5};
  expect_rejected([&] { k::rmsnorm_i8(x2, rp, out); },
                  "rmsnorm_i8: gain: expected exactly 2 elements, found 3");
  k::LayerNormParams lp{gain3, bias3, 0, 1};
  expect_rejected([&] { k::layernorm_i8(x, lp, out); }, "layernorm_i8: x: expected at least 1");
  std::vector<std::int16_t> x3 = {4, 5, 6};
  lp.gain_frac_bits = 14;
  expect_rejected([&] { k::layernorm_i8(x3, lp, out); }, "layernorm_i8: gain_frac_bits");
  k::BatchNormParams bp{gain3, bias3, Requant{1, 0, 0}};
  expect_rejected([&] { k::batchnorm_i8(x2, bp, out); }, "batchnorm_i8: gain");
  bp.rq.bias = 3;
  expect_rejected([&] { k::batchnorm_i8(x3, bp, out); }, "batchnorm_i8: rq.bias");
}

// A sum of squares plus eps at or above 2^min(62, 70 - 2 * gain_frac_bits) has no
// rsqrt_requant step (its shift would pass 63): an eps that large used to trip an assert, or in
// Release shift by 64 or more. Found by tests/fuzz (passim_fuzz_program).
TEST(KernelSizeChecks, NormsRejectAnEpsBeyondTheReciprocalSquareRoot) {
  std::vector<std::int16_t> x = {0, 0, 0}, gain = {1, 1, 1}, bias = {0, 0, 0};
  std::vector<std::int8_t> out(3);
  EXPECT_EQ(passim::rsqrt_limit_bits(0), 62);
  EXPECT_EQ(passim::rsqrt_limit_bits(13), 44);
  const std::uint64_t limit13 = std::uint64_t{1} << 44;
  k::RmsNormParams rp{gain, 13, limit13 - 1};
  EXPECT_NO_THROW(k::rmsnorm_i8(x, rp, out));
  rp.eps = limit13;
  expect_rejected([&] { k::rmsnorm_i8(x, rp, out); },
                  "rmsnorm_i8: sum of squares + eps: expected below 2^44 (gain_frac_bits 13), "
                  "found 17592186044416");
  k::LayerNormParams lp{gain, bias, 0, (std::uint64_t{1} << 62) - 1};
  EXPECT_NO_THROW(k::layernorm_i8(x, lp, out));
  lp.eps = std::uint64_t{1} << 62;
  expect_rejected([&] { k::layernorm_i8(x, lp, out); },
                  "layernorm_i8: sum of squared deviations + eps: expected below 2^62");
}

TEST(KernelSizeChecks, ElementwiseAndActivationsRejectShortOperands) {
  std::vector<std::int16_t> a = {1, 2, 3}, b = {1, 2};
  std::vector<std::int16_t> out16(3), short16(2);
  std::vector<std::int8_t> out8(3), short8(2);
  std::vector<Requant> rq(3, Requant{1, 0, 0});
  expect_rejected([&] { k::add_i16(a, b, out16); }, "add_i16: b: expected exactly 3");
  expect_rejected([&] { k::mul_i8(a, a, std::span(rq).first(2), out8); }, "mul_i8: rq");
  expect_rejected([&] { k::embed_i16(out8, Requant{1, 0, 0}, short16); }, "embed_i16: out");
  expect_rejected([&] { k::silu_i16(a, Requant{1, 0, 0}, Requant{1, 0, 0}, short16); },
                  "silu_i16: out");
  expect_rejected([&] { k::gelu_i8(out8, Requant{1, 0, 0}, Requant{1, 0, 0}, short8); },
                  "gelu_i8: out");
}

TEST(KernelSizeChecks, MatmulRopeAndRequantRejectBadShapes) {
  std::vector<std::int8_t> a(6), w(6);
  std::vector<std::int32_t> out(4), acc(5);
  expect_rejected([&] { k::matmul_i8(a, w, out, 2, 3, 3); },
                  "matmul_i8: w: expected at least 9 elements, found 6");
  std::vector<Requant> rq(2, Requant{1, 0, 0});
  std::vector<std::int8_t> q8(5);
  expect_rejected([&] { k::requantize_i8(acc, rq, q8); }, "requantize_i8: acc");
  expect_rejected([&] { k::requantize_i8(acc, {}, q8); }, "requantize_i8: rq");
  std::vector<std::int16_t> vec(6), tab(4);
  expect_rejected([&] { k::rope_i16(vec, 3, tab, tab); }, "rope_i16: head_size");
  expect_rejected([&] { k::rope_i16(vec, 4, tab, tab); }, "rope_i16: vec");
  expect_rejected([&] { k::rope_i16(vec, 0, tab, tab); }, "rope_i16: head_size");
}

TEST(KernelSizeChecks, AttentionRejectsEmptyWindowsAndBadHeads) {
  const std::size_t hs = 4;
  std::vector<std::int16_t> q(8), kc(8 * 3), probs(8), cap(16);
  std::vector<std::int8_t> vc(8 * 3), out(8);
  std::vector<std::int32_t> scores(8);
  std::vector<std::uint32_t> exps(8), head_acc(hs);
  std::vector<Requant> rq(2, Requant{1, 0, 0});
  k::AttentionParams p{2, 1, hs, rq, rq, {}};
  const k::AttentionScratch s{scores, exps, probs, head_acc};
  expect_rejected([&] { k::attention_i8(q, kc, vc, 0, p, s, out); },
                  "attention_i8: t_len: expected at least 1 element, found 0");
  p.n_kv_heads = 0;
  expect_rejected([&] { k::attention_i8(q, kc, vc, 1, p, s, out); }, "attention_i8: n_heads");
  p.n_kv_heads = 1;
  expect_rejected([&] { k::attention_i8(q, kc, vc, 7, p, s, out); }, "attention_i8: k_cache");
  expect_rejected([&] { k::attention_cm_i8(q, kc, kc, 2, 3, p, s, out); },
                  "attention_cm_i8: ld: expected at least 3");
  const k::AttentionScratch with_capture{scores, exps, probs, head_acc, std::span(cap).first(3), 2};
  expect_rejected([&] { k::attention_i8(q, kc, vc, 2, p, with_capture, out); },
                  "attention_i8: scratch.capture");
  EXPECT_NO_THROW(k::attention_i8(q, kc, vc, 2, p, s, out));
  std::vector<std::int32_t> sc(3);
  expect_rejected([&] { k::attn_score_i32(std::span(q).first(4), std::span(kc).first(9), 4,
                                          Requant{1, 0, 0}, sc); },
                  "attn_score_i32: k: expected at least 12 elements, found 9");
}

}  // namespace

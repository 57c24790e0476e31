// SPDX-License-Identifier: Apache-2.0
// Tests of causal attention for one query position over the KV cache (grouped-query heads,
// 12-bit queries and keys, Q0.15 probabilities, int8 values and output).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel_test_util.hpp"
#include "passim/kernels/attn.hpp"
#include "passim/kernels/softmax.hpp"

namespace {

using passim::Requant;
using passim::test::MaxError;
using passim::test::mismatch_report;
using passim::test::seeded_rng;
using passim::test::uniform_int;

constexpr std::int32_t kQkMax = (1 << (passim::kQkBits - 1)) - 1;  // 2047
constexpr double kMaxLogit = 4.9;  // |q.k * M| <= 4.9, so every logit - max is in [-9.8, 0]

struct Shape {
  std::size_t n_heads, n_kv_heads, head_size;
  [[nodiscard]] std::size_t kv_dim() const { return n_kv_heads * head_size; }
  [[nodiscard]] std::size_t group() const { return n_heads / n_kv_heads; }
};

std::string shape_str(const Shape& s) {
  return std::to_string(s.n_heads) + " heads, " + std::to_string(s.n_kv_heads) +
         " kv heads, head_size " + std::to_string(s.head_size);
}

/// One attention problem: inputs, the real multipliers and their requantisation steps.
struct Problem {
  Shape shape;
  std::size_t t_len = 0;
  std::vector<std::int16_t> q;        // (n_heads * head_size) 12-bit
  std::vector<std::int16_t> k_cache;  // (t_len, kv_dim) 12-bit
  std::vector<std::int8_t> v_cache;   // (t_len, kv_dim)
  std::vector<double> score_m;        // (n_heads) real logit per q.k LSB
  std::vector<double> out_m;          // (n_heads) output LSB per unit of sum(p * v)
  std::vector<Requant> score_rq, out_rq;
};

Problem random_problem(std::mt19937& rng, const Shape& s, std::size_t t_len, bool peaked) {
  Problem p;
  p.shape = s;
  p.t_len = t_len;
  p.q.resize(s.n_heads * s.head_size);
  p.k_cache.resize(t_len * s.kv_dim());
  p.v_cache.resize(t_len * s.kv_dim());
  for (auto& x : p.q) {
    x = uniform_int<std::int16_t>(rng, -kQkMax - 1, kQkMax);
  }
  for (auto& x : p.k_cache) {
    x = uniform_int<std::int16_t>(rng, -kQkMax - 1, kQkMax);
  }
  for (auto& x : p.v_cache) {
    x = uniform_int<std::int8_t>(rng, -128, 127);
  }
  if (peaked) {  // each query head equals a full-scale key of its KV head at one position
    for (std::size_t h = 0; h < s.n_heads; ++h) {
      const std::size_t t = uniform_int<std::size_t>(rng, 0, std::int64_t(t_len) - 1);
      for (std::size_t i = 0; i < s.head_size; ++i) {
        auto& kv = p.k_cache[t * s.kv_dim() + (h / s.group()) * s.head_size + i];
        kv = static_cast<std::int16_t>(kv < 0 ? -kQkMax : kQkMax);
        p.q[h * s.head_size + i] = kv;
      }
    }
  }
  for (std::size_t h = 0; h < s.n_heads; ++h) {
    // |q . k| <= head_size * 2048^2, so |logit| <= kMaxLogit whatever the inputs.
    const double bound = double(s.head_size) * 2048.0 * 2048.0;
    p.score_m.push_back(kMaxLogit / bound * passim::test::uniform_real(rng, 0.5, 1.0));
    p.out_m.push_back(passim::test::uniform_real(rng, 0.5, 1.5));
    p.score_rq.push_back(passim::make_requant(p.score_m.back() * 1024.0));  // to Q.10
    p.out_rq.push_back(passim::make_requant(p.out_m.back() / double(passim::kProbOne)));
  }
  return p;
}

std::vector<std::int8_t> run_attention(const Problem& p, std::vector<std::int16_t>* capture) {
  std::vector<std::int32_t> scores(p.t_len);
  std::vector<std::uint32_t> exps(p.t_len);
  std::vector<std::int16_t> probs(p.t_len);
  std::vector<std::uint32_t> head_acc(p.shape.head_size);
  passim::kernels::AttentionScratch scratch{scores, exps, probs, head_acc};
  if (capture != nullptr) {
    capture->assign(p.shape.n_heads * p.t_len, 0);
    scratch.capture = *capture;
    scratch.capture_stride = p.t_len;
  }
  const passim::kernels::AttentionParams ap{p.shape.n_heads, p.shape.n_kv_heads, p.shape.head_size,
                                            p.score_rq, p.out_rq};
  std::vector<std::int8_t> out(p.shape.n_heads * p.shape.head_size, std::int8_t{99});
  passim::kernels::attention_i8(p.q, p.k_cache, p.v_cache, p.t_len, ap, scratch, out);
  return out;
}

/// Per head h (KV head h / group): p = softmax(q_h . k_t * score_m[h]),
/// out[h, i] = out_m[h] * sum_t p[t] v_t[i], in double. Also returns the probabilities
/// (n_heads, t_len) for the tolerance.
std::vector<double> attention_ref(const Problem& p, std::vector<double>& probs) {
  const Shape& s = p.shape;
  std::vector<double> out(s.n_heads * s.head_size);
  probs.assign(s.n_heads * p.t_len, 0.0);
  for (std::size_t h = 0; h < s.n_heads; ++h) {
    const std::size_t kv_off = (h / s.group()) * s.head_size;
    std::vector<double> logit(p.t_len);
    for (std::size_t t = 0; t < p.t_len; ++t) {
      double dot = 0.0;
      for (std::size_t i = 0; i < s.head_size; ++i) {
        dot += double(p.q[h * s.head_size + i]) * double(p.k_cache[t * s.kv_dim() + kv_off + i]);
      }
      logit[t] = dot * p.score_m[h];
    }
    const double m = *std::max_element(logit.begin(), logit.end());
    double sum = 0.0;
    for (std::size_t t = 0; t < p.t_len; ++t) {
      probs[h * p.t_len + t] = std::exp(logit[t] - m);
      sum += probs[h * p.t_len + t];
    }
    for (std::size_t t = 0; t < p.t_len; ++t) {
      probs[h * p.t_len + t] /= sum;
    }
    for (std::size_t i = 0; i < s.head_size; ++i) {
      double acc = 0.0;
      for (std::size_t t = 0; t < p.t_len; ++t) {
        acc += probs[h * p.t_len + t] * double(p.v_cache[t * s.kv_dim() + kv_off + i]);
      }
      out[h * s.head_size + i] = p.out_m[h] * acc;
    }
  }
  return out;
}

const std::vector<Shape> kShapes{
    Shape{8, 4, 8},   // stories260K: dim 64, 8 heads sharing 4 KV heads
    Shape{6, 2, 16},  // groups of 3
    Shape{4, 4, 8},   // multi-head (no sharing)
    Shape{4, 1, 32},  // multi-query (one KV head)
    Shape{2, 1, 64},
};

// With t_len = 1 the only probability is kProbOne, so every head returns its KV head's value
// vector requantised by out_rq: with out_rq = 1 / kProbOne, exactly v.
TEST(AttentionI8, SinglePositionReturnsValue) {
  const std::uint32_t seed = 701;
  auto rng = seeded_rng(seed);
  for (const Shape& s : kShapes) {
    Problem p = random_problem(rng, s, 1, false);
    p.out_rq.assign(s.n_heads, passim::make_requant(1.0 / double(passim::kProbOne)));
    std::vector<std::int8_t> expect(s.n_heads * s.head_size);
    for (std::size_t h = 0; h < s.n_heads; ++h) {
      for (std::size_t i = 0; i < s.head_size; ++i) {
        expect[h * s.head_size + i] = p.v_cache[(h / s.group()) * s.head_size + i];
      }
    }
    const auto out = run_attention(p, nullptr);
    EXPECT_EQ(out, expect) << shape_str(s) << ", seed " << seed << ", "
                           << mismatch_report(expect, out);
    // Any other step: requantize(kProbOne * v, out_rq[h], 8).
    for (std::size_t h = 0; h < s.n_heads; ++h) {
      p.out_rq[h] = passim::make_requant((0.25 + 0.5 * double(h)) / double(passim::kProbOne));
      for (std::size_t i = 0; i < s.head_size; ++i) {
        expect[h * s.head_size + i] = static_cast<std::int8_t>(passim::requantize(
            passim::kProbOne * std::int32_t{p.v_cache[(h / s.group()) * s.head_size + i]},
            p.out_rq[h], 8));
      }
    }
    const auto scaled = run_attention(p, nullptr);
    EXPECT_EQ(scaled, expect) << shape_str(s) << ", seed " << seed << ", "
                              << mismatch_report(expect, scaled);
  }
}

// Tolerance per output (in int8 LSB), following the error through the kernel:
//   logits are rounded to Q.10 (each exp off by a factor within e^(+-2^-11)) and i-exp is
//   within kIexpRelErr on [-10, 0], so each exp is off by a factor within 1 +- d with
//   d = (1 + kIexpRelErr) e^(2^-11) - 1; then |p^_t - p_t| <= p_t 2d / (1 - d) + 0.501 / 32767
//   (Softmax test); the output is out_m sum_t |p^_t - p_t| |v_t|, plus 0.5 LSB final rounding.
TEST(AttentionI8, GroupedQueryMatchesDoubleReference) {
  const std::uint32_t seed = 702;
  auto rng = seeded_rng(seed);
  const double d = (1.0 + passim::test::kIexpRelErr) * std::exp(std::ldexp(1.0, -11)) - 1.0;
  MaxError err;
  for (const Shape& s : kShapes) {
    for (const std::size_t t_len : {1, 2, 7, 33, 128, 512}) {
      for (int trial = 0; trial < 20; ++trial) {
        const Problem p = random_problem(rng, s, t_len, trial % 2 == 1);
        const auto out = run_attention(p, nullptr);
        std::vector<double> probs;
        const auto ref = attention_ref(p, probs);
        for (std::size_t h = 0; h < s.n_heads; ++h) {
          const std::size_t kv_off = (h / s.group()) * s.head_size;
          for (std::size_t i = 0; i < s.head_size; ++i) {
            double spread = 0.0;
            for (std::size_t t = 0; t < t_len; ++t) {
              const double v = std::fabs(double(p.v_cache[t * s.kv_dim() + kv_off + i]));
              spread += v * (probs[h * t_len + t] * 2.0 * d / (1.0 - d) + 0.501 / 32767.0);
            }
            const double tol = 0.5 + p.out_m[h] * spread + 1e-6;
            const std::size_t j = h * s.head_size + i;
            const double r = std::clamp(ref[j], -128.0, 127.0);
            const double e = std::fabs(double(out[j]) - r);
            err.add(e, shape_str(s) + ", t_len " + std::to_string(t_len));
            ASSERT_LE(e, tol) << "seed " << seed << ", " << shape_str(s) << ", t_len " << t_len
                              << ", trial " << trial << ", head " << h << ", channel " << i
                              << ": ref " << ref[j] << ", found " << int(out[j]);
          }
        }
      }
    }
  }
  err.print("attention_i8 vs double", "LSB", seed);
}

// The kernel reads positions 0 .. t_len - 1 only (the causal mask): whatever follows in the
// cache cannot change the output.
TEST(AttentionI8, FuturePositionsAreNeverRead) {
  const std::uint32_t seed = 703;
  auto rng = seeded_rng(seed);
  const Shape s{8, 4, 8};
  const std::size_t t_len = 9, t_cap = 16;
  Problem full = random_problem(rng, s, t_cap, false);
  Problem other = full;
  for (std::size_t i = t_len * s.kv_dim(); i < other.k_cache.size(); ++i) {
    other.k_cache[i] = static_cast<std::int16_t>(kQkMax);
    other.v_cache[i] = std::int8_t{127};
  }
  full.t_len = other.t_len = t_len;
  const auto a = run_attention(full, nullptr);
  const auto b = run_attention(other, nullptr);
  EXPECT_EQ(b, a) << "seed " << seed << ", " << mismatch_report(a, b);
}

// The captured probabilities are exactly softmax_i16 of the requantised scores, head by head,
// and every row sums to kProbOne within ceil(t_len / 2) + 1.
TEST(AttentionI8, CapturedProbabilitiesAreSoftmaxOfScores) {
  const std::uint32_t seed = 704;
  auto rng = seeded_rng(seed);
  for (const Shape& s : kShapes) {
    for (const std::size_t t_len : {1, 5, 64, 512}) {
      const Problem p = random_problem(rng, s, t_len, true);
      std::vector<std::int16_t> capture;
      (void)run_attention(p, &capture);
      for (std::size_t h = 0; h < s.n_heads; ++h) {
        std::vector<std::int32_t> scores(t_len);
        for (std::size_t t = 0; t < t_len; ++t) {
          std::int32_t dot = 0;  // |dot| <= 64 * 2^22 = 2^28: no overflow here
          for (std::size_t i = 0; i < s.head_size; ++i) {
            dot += std::int32_t{p.q[h * s.head_size + i]} *
                   std::int32_t{p.k_cache[t * s.kv_dim() + (h / s.group()) * s.head_size + i]};
          }
          scores[t] = passim::requantize(dot, p.score_rq[h], 32);
        }
        std::vector<std::uint32_t> e(t_len);
        std::vector<std::int16_t> expect(t_len);
        passim::kernels::softmax_i16(scores, e, expect);
        const std::vector<std::int16_t> row(capture.begin() + std::ptrdiff_t(h * t_len),
                                            capture.begin() + std::ptrdiff_t((h + 1) * t_len));
        ASSERT_EQ(row, expect) << "seed " << seed << ", " << shape_str(s) << ", t_len " << t_len
                               << ", head " << h << ", " << mismatch_report(expect, row);
        const std::int64_t sum = std::accumulate(row.begin(), row.end(), std::int64_t{0});
        ASSERT_LE(std::llabs(sum - passim::kProbOne), std::int64_t((t_len + 1) / 2) + 1)
            << "seed " << seed << ", " << shape_str(s) << ", t_len " << t_len << ", head " << h;
      }
    }
  }
}

// attention_cm_i8 on channel-major caches (with junk past t_len in every channel row) gives
// the outputs and captured probabilities of attention_i8 bit for bit: both Softmax versions,
// every shape (head sizes of 1 to 64 channels), and full-range int16 queries and keys whose q . k sums wrap in int32.
TEST(AttentionCmI8, MatchesRowMajorBitForBit) {
  const std::uint32_t seed = 705;
  auto rng = seeded_rng(seed);
  const passim::kernels::SoftmaxOptions modes[] = {{},
                                                   {passim::kernels::SoftmaxMode::kOnline, 4}};
  std::vector<Shape> shapes = kShapes;  // and heads that are not a multiple of 8 channels
  shapes.insert(shapes.end(), {Shape{3, 1, 12}, Shape{2, 2, 4}, Shape{2, 1, 1}});
  for (const Shape& s : shapes) {
    for (const std::size_t t_len : {1, 2, 7, 33, 130, 512}) {
      for (int trial = 0; trial < 6; ++trial) {
        Problem p = random_problem(rng, s, t_len, trial % 2 == 1);
        if (trial >= 4) {  // full int16 range: sums of 32 or more products may wrap
          for (auto& x : p.q) {
            x = uniform_int<std::int16_t>(rng, -32768, 32767);
          }
          for (auto& x : p.k_cache) {
            x = uniform_int<std::int16_t>(rng, -32768, 32767);
          }
        }
        if (trial == 5) {  // logits that saturate int32 at one end or both
          for (auto& rq : p.score_rq) {
            rq = passim::make_requant(std::exp2(uniform_int<int>(rng, 0, 12)));
          }
        }
        const auto& mode = modes[std::size_t(trial) % 2];
        const std::size_t kv = s.kv_dim(), ld = t_len + 3;
        std::vector<std::int16_t> k_cm(kv * ld, std::int16_t{-32768}), v_cm(kv * ld, 127);
        for (std::size_t t = 0; t < t_len; ++t) {
          for (std::size_t c = 0; c < kv; ++c) {
            k_cm[c * ld + t] = p.k_cache[t * kv + c];
            v_cm[c * ld + t] = p.v_cache[t * kv + c];
          }
        }
        const passim::kernels::AttentionParams ap{s.n_heads, s.n_kv_heads,
                                                  s.head_size, p.score_rq, p.out_rq, mode};
        std::vector<std::int32_t> scores(t_len);
        std::vector<std::uint32_t> exps(t_len), head_acc(s.head_size);
        std::vector<std::int16_t> probs(t_len), cap_a(s.n_heads * t_len), cap_b(cap_a.size());
        passim::kernels::AttentionScratch scratch{scores, exps, probs, head_acc, cap_a, t_len};
        std::vector<std::int8_t> a(s.n_heads * s.head_size), b(a.size(), std::int8_t{99});
        passim::kernels::attention_i8(p.q, p.k_cache, p.v_cache, t_len, ap, scratch, a);
        scratch.capture = cap_b;
        passim::kernels::attention_cm_i8(p.q, k_cm, v_cm, ld, t_len, ap, scratch, b);
        ASSERT_EQ(b, a) << "seed " << seed << ", " << shape_str(s) << ", t_len " << t_len
                        << ", trial " << trial << ", " << mismatch_report(a, b);
        ASSERT_EQ(cap_b, cap_a) << "seed " << seed << ", " << shape_str(s) << ", t_len "
                                << t_len << ", trial " << trial;
      }
    }
  }
}

}  // namespace

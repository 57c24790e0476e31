// SPDX-License-Identifier: Apache-2.0
// The encoder path of the one model description: post-norm blocks and attention without a
// mask. The float reference equals a direct double-precision computation of the same encoder
// (and differs from its pre-norm and causal variants); the integer cpu backend stays close to
// it, lets every row see every token and writes a normalised int16 residual after each block;
// compiled, the ISA reference device equals it bit for bit.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "passim/compiler/compiler.hpp"
#include "passim/device/cpu_device.hpp"
#include "passim/device/device_backend.hpp"
#include "passim/eval/calibrate.hpp"
#include "passim/io/psm.hpp"
#include "passim/model/float_backend.hpp"
#include "passim/model/random_model.hpp"
#include "passim/quant/cpu_backend.hpp"
#include "passim/quant/quantize.hpp"

namespace {

using namespace passim;
using Mat = std::vector<std::vector<double>>;  // (rows, cols)

constexpr std::uint32_t kSeed = 15;

/// A fixed token sequence of n tokens below vocab.
std::vector<int> tokens_of(std::size_t n, int vocab, std::size_t salt = 0) {
  std::vector<int> t(n);
  for (std::size_t i = 0; i < n; ++i) {
    t[i] = int((i * 7 + 3 + salt * 5) % std::size_t(vocab));
  }
  return t;
}

/// y (rows, out) = x (rows, in) W^T + b, W (out, in) row-major.
Mat linear(const Mat& x, const float* w, const float* b, std::size_t out) {
  Mat y(x.size(), std::vector<double>(out));
  for (std::size_t i = 0; i < x.size(); ++i) {
    for (std::size_t o = 0; o < out; ++o) {
      double acc = b[o];
      for (std::size_t j = 0; j < x[i].size(); ++j) {
        acc += double(w[o * x[i].size() + j]) * x[i][j];
      }
      y[i][o] = acc;
    }
  }
  return y;
}

/// LayerNorm of each row (biased variance, Ba et al. 2016), gain g and shift b.
Mat layer_norm(const Mat& x, const float* g, const float* b, double eps) {
  Mat y = x;
  for (auto& row : y) {
    double mu = 0, var = 0;
    for (double v : row) {
      mu += v;
    }
    mu /= double(row.size());
    for (double v : row) {
      var += (v - mu) * (v - mu);
    }
    var /= double(row.size());
    for (std::size_t j = 0; j < row.size(); ++j) {
      row[j] = (row[j] - mu) / std::sqrt(var + eps) * g[j] + b[j];
    }
  }
  return y;
}

Mat add(const Mat& a, const Mat& b) {
  Mat y = a;
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t j = 0; j < a[i].size(); ++j) {
      y[i][j] += b[i][j];
    }
  }
  return y;
}

/// softmax(q k^T / sqrt(hs)) v per head (Vaswani et al. 2017, Eq. 1); causal: row i sees 0..i.
Mat attention(const Mat& q, const Mat& k, const Mat& v, std::size_t heads, bool causal) {
  const std::size_t n = q.size(), hs = q[0].size() / heads;
  Mat out(n, std::vector<double>(q[0].size(), 0.0));
  for (std::size_t h = 0; h < heads; ++h) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t t_len = causal ? i + 1 : n;
      std::vector<double> p(t_len);
      double mx = -1e300, sum = 0;
      for (std::size_t t = 0; t < t_len; ++t) {
        double s = 0;
        for (std::size_t c = 0; c < hs; ++c) {
          s += q[i][h * hs + c] * k[t][h * hs + c];
        }
        p[t] = s / std::sqrt(double(hs));
        mx = std::max(mx, p[t]);
      }
      for (double& x : p) {
        x = std::exp(x - mx);
        sum += x;
      }
      for (std::size_t t = 0; t < t_len; ++t) {
        for (std::size_t c = 0; c < hs; ++c) {
          out[i][h * hs + c] += p[t] / sum * v[t][h * hs + c];
        }
      }
    }
  }
  return out;
}

/// The encoder computed directly in double: the last row's logits. `post`: x = LN(x + f(x)),
/// else x = x + f(LN(x)); `causal`: the decoder's mask instead of none.
std::vector<double> direct_logits(const FloatModel& m, const std::vector<int>& tokens, bool post,
                                  bool causal) {
  const ModelConfig& c = m.config;
  const FloatWeights& w = m.weights;
  const std::size_t D = std::size_t(c.dim), H = std::size_t(c.hidden_dim), n = tokens.size();
  const double eps = c.norm_eps;
  Mat x(n, std::vector<double>(D));  // (n, dim)
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < D; ++j) {
      x[i][j] = double(w.token_embedding[std::size_t(tokens[i]) * D + j]) +
                double(w.pos_embedding[i * D + j]);
    }
  }
  for (std::size_t l = 0; l < std::size_t(c.n_layers); ++l) {
    const float *ga = &w.rms_att[l * D], *ba = &w.att_norm_bias[l * D];
    const float *gf = &w.rms_ffn[l * D], *bf = &w.ffn_norm_bias[l * D];
    const Mat a_in = post ? x : layer_norm(x, ga, ba, eps);  // (n, dim)
    const Mat q = linear(a_in, &w.wq[l * D * D], &w.bq[l * D], D);
    const Mat k = linear(a_in, &w.wk[l * D * D], &w.bk[l * D], D);
    const Mat v = linear(a_in, &w.wv[l * D * D], &w.bv[l * D], D);
    const Mat att = attention(q, k, v, std::size_t(c.n_heads), causal);
    const Mat o = linear(att, &w.wo[l * D * D], &w.bo[l * D], D);  // (n, dim)
    x = post ? layer_norm(add(x, o), ga, ba, eps) : add(x, o);
    const Mat f_in = post ? x : layer_norm(x, gf, bf, eps);
    Mat h = linear(f_in, &w.w1[l * H * D], &w.b1[l * H], H);  // (n, hidden)
    for (auto& row : h) {
      for (double& u : row) {
        u = 0.5 * u * (1.0 + std::erf(u / std::sqrt(2.0)));
      }
    }
    const Mat y = linear(h, &w.w2[l * D * H], &w.b2[l * D], D);
    x = post ? layer_norm(add(x, y), gf, bf, eps) : add(x, y);
  }
  const std::vector<float> zero(std::size_t(c.vocab_size), 0.0f);
  return linear({x.back()}, w.wcls.data(), zero.data(), std::size_t(c.vocab_size))[0];
}

double max_abs_diff(std::span<const float> a, const std::vector<double>& b) {
  double d = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    d = std::max(d, std::fabs(double(a[i]) - b[i]));
  }
  return d;
}

TEST(EncoderFloat, MatchesDirectComputation) {
  const FloatModel m = random_encoder({}, kSeed);
  FloatBackend fb(m);
  for (const std::size_t n : {1u, 5u, 16u}) {  // one token, some, the longest sequence
    const std::vector<int> t = tokens_of(n, m.config.vocab_size);
    fb.forward_sequence(t, 0);
    // float32 sums of <= 64 terms against double: well under 1e-4 on logits of order 1
    EXPECT_LT(max_abs_diff(fb.logits(), direct_logits(m, t, true, false)), 1e-4)
        << "seed " << kSeed << " n " << n;
  }
}

TEST(EncoderFloat, PostNormAndNoMaskAreNotPreNormOrCausal) {
  // The same weights as pre-norm blocks or with a causal mask give other logits: the check
  // above would catch a backend that ignored either field.
  const FloatModel m = random_encoder({}, kSeed);
  FloatBackend fb(m);
  const std::vector<int> t = tokens_of(9, m.config.vocab_size);
  fb.forward_sequence(t, 0);
  EXPECT_GT(max_abs_diff(fb.logits(), direct_logits(m, t, false, false)), 1e-2);
  // the last row sees every position either way, but with the mask the earlier rows of
  // layer 0 do not, and layer 1 reads them
  EXPECT_GT(max_abs_diff(fb.logits(), direct_logits(m, t, true, true)), 1e-2);
}

TEST(EncoderFloat, RunsWholeSequencesFromPositionZero) {
  const FloatModel m = random_encoder({}, kSeed);
  FloatBackend fb(m);
  const std::vector<int> t = tokens_of(4, m.config.vocab_size);
  EXPECT_THROW(fb.forward_sequence(t, 1), std::runtime_error);
  EXPECT_THROW(fb.forward(t[0], 3), std::runtime_error);
  fb.forward(t[0], 0);  // one token: the sequence of one
  const std::vector<float> one(fb.logits().begin(), fb.logits().end());
  fb.forward_sequence(std::span(t).first(1), 0);
  EXPECT_EQ(one, std::vector<float>(fb.logits().begin(), fb.logits().end()));
}

/// `name: [v0, v1, ...]` of a JSON object, floats with 9 significant digits (exact float32).
std::string json_list(const char* name, std::span<const float> v) {
  std::string s = fmt::format("\"{}\": [", name);
  for (std::size_t i = 0; i < v.size(); ++i) {
    s += fmt::format("{}{:.9g}", i == 0 ? "" : ", ", v[i]);
  }
  return s + "]";
}

TEST(EncoderFloat, DumpForTorch) {
  // With PASSIM_ENCODER_DUMP=<file>, writes the random encoder's config, weights, a sequence
  // and its float logits as JSON for tools/dev/encoder_torch_check.py.
  const char* out = std::getenv("PASSIM_ENCODER_DUMP");
  if (out == nullptr) {
    GTEST_SKIP() << "set PASSIM_ENCODER_DUMP=<file> to write the dump";
  }
  const FloatModel m = random_encoder({}, kSeed);
  const ModelConfig& c = m.config;
  const FloatWeights& w = m.weights;
  FloatBackend fb(m);
  const std::vector<int> t = tokens_of(std::size_t(c.seq_len), c.vocab_size);
  fb.forward_sequence(t, 0);
  const std::vector<float> tf(t.begin(), t.end());
  std::vector<std::string> parts{
      fmt::format("\"config\": {{\"dim\": {}, \"hidden\": {}, \"layers\": {}, \"heads\": {}, "
                  "\"vocab\": {}, \"seq_len\": {}, \"norm_eps\": {:.9g}, \"seed\": {}}}",
                  c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.vocab_size, c.seq_len,
                  c.norm_eps, kSeed),
      json_list("tokens", tf), json_list("logits", fb.logits())};
  const std::pair<const char*, const std::vector<float>*> tensors[] = {
      {"token_embedding", &w.token_embedding}, {"pos_embedding", &w.pos_embedding},
      {"wq", &w.wq}, {"wk", &w.wk}, {"wv", &w.wv}, {"wo", &w.wo}, {"bq", &w.bq},
      {"bk", &w.bk}, {"bv", &w.bv}, {"bo", &w.bo}, {"w1", &w.w1}, {"b1", &w.b1},
      {"w2", &w.w2}, {"b2", &w.b2}, {"att_norm_gain", &w.rms_att},
      {"att_norm_bias", &w.att_norm_bias}, {"ffn_norm_gain", &w.rms_ffn},
      {"ffn_norm_bias", &w.ffn_norm_bias}, {"wcls", &w.wcls}};
  for (const auto& [name, v] : tensors) {
    parts.push_back(json_list(name, *v));
  }
  std::ofstream f(out);
  ASSERT_TRUE(f) << out;
  f << "{\n";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    f << "  " << parts[i] << (i + 1 < parts.size() ? ",\n" : "\n");
  }
  f << "}\n";
}

/// The random encoder quantised from 8 fixed sequences of 4 .. 16 tokens.
QuantModel quantised_encoder(const FloatModel& m) {
  std::vector<std::vector<int>> docs;
  for (std::size_t d = 0; d < 8; ++d) {
    docs.push_back(tokens_of(4 + 12 * d / 7, m.config.vocab_size, d + 1));
  }
  return quantize(m, calibrate(m, docs));
}

TEST(EncoderCpu, CloseToTheFloatReference) {
  const FloatModel m = random_encoder({}, kSeed);
  const QuantModel q = quantised_encoder(m);
  FloatBackend fb(m);
  CpuBackend cpu(q);
  for (const std::size_t n : {1u, 7u, 16u}) {
    const std::vector<int> t = tokens_of(n, m.config.vocab_size, 11);
    fb.forward_sequence(t, 0);
    cpu.forward_sequence(t, 0);
    double peak = 0, err = 0;
    for (std::size_t i = 0; i < fb.logits().size(); ++i) {
      peak = std::max(peak, std::fabs(double(fb.logits()[i])));
      err = std::max(err, std::fabs(double(fb.logits()[i]) - double(cpu.logits()[i])));
    }
    // int8 activations with per-tensor scales (no smoothing: a post-norm block's input is the
    // residual itself) through 2 layers of random weights: 7-10% of the largest logit here
    EXPECT_LT(err, 0.15 * peak) << "seed " << kSeed << " n " << n << " peak " << peak;
  }
}

TEST(EncoderCpu, EveryRowSeesEveryToken) {
  // No mask: changing the last token changes the first row's residual after layer 0 (with the
  // causal mask it could not).
  const FloatModel m = random_encoder({}, kSeed);
  const QuantModel q = quantised_encoder(m);
  CpuBackend cpu(q);
  std::vector<std::vector<std::int16_t>> first_rows;
  cpu.set_residual_observer([&](int layer, std::span<const std::int16_t> x) {
    if (layer == 0 && first_rows.size() % 2 == 0) {
      first_rows.emplace_back(x.begin(), x.end());
    } else if (layer == 0) {
      first_rows.emplace_back();  // the other rows: count them only
    }
  });
  std::vector<int> t = tokens_of(6, m.config.vocab_size);
  cpu.forward_sequence(t, 0);
  const std::vector<std::int16_t> before = first_rows.front();
  first_rows.clear();
  t.back() = (t.back() + 1) % m.config.vocab_size;
  cpu.forward_sequence(t, 0);
  EXPECT_NE(before, first_rows.front());
  EXPECT_THROW(cpu.forward_sequence(t, 2), std::runtime_error);
}

TEST(EncoderCpu, PostNormWritesTheNormOutputIntoTheResidual) {
  // After each post-norm block x = embed_i16(layernorm_i8(x + f(x)), out_rq): every int16
  // value after a layer is one of the 256 images of an int8 under the FFN norm's out_rq.
  const FloatModel m = random_encoder({}, kSeed);
  const QuantModel q = quantised_encoder(m);
  CpuBackend cpu(q);
  std::size_t checked = 0;
  cpu.set_residual_observer([&](int layer, std::span<const std::int16_t> x) {
    if (layer < 0) {
      return;
    }
    std::set<std::int16_t> images;
    for (int v = -128; v <= 127; ++v) {
      images.insert(std::int16_t(requantize(v, q.layers[std::size_t(layer)].ffn_norm.out_rq, 16)));
    }
    for (const std::int16_t v : x) {
      ASSERT_TRUE(images.count(v)) << "layer " << layer << " value " << v;
      ++checked;
    }
  });
  cpu.forward_sequence(tokens_of(10, m.config.vocab_size), 0);
  EXPECT_EQ(checked, 10u * 2u * std::size_t(m.config.dim));
}

TEST(EncoderDevice, CompiledOnTheIsaReferenceMatchesCpuBackend) {
  // The compiler's program for the encoder (LAYERNORM + EMBED after each ADD, the DMA's step
  // before each block and the classifier, every row over all positions) on the ISA reference
  // device equals the cpu backend bit for bit, on tiny and base.
  const FloatModel m = random_encoder({}, kSeed);
  const QuantModel q = quantised_encoder(m);
  CpuBackend cpu(q);
  for (const hw::HwConfig* cfg : {&hw::kTiny, &hw::kBase}) {
    const ModelCompiler comp(q, *cfg);
    CpuDevice device(*cfg, comp.dram_bytes());
    DeviceBackend dev(comp, device);
    const std::size_t longest = comp.rows_at(0, std::size_t(m.config.seq_len));
    for (const std::size_t n : {std::size_t{1}, std::size_t{2}, longest}) {
      const std::vector<int> t = tokens_of(n, m.config.vocab_size, n);
      cpu.forward_sequence(t, 0);
      dev.forward_sequence(t, 0);
      const auto a = cpu.logits_i32(), b = dev.logits_i32();
      ASSERT_EQ(std::vector<std::int32_t>(a.begin(), a.end()),
                std::vector<std::int32_t>(b.begin(), b.end()))
          << cfg->name << ": seed " << kSeed << " sequence of " << n;
    }
    EXPECT_THROW(dev.forward(1, 1), std::runtime_error) << "no decode continuation";
  }
}

TEST(EncoderDevice, ASequenceLongerThanOnePassRunsInChunksWithTheSameLogits) {
  // Longer than one pass holds: chunks of rows, layer by layer (compiler/chunks.cpp), bit for
  // bit the cpu backend; longer than even the keys and values fit: refused, naming the config.
  const FloatModel m = random_encoder({.dim = 64, .hidden = 256, .heads = 1, .seq_len = 128},
                                     kSeed);  // KWT-1's width: small holds 39 rows of it
  const QuantModel q = quantised_encoder(m);
  CpuBackend cpu(q);
  for (const hw::HwConfig* cfg : {&hw::kTiny, &hw::kSmall}) {
    const ModelCompiler comp(q, *cfg);
    CpuDevice device(*cfg, comp.dram_bytes());
    DeviceBackend dev(comp, device);
    const std::size_t longest = comp.rows_at(0, std::size_t(m.config.seq_len));
    const std::size_t n = cfg == &hw::kTiny ? 7 : 3 * longest / 2;  // two or more chunks
    ASSERT_LT(longest, n) << cfg->name;
    const std::vector<int> t = tokens_of(n, m.config.vocab_size, n);
    cpu.forward_sequence(t, 0);
    dev.forward_sequence(t, 0);
    const auto a = cpu.logits_i32(), b = dev.logits_i32();
    EXPECT_EQ(std::vector<std::int32_t>(a.begin(), a.end()),
              std::vector<std::int32_t>(b.begin(), b.end()))
        << cfg->name << ": a sequence of " << n << " in chunks of at most " << longest;
  }
  const ModelCompiler tiny(q, hw::kTiny);
  try {
    (void)tiny.pass(tokens_of(40, m.config.vocab_size), 0);
    ADD_FAILURE() << "expected a sequence of 40 on tiny to be refused";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit even in chunks"), std::string::npos)
        << e.what();
  }
}

TEST(EncoderConfig, ParameterMemoryWithoutRoomForEveryHeadsStepsIsRefused) {
  // The attention block loads all heads' two steps at once: 16 heads need 32 entries.
  const QuantModel q = quantised_encoder(random_encoder({.dim = 32, .heads = 16}, kSeed));
  hw::HwConfig cfg = hw::kTiny;
  cfg.param_depth = 31;
  try {
    const ModelCompiler comp(q, cfg);
    FAIL() << "a 31-entry parameter memory was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot hold the 32 attention steps of 16 heads"),
              std::string::npos)
        << e.what();
  }
  cfg.param_depth = 32;
  EXPECT_NO_THROW(ModelCompiler(q, cfg));
}

TEST(EncoderConfig, RejectsWhatItCannotRun) {
  ModelConfig c = random_encoder({}, kSeed).config;
  c.norm = NormKind::kBatch;  // a post-norm BatchNorm has no integer form here
  EXPECT_THROW(validate_config(c, "test"), std::runtime_error);
  c = random_encoder({}, kSeed).config;
  c.arch = Arch::kLlama;
  c.norm = NormKind::kRms;
  EXPECT_THROW(validate_config(c, "test"), std::runtime_error);
  const QuantModel q = quantised_encoder(random_encoder({}, kSeed));
  EXPECT_THROW((void)serialize_psm(q), std::runtime_error);  // version 2 cannot store it
}

}  // namespace

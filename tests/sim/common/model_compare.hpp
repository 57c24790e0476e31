// SPDX-License-Identifier: Apache-2.0
/// \file ModelDevice (the cycle model, docs/cycle-model.md) against SimDevice (the Verilated
/// accelerator in its SystemC system model): the same programs on both, and every record and
/// counter compared exactly, with a tally of the instructions compared and mismatched per opcode.
/// Shared by model_device_test.cpp (tiny, small) and model_device_base_test.cpp.
#pragma once

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "passim/compiler/compiler.hpp"
#include "passim/device/cycle_model.hpp"
#include "passim/device/instr_check.hpp"
#include "passim/device/device_backend.hpp"
#include "passim/device/model_device.hpp"
#include "passim/device/records.hpp"
#include "passim/eval/calibrate.hpp"
#include "passim/eval/generate.hpp"
#include "passim/io/gguf.hpp"
#include "passim/io/gguf_model.hpp"
#include "passim/io/llama2c.hpp"
#include "passim/model/random_model.hpp"
#include "passim/quant/quant_model.hpp"
#include "passim/quant/quantize.hpp"
#include "passim/sim/sim_device.hpp"
#include "program_gen.hpp"
#include "test_data.hpp"

namespace passim::model_test {

namespace f = hw::fields;
using ModelFactory = std::unique_ptr<sim::AccelModel> (*)(bool);

/// Instructions compared and mismatched, per opcode, and runs whose counters differed.
struct Tally {
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> per_op;  // compared, bad
  std::uint64_t runs = 0, bad_runs = 0, compared = 0, mismatched = 0;
  std::uint64_t cycles = 0, dma_hidden = 0, unit_stall = 0;  // the RTL's, summed over runs
  int reported = 0;           // record failures printed (the first few, then only counted)
  int reported_counters = 0;  // counter failures printed

  void print(const std::string& what) const {
    std::cout << what << ": " << compared << " instructions compared in " << runs << " runs, "
              << mismatched << " mismatched; " << bad_runs << " runs with other counters; "
              << cycles << " cycles, " << dma_hidden << " DMA cycles behind compute, " << unit_stall
              << " unit stall cycles\n";
    for (const auto& [op, n] : per_op) {
      std::cout << "  " << op << " " << n.first << " compared, " << n.second << " mismatched\n";
    }
  }
};

/// The fields of `in` that its timing depends on, for failure messages.
inline std::string describe(const hw::Instr& in) {
  std::ostringstream s;
  const auto op = static_cast<hw::Opcode>(hw::get_field(in, f::kOpcode));
  s << hw::opcode_name(op);
  for (const auto& [name, value] : instr_shape(in)) {
    s << " " << name << "=" << value;
  }
  switch (hw::unit_of(op)) {
    case hw::Unit::kDma:
      s << " mem=" << hw::get_field(in, f::dma_load::kMem)
        << " elem_size=" << hw::get_field(in, f::dma_load::kElemSize)
        << " requant=" << hw::get_field(in, f::dma_store::kRequant)
        << " dram_addr=" << hw::get_field(in, f::dma_load::kDramAddr)
        << " stride=" << hw::get_field(in, f::dma_load::kDramStride);
      break;
    case hw::Unit::kMatmul:
      s << " out_bits=" << hw::get_field(in, f::matmul::kOutBits);
      if (op == hw::Opcode::kMatmulAct) {
        s << " digits=" << hw::get_field(in, f::matmul_act::kDigits)
          << " transpose=" << hw::get_field(in, f::matmul_act::kTranspose);
      } else {
        s << (op == hw::Opcode::kMatmulHeads ? " head_size=" : " dst_stride=")
          << hw::get_field(in, f::matmul::kDstStride);
      }
      break;
    default:  // a vector opcode: SOFTMAX's `online`, the norms' gain_frac_bits (bit 20 on)
      s << (op == hw::Opcode::kSoftmax ? " online=" : " bits[23:20]=")
        << hw::get_field(in, f::rmsnorm::kGainFracBits)
        << " param_addr=" << hw::get_field(in, f::rmsnorm::kParamAddr);
      break;
  }
  return s.str();
}

/// Compares one run: records by instruction index, then every counter.
inline void compare_run(std::span<const hw::Instr> prog, const RunStats& model, const RunStats& rtl,
                        const std::string& what, Tally& t) {
  ++t.runs;
  t.cycles += rtl.counters.at(std::size_t(hw::Counter::kTotalCycles));
  t.dma_hidden += rtl.counters.at(std::size_t(hw::Counter::kDmaHidden));
  t.unit_stall += rtl.counters.at(std::size_t(hw::Counter::kUnitStall));
  std::map<std::uint32_t, const InstrRecord*> by_index;
  for (const InstrRecord& r : model.records) {
    by_index[r.index] = &r;
  }
  EXPECT_EQ(model.records.size(), rtl.records.size()) << what;
  // The records come in the order the instructions end (DMA, matmul, vector within a cycle).
  std::vector<std::uint32_t> order_model, order_rtl;
  for (const InstrRecord& r : model.records) {
    order_model.push_back(r.index);
  }
  for (const InstrRecord& r : rtl.records) {
    order_rtl.push_back(r.index);
  }
  EXPECT_EQ(order_model, order_rtl) << what << ": records in another order";
  for (const InstrRecord& r : rtl.records) {
    const hw::Instr& in = prog[r.index];
    auto& op = t.per_op[std::string(
        hw::opcode_name(static_cast<hw::Opcode>(hw::get_field(in, f::kOpcode))))];
    ++op.first;
    ++t.compared;
    const auto it = by_index.find(r.index);
    const bool same = it != by_index.end() && it->second->cycles == r.cycles &&
                      it->second->stall_cycles == r.stall_cycles &&
                      it->second->passes == r.passes && it->second->saturated == r.saturated;
    if (!same) {
      ++op.second;
      ++t.mismatched;
      if (t.reported++ < 20) {
        const InstrRecord m = it != by_index.end() ? *it->second : InstrRecord{};
        ADD_FAILURE() << what << " instruction " << r.index << " " << describe(in)
                      << "\n  model: cycles " << m.cycles << " stall " << m.stall_cycles
                      << " passes " << m.passes << " saturated " << m.saturated
                      << "\n  rtl:   cycles " << r.cycles << " stall " << r.stall_cycles
                      << " passes " << r.passes << " saturated " << r.saturated;
      }
    }
  }
  ASSERT_EQ(model.counters.size(), rtl.counters.size()) << what;
  bool bad = false;
  for (std::size_t i = 0; i < rtl.counters.size(); ++i) {
    if (model.counters[i] != rtl.counters[i]) {
      bad = true;
      if (t.reported_counters++ < 10) {
        ADD_FAILURE() << what << " counter " << i << ": model " << model.counters[i] << ", rtl "
                      << rtl.counters[i];
      }
    }
  }
  t.bad_runs += bad ? 1 : 0;
}

/// Keeps every run of a device: its program and its stats.
class RunLog final : public RunObserver {
 public:
  void on_run(std::span<const hw::Instr> program, const RunStats& stats) override {
    runs.push_back({{program.begin(), program.end()}, stats});
  }
  std::vector<std::pair<std::vector<hw::Instr>, RunStats>> runs;
};

/// Sums ModelDevice::unmodelled_overlaps() over the runs of a ModelDevice.
class Unmodelled final : public RunObserver {
 public:
  explicit Unmodelled(const ModelDevice& dev) : dev_(dev) {}
  void on_run(std::span<const hw::Instr> /*program*/, const RunStats& /*stats*/) override {
    total += dev_.unmodelled_overlaps();
  }
  std::uint64_t total = 0;

 private:
  const ModelDevice& dev_;
};

/// The memory timing of a random-program test.
struct Timing {
  double latency_ns, bytes_per_ns;
  double clock_mhz = DramTiming{}.clock_mhz;
};

/// `programs` random programs of seed `seed` on SimDevice and ModelDevice of `cfg`.
inline void random_programs(const hw::HwConfig& cfg, ModelFactory make, std::uint64_t seed,
                            int programs, Timing timing) {
  constexpr std::uint64_t kDramBytes = 256 * 1024;
  sim::SimOptions opts;
  opts.dram_bytes = kDramBytes;
  opts.dram_latency_ns = timing.latency_ns;
  opts.dram_bytes_per_ns = timing.bytes_per_ns;
  opts.clock_mhz = timing.clock_mhz;
  opts.max_cycles = 20'000'000;
  sim::SimDevice rtl(make(false), opts);
  ModelDevice model(cfg, {timing.clock_mhz, timing.latency_ns, timing.bytes_per_ns}, kDramBytes);
  gen::ProgramGen g(cfg, kDramBytes, seed);
  const std::vector<std::uint8_t> image = g.initial_dram();
  rtl.write_dram(0, image);
  model.write_dram(0, image);
  Tally t;
  for (int p = 0; p < programs; ++p) {
    const gen::GenCase c = g.next_valid(24);
    const std::span<const std::uint8_t> bytes{reinterpret_cast<const std::uint8_t*>(c.image.data()),
                                              c.image.size() * 16};
    RunStats s[2];
    Device* devs[2] = {&model, &rtl};
    for (int d = 0; d < 2; ++d) {
      devs[d]->write_dram(c.write_addr, bytes);
      s[d] = devs[d]->run(c.prog_addr, c.len);
    }
    compare_run(c.image, s[0], s[1],
                "seed " + std::to_string(seed) + " program " + std::to_string(p), t);
  }
  t.print(std::string(cfg.name) + " random programs, seed " + std::to_string(seed));
  EXPECT_GT(t.compared, std::uint64_t(programs));
  EXPECT_EQ(t.mismatched, 0u);
  EXPECT_EQ(t.bad_runs, 0u);
}

/// A DMA_LOAD of `rows` rows of `row_len` elements of `mem` from DRAM byte `dram` (rows
/// `stride` bytes apart) to word `spad`.
inline hw::Instr dma_load(hw::Mem mem, std::uint64_t dram, std::uint64_t spad, std::uint64_t rows,
                          std::uint64_t row_len, std::uint64_t stride) {
  namespace d = hw::fields::dma_load;
  hw::Instr in = hw::make_instr(hw::Opcode::kDmaLoad, 0);
  hw::set_field(in, d::kMem, std::uint32_t(mem));
  hw::set_field(in, d::kElemSize, mem == hw::Mem::kParam ? 3 : 0);
  hw::set_field(in, d::kDramAddr, std::uint32_t(dram));
  hw::set_field(in, d::kSpadAddr, std::uint32_t(spad));
  hw::set_field(in, d::kRows, std::uint32_t(rows));
  hw::set_field(in, d::kRowLen, std::uint32_t(row_len));
  hw::set_field(in, d::kDramStride, std::uint32_t(stride));
  return in;
}

/// A random MATMUL, MATMUL_HEADS or MATMUL_ACT (transposed) whose W^T and steps fit half the
/// weight and param memories and whose result fits half the vector memory.
inline hw::Instr tile_matmul(const hw::HwConfig& cfg, std::mt19937_64& rng) {
  namespace mm = hw::fields::matmul;
  const auto pick = [&rng](std::uint64_t lo, std::uint64_t hi) {
    return lo + rng() % (hi - lo + 1);
  };
  const hw::Opcode ops[] = {hw::Opcode::kMatmul, hw::Opcode::kMatmulHeads, hw::Opcode::kMatmulAct};
  while (true) {
    const std::uint64_t m = pick(1, 24), k = pick(1, 4 * cfg.array_rows + 3);
    const std::uint64_t n = pick(1, std::min<std::uint64_t>(cfg.param_depth / 2, 40));
    hw::Instr in = hw::make_instr(ops[pick(0, 2)], 0);
    hw::set_field(in, mm::kM, std::uint32_t(m));
    hw::set_field(in, mm::kK, std::uint32_t(k));
    hw::set_field(in, mm::kN, std::uint32_t(n));
    hw::set_field(in, mm::kOutBits, std::uint32_t(pick(0, 1) * 8));
    if (hw::get_field(in, hw::fields::kOpcode) == std::uint32_t(hw::Opcode::kMatmulAct)) {
      hw::set_field(in, hw::fields::matmul_act::kDigits, 1);
      hw::set_field(in, hw::fields::matmul_act::kTranspose, std::uint32_t(pick(0, 1)));
    } else if (hw::get_field(in, hw::fields::kOpcode) == std::uint32_t(hw::Opcode::kMatmulHeads)) {
      hw::set_field(in, hw::fields::matmul_heads::kHeadSize, std::uint32_t(pick(1, n)));
    }
    if (check_instr(in, cfg).ok() &&
        k * cycles::ceil_div(n, cfg.array_cols) <= cfg.weight_depth / 2 &&
        matmul_result(in, cfg.lanes).span() <= cfg.vector_depth / 2) {
      return in;
    }
  }
}

/// A DMA_STORE of the result `res` of a MATMUL (its whole words) from vector word `spad` to
/// DRAM byte `dram`, elements of 2^`esize` bytes.
inline hw::Instr store_result(const MatmulResult& res, std::size_t lanes, std::uint64_t spad,
                              std::uint64_t dram, unsigned esize) {
  namespace d = hw::fields::dma_store;
  hw::Instr in = hw::make_instr(hw::Opcode::kDmaStore, 0);
  hw::set_field(in, d::kMem, std::uint32_t(hw::Mem::kVector));
  hw::set_field(in, d::kElemSize, esize);
  hw::set_field(in, d::kDramAddr, std::uint32_t(dram));
  hw::set_field(in, d::kSpadAddr, std::uint32_t(spad));
  hw::set_field(in, d::kRows, std::uint32_t(res.rows));
  hw::set_field(in, d::kRowLen, std::uint32_t(res.row_words * lanes));
  hw::set_field(in, d::kDramStride, std::uint32_t((res.row_words * lanes) << esize));
  return in;
}

/// A program of streamed tiles, double-buffered as the compiler does weight tiles: per tile a
/// MATMUL on one half of the input, weight, param and vector memories and, without a BARRIER,
/// the next tile's a, W^T and steps loading into the other halves and the previous tile's
/// result storing from there, in a random order: the DMA under the MATMUL, refused the param
/// memory while it copies its steps in, the input memory while the array reads its rows and
/// the vector memory while it writes its result. Random shapes and DRAM offsets.
inline std::vector<hw::Instr> streamed_tiles(const hw::HwConfig& cfg, const gen::DramLayout& lay,
                                             std::mt19937_64& rng) {
  const auto pick = [&rng](std::uint64_t lo, std::uint64_t hi) {
    return lo + rng() % (hi - lo + 1);
  };
  const hw::Instr mm = tile_matmul(cfg, rng);
  const std::uint64_t m = hw::get_field(mm, hw::fields::matmul::kM);
  const std::uint64_t k = hw::get_field(mm, hw::fields::matmul::kK);
  const std::uint64_t n = hw::get_field(mm, hw::fields::matmul::kN);
  const MatmulResult res = matmul_result(mm, cfg.lanes);
  const std::uint64_t half_w = cfg.weight_depth / 2, half_p = cfg.param_depth / 2;
  const std::uint64_t half_i = cfg.input_depth / 2, half_v = cfg.vector_depth / 2;
  std::vector<hw::Instr> prog;
  const auto next_tile = [&](std::uint64_t t) {  // tile t's operands, tile t - 2's result
    std::vector<hw::Instr> dma = {
        dma_load(hw::Mem::kWeight, lay.data + pick(0, 4096), t % 2 * half_w, k, n, n + pick(0, 9)),
        dma_load(hw::Mem::kParam, lay.params + 8 * pick(0, 512), t % 2 * half_p, 1, n, 8 * n),
        dma_load(hw::Mem::kInput, lay.data + pick(0, 4096), t % 2 * half_i, m, k, k + pick(0, 5))};
    if (t >= 2) {
      dma.push_back(store_result(res, cfg.lanes, t % 2 * half_v, lay.out + pick(0, 64) * 8,
                                 unsigned(pick(0, 2))));
    }
    std::shuffle(dma.begin(), dma.end(), rng);
    prog.insert(prog.end(), dma.begin(), dma.end());
  };
  next_tile(0);
  const std::uint64_t tiles = pick(2, 6);
  for (std::uint64_t t = 0; t < tiles; ++t) {
    prog.push_back(hw::make_instr(hw::Opcode::kBarrier, 0));
    hw::Instr x = mm;
    hw::set_field(x, hw::fields::matmul::kAAddr, std::uint32_t(t % 2 * half_i));
    hw::set_field(x, hw::fields::matmul::kWAddr, std::uint32_t(t % 2 * half_w));
    hw::set_field(x, hw::fields::matmul::kRqAddr, std::uint32_t(t % 2 * half_p));
    hw::set_field(x, hw::fields::matmul::kDstAddr, std::uint32_t(t % 2 * half_v));
    prog.push_back(x);
    next_tile(t + 1);
  }
  prog.push_back(hw::make_instr(hw::Opcode::kEnd, 0));
  return prog;
}

/// `programs` streamed_tiles() programs on SimDevice and ModelDevice of `cfg` at `timing`.
inline void streamed(const hw::HwConfig& cfg, ModelFactory make, std::uint64_t seed, int programs,
                     Timing timing) {
  constexpr std::uint64_t kDramBytes = 256 * 1024;
  sim::SimOptions opts;
  opts.dram_bytes = kDramBytes;
  opts.dram_latency_ns = timing.latency_ns;
  opts.dram_bytes_per_ns = timing.bytes_per_ns;
  opts.clock_mhz = timing.clock_mhz;
  sim::SimDevice rtl(make(false), opts);
  ModelDevice model(cfg, {timing.clock_mhz, timing.latency_ns, timing.bytes_per_ns}, kDramBytes);
  gen::ProgramGen g(cfg, kDramBytes, seed);
  const std::vector<std::uint8_t> image = g.initial_dram();
  rtl.write_dram(0, image);
  model.write_dram(0, image);
  std::mt19937_64 rng(seed);
  Tally t;
  for (int p = 0; p < programs; ++p) {
    const std::vector<hw::Instr> prog = streamed_tiles(cfg, g.layout(), rng);
    const RunStats a = model.run_program(g.layout().prog_addr, prog);
    const RunStats b = rtl.run_program(g.layout().prog_addr, prog);
    EXPECT_EQ(model.unmodelled_overlaps(), 0u) << "program " << p;
    compare_run(prog, a, b, "seed " + std::to_string(seed) + " program " + std::to_string(p), t);
  }
  t.print(std::string(cfg.name) + " streamed tiles, seed " + std::to_string(seed));
  EXPECT_GT(t.dma_hidden, 0u) << "no DMA ran under a MATMUL";
  EXPECT_EQ(t.mismatched, 0u);
  EXPECT_EQ(t.bad_runs, 0u);
}

/// Drives one backend through a workload (the same calls on each device).
using Workload = std::function<void(DeviceBackend&)>;

/// `model` compiled for `cfg` with `co`, driven by `drive` on SimDevice and on ModelDevice; their
/// runs compared one by one.
inline void compiled(const QuantModel& model, const hw::HwConfig& cfg, ModelFactory make,
                     CompileOptions co, const Workload& drive, const std::string& what) {
  const ModelCompiler probe(model, cfg, co);
  sim::SimOptions opts;
  opts.dram_bytes = (probe.dram_bytes() + 4095) / 4096 * 4096;
  sim::SimDevice rtl(make(false), opts);
  ModelDevice mdl(cfg, {}, opts.dram_bytes);
  RunLog rtl_runs, model_runs;
  Unmodelled unmodelled(mdl);
  rtl.add_observer(&rtl_runs);
  mdl.add_observer(&model_runs);
  mdl.add_observer(&unmodelled);
  DeviceBackend on_rtl(probe, rtl), on_model(probe, mdl);
  const auto t0 = std::chrono::steady_clock::now();
  drive(on_rtl);
  const auto t1 = std::chrono::steady_clock::now();
  drive(on_model);
  const auto t2 = std::chrono::steady_clock::now();
  const auto a = on_rtl.logits_i32(), b = on_model.logits_i32();
  EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << what << ": logits differ";
  ASSERT_EQ(rtl_runs.runs.size(), model_runs.runs.size()) << what;
  Tally t;
  for (std::size_t r = 0; r < rtl_runs.runs.size(); ++r) {
    ASSERT_EQ(rtl_runs.runs[r].first, model_runs.runs[r].first) << what << " run " << r;
    compare_run(rtl_runs.runs[r].first, model_runs.runs[r].second, rtl_runs.runs[r].second,
                what + " run " + std::to_string(r), t);
  }
  t.print(what + " on " + std::string(cfg.name));
  std::cout << "  wall time (with the host's work): SimDevice "
            << std::chrono::duration<double>(t1 - t0).count() << " s, ModelDevice "
            << std::chrono::duration<double>(t2 - t1).count() << " s\n";
  EXPECT_EQ(unmodelled.total, 0u) << what << ": units met on a memory outside the model";
  EXPECT_GT(t.compared, 0u);
  EXPECT_EQ(t.mismatched, 0u);
  EXPECT_EQ(t.bad_runs, 0u);
}

/// Decoding position by position from two prompts, `steps` tokens each.
inline Workload decode(const Tokenizer& tok, int steps) {
  return [&tok, steps](DeviceBackend& dev) {
    for (const char* prompt : {"ROMEO:", "Once upon a time"}) {
      GenerateOptions o;
      o.prompt = prompt;
      o.steps = steps;
      o.prefill = false;
      (void)generate(dev, tok, o, nullptr);
    }
  };
}

/// Whole-sequence passes of 1, 3 and 9 positions, then 2 decoding steps after the last.
inline Workload sequences(int vocab) {
  return [vocab](DeviceBackend& dev) {
    for (const std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{9}}) {
      std::vector<int> t(n);
      for (std::size_t i = 0; i < n; ++i) {
        t[i] = int((i * 37 + 11 + n) % std::size_t(vocab));
      }
      dev.forward_sequence(t, 0);
    }
    dev.forward(5 % vocab, 9);
    dev.forward(7 % vocab, 10);
  };
}

/// ln-gpt or bn-gpt (models/), quantised as the GPT tests do: decoding 8 tokens from two prompts
/// (`prefill` false), or whole-sequence passes then 2 decoding steps (true).
inline void project_gpt(const char* name, BatchNormMode bn, const hw::HwConfig& cfg,
                        ModelFactory make, kernels::SoftmaxMode softmax, bool prefill) {
  const auto path = test::project_model_path(name);
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  const GgufFile file = GgufFile::read(path);
  const FloatModel fm = float_model_from_gguf(file);
  const Tokenizer tok = tokenizer_from_gguf(file, fm.config.vocab_size);
  QuantOptions qo;
  qo.batchnorm = bn;
  const QuantModel model = quantize(fm, calibrate(fm, self_generated_calibration(fm, 64)), qo);
  compiled(model, cfg, make, {.softmax = softmax},
           prefill ? sequences(fm.config.vocab_size) : decode(tok, 8),
           std::string(name) + (prefill ? " sequences" : " decode"));
}

inline constexpr auto kThreePass = kernels::SoftmaxMode::kThreePass;
inline constexpr auto kOnline = kernels::SoftmaxMode::kOnline;

/// The random post-norm encoder (model/random_model.hpp), sequences of 1, 3 and 9.
inline void encoder(const hw::HwConfig& cfg, ModelFactory make, AttentionUnit attention) {
  const FloatModel fm = random_encoder({}, 15);
  std::vector<std::vector<int>> docs;
  for (std::size_t d = 0; d < 8; ++d) {
    std::vector<int> t(4 + 12 * d / 7);
    for (std::size_t i = 0; i < t.size(); ++i) {
      t[i] = int((i * 7 + 3 + (d + 1) * 5) % std::size_t(fm.config.vocab_size));
    }
    docs.push_back(t);
  }
  const QuantModel model = quantize(fm, calibrate(fm, docs));
  compiled(
      model, cfg, make, {.attention = attention},
      [&fm](DeviceBackend& dev) {
        for (const std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{9}}) {
          std::vector<int> t(n);
          for (std::size_t i = 0; i < n; ++i) {
            t[i] = int((i * 7 + 3 + n * 5) % std::size_t(fm.config.vocab_size));
          }
          dev.forward_sequence(t, 0);
        }
      },
      "random encoder");
}

/// stories260K (../shared/data), 8 decoding steps from each prompt.
inline void stories(const hw::HwConfig& cfg, ModelFactory make) {
  const auto fm = load_llama2c(test::model_path());
  const QuantModel model = quantize(fm, calibrate(fm, self_generated_calibration(fm, 64)));
  const Tokenizer tok = Tokenizer::load(test::tokenizer_path(), 512);
  compiled(model, cfg, make, {}, decode(tok, 8), "stories260K decode");
}

}  // namespace passim::model_test

// SPDX-License-Identifier: Apache-2.0
// `passim encode`: one whole sequence through the random post-norm encoder
// (model/random_model.hpp) on the float, cpu or rtl backend, in one pass; prints the class the
// classifier picks at the last position. On rtl the cycle tables follow, and --report writes the
// JSON report (docs/reports.md) with the same `cycles` section as `passim run`.
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "hw_config.hpp"
#include "model_session.hpp"
#include "options.hpp"
#include "passim/compiler/compiler.hpp"
#include "passim/device/device_backend.hpp"
#include "passim/eval/calibrate.hpp"
#include "passim/model/float_backend.hpp"
#include "passim/model/random_model.hpp"
#include "passim/quant/cpu_backend.hpp"
#include "passim/quant/quantize.hpp"
#include "report.hpp"

namespace passim::app {

using nlohmann::json;

namespace {

struct EncodeOptions {
  EncoderShape shape{.dim = 64, .hidden = 256, .layers = 2, .heads = 1, .vocab = 16,
                     .seq_len = 128};
  int seq = 0;
  std::string arch;      ///< --arch: a named shape (model/random_model.hpp kArchShapes)
  bool decoder = false;  ///< the arch is a causal pre-norm decoder (GPT-2)
  std::uint32_t seed = 1;
  std::string backend = "cpu";
  std::string report;
  std::string softmax = "3pass";
  std::string weights = "auto";
  std::string attention = "auto";
  RtlOptions rtl;
  bool config_given = false;  ///< --config was on the command line
  bool quiet = false;         ///< --quiet: no progress line
};

/// `n` token ids in [0, vocab) from std::mt19937(seed): the same ids for the same seed.
std::vector<int> random_tokens(std::size_t n, int vocab, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> pick(0, vocab - 1);
  std::vector<int> t(n);
  for (int& id : t) {
    id = pick(gen);
  }
  return t;
}

/// The model quantised with a calibration on `count` random sequences of `seq` tokens.
QuantModel quantised(const FloatModel& fm, std::size_t count, std::size_t seq,
                     std::uint32_t seed) {
  std::vector<std::vector<int>> docs;
  for (std::uint32_t d = 0; d < count; ++d) {
    docs.push_back(random_tokens(seq, fm.config.vocab_size, seed * 101 + d + 1));
  }
  QuantModel q = quantize(fm, calibrate(fm, docs));
  q.calibration = fmt::format("{} random sequences of {} tokens (seeds from {})",
                              count == 8 ? "eight" : count == 2 ? "two" : std::to_string(count),
                              seq, seed);
  return q;
}

/// The random encoder's float weights, in bytes: per block the four attention projections
/// (dim x dim) and the two FFN matrices (dim x hidden), plus the token and position rows and
/// the classifier; biases and norms are left out (under 1 % at any allowed shape).
double encoder_weight_bytes(const EncoderShape& s) {
  const double d = s.dim, h = s.hidden;
  return 4.0 * (s.layers * (4 * d * d + 2 * d * h) + (2.0 * s.vocab + s.seq_len) * d);
}

/// The most float weight bytes `passim encode` builds: BERT-Large's shape takes 1.2 GiB.
constexpr double kEncoderWeightLimit = 4.0 * (1u << 30);

void check_encode_usage(const EncodeOptions& o, bool rtl_built) {
  const bool is_rtl = o.backend == "rtl";
  if (const double bytes = encoder_weight_bytes(o.shape); bytes > kEncoderWeightLimit) {
    const double gib = std::ceil(bytes / (1u << 30) * 100) / 100;  // never shown as the limit
    throw UsageError(fmt::format(
        "--dim {} --hidden {} --layers {} --classes {} --context {}: expected an encoder whose "
        "float weights fit in {:.0f} GiB, found one of {:.2f} GiB (lower one of them)",
        o.shape.dim, o.shape.hidden, o.shape.layers, o.shape.vocab, o.shape.seq_len,
        kEncoderWeightLimit / (1u << 30), gib));
  }
  if (o.seq < 1 || o.seq > o.shape.seq_len) {
    throw UsageError(fmt::format("--seq: expected 1..{} (--context), found {}",
                                 o.shape.seq_len, o.seq));
  }
  if (o.shape.dim % o.shape.heads != 0) {
    throw UsageError(fmt::format("--heads {}: expected a divisor of --dim {}", o.shape.heads,
                                 o.shape.dim));
  }
  if (o.backend == "float" && o.config_given) {
    throw UsageError(fmt::format("--config {}: only for the integer backends (rtl: the "
                                 "simulated hardware; cpu: the lanes of --softmax online), found "
                                 "--backend float", o.rtl.config));
  }
  if (is_rtl && !rtl_built) {
    throw std::runtime_error("--backend rtl: this passim was built without the RTL simulator "
                             "(configure with PASSIM_BUILD_SIM=ON)");
  }
  const bool compiled = is_rtl || o.backend == "model";  // runs the compiler's programs
  if (!compiled && o.attention != "auto") {
    throw UsageError(fmt::format("--attention {}: only for --backend rtl or model, found "
                                 "--backend {}",
                                 o.attention, o.backend));
  }
  if ((!compiled && o.weights != "auto") || (!is_rtl && o.rtl.max_cycles != 0)) {
    throw UsageError(fmt::format("{}: only for --backend rtl{}, found --backend {}",
                                 o.weights != "auto" ? "--weights" : "--max-cycles",
                                 o.weights != "auto" ? " or model" : "", o.backend));
  }
  if (o.softmax == "online" && o.backend == "float") {
    throw UsageError("--softmax online: only for the integer backends (cpu, rtl)");
  }
  check_output_path(o.report, "--report", {});
}

json encode_report(const EncodeOptions& o, std::string_view backend, const FloatModel& fm,
                   const QuantModel* qm, const std::vector<int>& tokens,
                   std::span<const float> logits) {
  json j;
  j["format_version"] = kReportVersion;
  j["tool"] = "passim encode";
  j["model"] = {{"name", o.decoder ? "random-decoder" : "random-encoder"},
                {"seed", o.seed},
                {"config", config_json(fm.config)}};
  if (!o.arch.empty()) {
    j["model"]["arch"] = o.arch;
  }
  if (qm != nullptr) {
    j["model"]["calibration"] = qm->calibration;
  }
  j["backend"] = std::string(backend);
  if (o.backend != "float") {
    j["softmax"] = o.softmax == "online"
                       ? json{{"mode", "online"}, {"lanes", config_arg(o.rtl.config).lanes}}
                       : json{{"mode", "3pass"}};
  }
  j["sequence_tokens"] = tokens;
  j["final_logits"] = std::vector<float>(logits.begin(), logits.end());
  return j;
}

/// The backend a sequence runs on: float, cpu, or the compiled model in a simulator session.
struct EncodeBackend {
  std::optional<QuantModel> quant;
  std::optional<ModelCompiler> compiled;
  std::unique_ptr<Backend> owned;
  std::unique_ptr<RtlSession> session;
  Backend* backend = nullptr;
};

void start_backend(const EncodeOptions& o, const FloatModel& fm, const RtlFactory& rtl,
                   EncodeBackend& b) {
  const hw::HwConfig* cfg = &config_arg(o.rtl.config);
  const auto mode = o.softmax == "online" ? kernels::SoftmaxMode::kOnline
                                          : kernels::SoftmaxMode::kThreePass;
  if (o.backend == "float") {
    b.owned = std::make_unique<FloatBackend>(fm);
    b.backend = b.owned.get();
    return;
  }
  // An --arch workload calibrates on two sequences of at most 64 tokens: its float passes
  // would take minutes at BERT's width, and its cycles do not depend on the scales.
  b.quant.emplace(o.arch.empty() ? quantised(fm, 8, std::size_t(o.seq), o.seed)
                                 : quantised(fm, 2, std::size_t(std::min(o.seq, 64)), o.seed));
  if (o.backend == "cpu") {
    b.owned = std::make_unique<CpuBackend>(*b.quant, kernels::SoftmaxOptions{mode, cfg->lanes});
    b.backend = b.owned.get();
    return;
  }
  const WeightsMode w = o.weights == "resident"   ? WeightsMode::kResident
                        : o.weights == "streamed" ? WeightsMode::kStreamed
                                                  : WeightsMode::kAuto;
  b.compiled.emplace(*b.quant, *cfg, CompileOptions{mode, w, attention_unit(o.attention)});
  (void)b.compiled->pass(random_tokens(std::size_t(o.seq), o.shape.vocab, o.seed), 0);  // fits
  RtlOptions ro = o.rtl;
  ro.softmax = mode;
  b.session = (o.backend == "model" ? model_factory() : rtl)(*b.compiled, ro);
  b.backend = &b.session->backend();
}

/// The cycle tables (rtl) on `err` and the --report file; a pass the watchdog stopped
/// (`stopped` holds its message) gets both, its report marked "partial" with no logits.
void write_encode_outputs(const EncodeOptions& o, const FloatModel& fm, EncodeBackend& b,
                          const std::vector<int>& tokens, const std::string& stopped,
                          std::ostream& err) {
  const Work work{"sequences", stopped.empty() ? 1u : 0u, 0};  // one pass, the whole sequence
  const json cycles = b.session ? rtl_cycles(*b.session, fm.config, o.weights, work, err) : json();
  if (o.report.empty()) {
    return;
  }
  json j = encode_report(o, b.backend->name(), fm, b.quant ? &*b.quant : nullptr, tokens,
                         b.backend->logits());
  add_rtl_sections(j, b.session.get(), cycles, stopped);
  if (!stopped.empty()) {
    j["final_logits"] = nullptr;  // the pass did not reach the classifier
  }
  write_json(o.report, j);
}

int cmd_encode(const EncodeOptions& o, std::ostream& out, std::ostream& err,
               const RtlFactory& rtl) {
  check_encode_usage(o, bool(rtl));
  const FloatModel fm = o.decoder ? random_decoder(o.shape, o.seed)
                                  : random_encoder(o.shape, o.seed);
  EncodeBackend b;
  start_backend(o, fm, rtl, b);
  const std::vector<int> tokens = random_tokens(std::size_t(o.seq), o.shape.vocab, o.seed);
  std::string stopped;  // the watchdog's message when --max-cycles stopped the pass
  try {
    b.backend->forward_sequence(tokens, 0);  // one pass: every position attends to every other
  } catch (const std::runtime_error& e) {
    if (!b.session || !b.session->absorb_partial_run(e)) {
      throw;
    }
    stopped = e.what();
    fmt::print(err, "partial run: {}; the tables below cover the pass until the stop\n",
               stopped);
  }
  if (stopped.empty()) {
    const std::span<const float> logits = b.backend->logits();
    std::size_t best = 0;
    for (std::size_t c = 1; c < logits.size(); ++c) {
      best = logits[c] > logits[best] ? c : best;
    }
    fmt::print(out, "class {} logit {:.6f}\n", best, logits[best]);
  }
  write_encode_outputs(o, fm, b, tokens, stopped, err);
  if (!stopped.empty()) {
    throw std::runtime_error(fmt::format("encode: {}{}", stopped,
                                         o.report.empty() ? "" : " (partial report written)"));
  }
  return 0;
}

/// --arch's shape into `o.shape`, but for the shape options given on the command line; a
/// sequence longer than the published context gets positions for all of it.
void apply_arch(const CLI::App& cmd, EncodeOptions& o) {
  if (o.arch.empty()) {
    return;
  }
  const ArchShape& a = *find_arch(o.arch);
  const auto unless_given = [&](const char* opt, int& field, int value) {
    if (cmd.count(opt) == 0) {
      field = value;
    }
  };
  unless_given("--dim", o.shape.dim, a.dim);
  unless_given("--hidden", o.shape.hidden, a.hidden);
  unless_given("--layers", o.shape.layers, a.layers);
  unless_given("--heads", o.shape.heads, a.heads);
  unless_given("--classes", o.shape.vocab, 2);
  unless_given("--context", o.shape.seq_len, std::max(a.context, o.seq));
  o.decoder = a.decoder;
}

void add_shape_options(CLI::App* cmd, EncodeOptions& o) {
  cmd->add_option("--seq", o.seq, "tokens in the sequence (one pass; causal only with a "
                                  "decoder --arch)")
      ->transform(decimal_in(1, 4096))->required();
  std::vector<std::string> archs;
  for (const ArchShape& a : kArchShapes) {
    archs.emplace_back(a.name);
  }
  cmd->add_option("--arch", o.arch, "a named shape with random int8 weights (docs/workloads.md): "
                                    "bert-base, bert-large, gpt2, gpt2-medium; the shape "
                                    "options below override its fields")
      ->check(CLI::IsMember(archs));
  cmd->add_option("--dim", o.shape.dim, "model width")
      ->transform(decimal_in(2, 4096))->capture_default_str();
  cmd->add_option("--hidden", o.shape.hidden, "FFN inner width")
      ->transform(decimal_in(2, 4096))->capture_default_str();
  cmd->add_option("--layers", o.shape.layers, "post-norm blocks")
      ->transform(decimal_in(1, 64))->capture_default_str();
  cmd->add_option("--heads", o.shape.heads, "attention heads (must divide --dim)")
      ->transform(decimal_in(1, 64))->capture_default_str();
  cmd->add_option("--classes", o.shape.vocab, "token ids and classifier classes")
      ->transform(decimal_in(2, 4096))->capture_default_str();
  cmd->add_option("--context", o.shape.seq_len, "learned positions: the longest --seq")
      ->transform(decimal_in(1, 4096))->capture_default_str();
  cmd->add_option("--seed", o.seed, "the weights' and the tokens' random seed")
      ->transform(decimal_in(0, 4294967295))->capture_default_str();
}

void add_encode_hardware_options(CLI::App* cmd, EncodeOptions& o) {
  cmd->add_option("--backend,-b", o.backend,
                  "float | cpu | rtl (the simulated accelerator) | model (its cycle model)")
      ->check(CLI::IsMember({"float", "cpu", "rtl", "model"}))->capture_default_str();
  cmd->add_option("--config", o.rtl.config, "rtl: hardware configuration; cpu: Softmax lanes")
      ->check(config_validator())->capture_default_str();
  cmd->add_option("--max-cycles", o.rtl.max_cycles, "rtl: watchdog, cycles per program (0 = none)")
      ->transform(cycles_validator());
  add_memory_timing_options(cmd, o.rtl);
  add_progress_options(cmd, o.rtl, o.quiet);
  cmd->add_option("--softmax", o.softmax, "3pass | online (cpu and rtl)")
      ->check(CLI::IsMember({"3pass", "online"}))->capture_default_str();
  cmd->add_option("--weights", o.weights, "rtl: auto | resident | streamed")
      ->check(CLI::IsMember({"auto", "resident", "streamed"}))->capture_default_str();
  cmd->add_option("--attention", o.attention,
                  "rtl: auto | array | scores | vector (where q k^T and p v run)")
      ->check(CLI::IsMember({"auto", "array", "scores", "vector"}))->capture_default_str();
  cmd->add_option("--report", o.report, "write a JSON report here");
}

}  // namespace

Command add_encode_command(CLI::App& app, const RtlFactory& rtl) {
  auto o = std::make_shared<EncodeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "encode", "one sequence through a random Transformer in one pass: a post-norm encoder "
                "(no mask), or --arch's encoder or decoder");
  add_shape_options(cmd, *o);
  add_encode_hardware_options(cmd, *o);
  return {[cmd] { return bool(*cmd); },
          [o, cmd, rtl](std::ostream& out, std::ostream& err) {
            o->config_given = cmd->count("--config") > 0;
            apply_arch(*cmd, *o);
            check_memory_timing_usage(*cmd, o->backend);
            apply_progress_options(o->rtl, o->quiet, err);
            return cmd_encode(*o, out, err, rtl);
          }};
}

}  // namespace passim::app

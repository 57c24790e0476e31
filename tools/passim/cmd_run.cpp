// SPDX-License-Identifier: Apache-2.0
// `passim run`: generate text with run.c's semantics on the float, cpu or rtl backend; on rtl
// the cycle tables follow, and --report writes the JSON report (docs/reports.md).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
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
#include "passim/eval/accuracy.hpp"
#include "passim/eval/generate.hpp"
#include "report.hpp"

namespace passim::app {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct RunOptions {
  ModelOptions model;
  RtlOptions rtl;
  std::string prompt;
  int steps = 256;
  float temperature = 0.0f;
  float top_p = 0.9f;
  std::uint64_t seed = 42;
  std::string report;
  std::string softmax = "3pass";  ///< 3pass | online
  std::string prefill = "on";     ///< on | off: the prompt in one pass, or position by position
  std::string weights = "auto";   ///< auto | resident | streamed (rtl)
  std::string attention = "auto";  ///< auto | array | vector (rtl)
  std::string trace_window;        ///< --trace-window START:END, parsed into rtl
  bool config_given = false;  ///< --config was on the command line
  bool quiet = false;         ///< --quiet: no progress line
};

/// The backend a run uses: the float or cpu backend, or a compiled model in a simulator session.
struct RunBackend {
  std::unique_ptr<Backend> owned;
  std::optional<ModelCompiler> compiled;
  std::unique_ptr<RtlSession> session;
  Backend* backend = nullptr;
};

/// The report and the waveform: writable, not an input, not the same file, and room for a
/// waveform (the FST writer cannot report a full disk once it runs).
void check_run_outputs(const RunOptions& o) {
  const std::string tokenizer = tokenizer_path(o.model.model, o.model.tokenizer);
  const std::initializer_list<NamedInput> inputs = {{"input model", o.model.model},
                                                    {"tokenizer", tokenizer},
                                                    {"calibration text", o.model.calib_text}};
  check_output_path(o.report, "--report", inputs);
  check_output_path(o.rtl.trace_path, "--trace", inputs, OutputKind::kReplaced);
  if (!o.rtl.trace_path.empty()) {
    constexpr std::uintmax_t kMinFreeMb = 64;  // a waveform takes 10-30 MB per position
    std::error_code ec;
    const fs::space_info sp = fs::space(fs::absolute(o.rtl.trace_path).parent_path(), ec);
    if (!ec && sp.available < (kMinFreeMb << 20)) {
      throw std::runtime_error(fmt::format(
          "--trace {}: expected at least {} MB free on its file system, found {} MB (a "
          "waveform takes 10-30 MB per position)",
          o.rtl.trace_path, kMinFreeMb, sp.available >> 20));
    }
  }
  if (!o.report.empty() && o.report == o.rtl.trace_path) {
    throw std::runtime_error(
        fmt::format("--trace {}: the same file as --report; give them different names", o.report));
  }
}

/// `--trace-window START:END` into `o.rtl` (whole numbers of cycles, END after START), only
/// with --trace. Throws UsageError naming the option.
void parse_trace_options(RunOptions& o) {
  if (!o.rtl.trace_scope.empty() && o.rtl.trace_path.empty()) {
    throw UsageError("--trace-scope: only with --trace (the waveform it limits)");
  }
  if (o.trace_window.empty()) {
    return;
  }
  if (o.rtl.trace_path.empty()) {
    throw UsageError("--trace-window: only with --trace (the waveform it limits)");
  }
  const std::string& w = o.trace_window;
  const auto colon = w.find(':');
  const auto number = [](std::string s, std::uint64_t& v) {
    if (!cycles_validator()(s).empty()) {
      return false;
    }
    v = std::stoull(s);
    return true;
  };
  std::uint64_t first = 0, end = 0;
  if (colon == std::string::npos || !number(w.substr(0, colon), first) ||
      !number(w.substr(colon + 1), end)) {
    throw UsageError(fmt::format("--trace-window {}: expected START:END, two whole numbers of "
                                 "cycles (e.g. 1000:5000)", w));
  }
  if (end <= first) {
    throw UsageError(fmt::format("--trace-window {}: expected END after START, found END {} "
                                 "{} START {}", w, end, end == first ? "equal to" : "before",
                                 first));
  }
  o.rtl.trace_first = first;
  o.rtl.trace_end = end;
}

/// Options that do not apply to the backend: usage errors.
void check_run_usage(const RunOptions& o, bool rtl_built) {
  const bool is_float = o.model.backend == "float", is_rtl = o.model.backend == "rtl";
  if (!is_rtl && (!o.rtl.trace_path.empty() || o.rtl.max_cycles != 0)) {
    throw UsageError(fmt::format("{}: only for --backend rtl (the simulated accelerator), found "
                                 "--backend {}",
                                 o.rtl.trace_path.empty() ? "--max-cycles" : "--trace",
                                 o.model.backend));
  }
  if (is_float && o.config_given) {
    throw UsageError(fmt::format(
        "--config {}: only for the integer backends (rtl: the simulated hardware; cpu: the lane "
        "order of --softmax online), found --backend float", o.rtl.config));
  }
  if (is_rtl && !rtl_built) {
    throw std::runtime_error("--backend rtl: this passim was built without the RTL simulator "
                             "(configure with PASSIM_BUILD_SIM=ON)");
  }
  const bool compiled = is_rtl || o.model.backend == "model";  // runs the compiler's programs
  if (!compiled && (o.weights != "auto" || o.attention != "auto")) {
    const bool w = o.weights != "auto";
    throw UsageError(fmt::format("--{} {}: only for --backend rtl or model, found --backend {}",
                                 w ? "weights" : "attention", w ? o.weights : o.attention,
                                 o.model.backend));
  }
  if (o.softmax == "online" && is_float) {
    throw UsageError("--softmax online: only for the integer backends (cpu, rtl); the float "
                     "backend computes Softmax in float");
  }
}

/// Compiles the model once and starts a simulator session; the config's vector scratchpad
/// bounds the KV window, which is checked before simulating.
void start_session(const RunOptions& o, const LoadedModel& m, const hw::HwConfig& cfg,
                   kernels::SoftmaxMode softmax, const RtlFactory& rtl, RunBackend& b,
                   std::ostream& err) {
  const WeightsMode weights = o.weights == "resident"   ? WeightsMode::kResident
                              : o.weights == "streamed" ? WeightsMode::kStreamed
                                                        : WeightsMode::kAuto;
  b.compiled.emplace(*m.quant_model, cfg,
                     CompileOptions{softmax, weights, attention_unit(o.attention)});
  if (weights == WeightsMode::kAuto && !b.compiled->residency().weights) {
    fmt::print(err, "notice: weights streamed from DRAM by every MATMUL: {}\n",
               b.compiled->residency().reason);
  }
  const int window = b.compiled->max_positions();
  const int wanted = o.steps <= 0 || o.steps > m.config.seq_len ? m.config.seq_len : o.steps;
  if (wanted > window) {
    throw std::runtime_error(fmt::format(
        "--steps {}{}: config {} holds a KV window of {} positions in its vector scratchpad; "
        "use --steps {} or less, or a larger config", o.steps,
        wanted == o.steps ? std::string() : fmt::format(" (clamped to the context length, {})", wanted),
        o.rtl.config, window, window));
  }
  RtlOptions ro = o.rtl;
  ro.softmax = softmax;
  b.session = rtl(*b.compiled, ro);
  b.backend = &b.session->backend();
}

/// "backend cpu: 64 positions in 0.012 s (prefill 17 in 0.002 s), achieved tok/s: 4700.0".
/// As run.c: no tokens/s figure unless a position followed the first forward pass (run.c's
/// clock starts after the first position; with prefill, after the prompt).
void print_timing(std::ostream& err, const Backend& backend, const GenerateResult& r) {
  const std::string prefill =
      r.prefill_positions > 0
          ? fmt::format(" (prefill {} in {:.3f} s)", r.prefill_positions, r.prefill_seconds)
          : std::string();
  fmt::print(err, "backend {}: {} position{} in {:.3f} s{}{}\n", backend.name(), r.steps,
             r.steps == 1 ? "" : "s", r.seconds, prefill,
             r.tokens_per_second > 0
                 ? fmt::format(", achieved tok/s: {:.1f}{}", r.tokens_per_second,
                               backend.name().starts_with("rtl") ||
                                       backend.name().starts_with("model")
                                   ? " (the host's wall-clock speed; the accelerator's own is "
                                     "the `accelerator at` line)"
                                   : "")
                 : std::string());
}

/// A prompt the config's scratchpads could not take in one pass ran in several: say so.
void print_split_notice(std::ostream& err, const RunBackend& b, const GenerateResult& r) {
  const auto* dev = dynamic_cast<const DeviceBackend*>(b.backend);
  if (dev == nullptr || r.prefill_positions == 0 || dev->sequence_passes() <= 1) {
    return;
  }
  fmt::print(err, "notice: config {} holds at most {} prompt positions per pass (vector "
             "scratchpad, MATMUL rows); the prompt's {} ran in {} passes\n",
             dev->compiler().hw().name,
             dev->compiler().rows_at(0, std::size_t(r.prefill_positions)), r.prefill_positions,
             dev->sequence_passes());
}

json run_report(const RunOptions& o, const LoadedModel& m, const Backend& backend,
                const GenerateResult& r, int steps) {
  json j;
  j["format_version"] = kReportVersion;
  j["tool"] = "passim run";
  j["model"] = {{"path", model_name(o.model)}, {"sha256", m.sha256},
                {"config", config_json(m.config)}};
  if (m.quant_model) {
    j["model"]["calibration"] = m.quant_model->calibration;
  }
  j["backend"] = std::string(backend.name());
  if (o.model.backend != "float") {
    const hw::HwConfig& cfg = config_arg(o.rtl.config);
    j["softmax"] = o.softmax == "online" ? json{{"mode", "online"}, {"lanes", cfg.lanes}}
                                         : json{{"mode", "3pass"}};
  }
  j["prompt"] = o.prompt;
  // float options are reported as the decimal the user typed (not 0.8999999761581421)
  auto decimal = [](float v) { return std::stod(fmt::format("{}", v)); };
  j["sampling"] = {{"steps", steps}, {"temperature", decimal(o.temperature)},
                   {"top_p", decimal(o.top_p)}, {"seed", o.seed}};
  j["prompt_tokens"] = r.prompt_tokens;
  j["generated_tokens"] = r.generated_tokens;
  j["text"] = r.text;
  // The last position's logits, exact: a Q.16 int32 logit is a float without rounding.
  j["final_logits"] = std::vector<float>(backend.logits().begin(), backend.logits().end());
  const bool timed = r.tokens_per_second > 0;
  j["timings"] = {{"positions", r.steps},
                  {"prefill_positions", r.prefill_positions},
                  {"seconds", r.seconds},
                  {"prefill_seconds", r.prefill_seconds},
                  {"tokens_per_second", timed ? json(r.tokens_per_second) : json(nullptr)}};
  return j;
}

/// Positions the self-check of an integer model runs (the prompt's first ones, BOS first).
constexpr int kSelfCheckPositions = 16;

/// Warns, naming the layer, when the integer model's int16 residual is saturated or collapsed
/// over its first positions on the cpu backend (eval/accuracy.hpp `self_check`): the symptom
/// of a wrong scale in a .psm, which would otherwise run and print degraded text.
void run_self_check(const RunOptions& o, const LoadedModel& m, std::ostream& err) {
  if (!m.quant_model || !m.tokenizer) {
    return;
  }
  std::vector<int> tokens;
  try {
    tokens = m.tokenizer->encode(o.prompt, true, false);
  } catch (const std::runtime_error&) {
    return;  // the run itself reports a prompt it cannot encode
  }
  for (const std::string& w : self_check(*m.quant_model, tokens, kSelfCheckPositions)) {
    fmt::print(err,
               "warning: {}: self-check over {} positions (the prompt, then greedy): {} (a "
               "wrong scale? passim accuracy shows every layer)\n",
               model_name(o.model), std::min(kSelfCheckPositions, m.config.seq_len), w);
  }
}

/// The cycle tables (rtl) on `err` and the --report file; a run the watchdog stopped
/// (`stopped` holds its message) gets both, its report marked "partial".
void write_run_outputs(const RunOptions& o, const LoadedModel& m, RunBackend& b,
                       const GenerateResult& r, int steps, const std::string& stopped,
                       std::ostream& err) {
  json cycles;
  if (b.session) {
    b.session->close_trace();
    if (!stopped.empty() && !o.rtl.trace_path.empty()) {
      fmt::print(err, "notice: --trace: {} is closed, a complete waveform up to the stop "
                 "(cycle {})\n", o.rtl.trace_path, b.session->clock_cycles());
    }
    if (!o.trace_window.empty() && o.rtl.trace_first >= b.session->clock_cycles()) {
      fmt::print(err, "notice: --trace-window {}: the simulation ended at cycle {}, before the "
                 "window; {} holds no values\n", o.trace_window, b.session->clock_cycles(),
                 o.rtl.trace_path);
    }
    const auto prefill = std::uint64_t(std::max(r.prefill_positions, 0));
    const auto positions = std::uint64_t(std::max(r.steps, 0));
    cycles = rtl_cycles(*b.session, m.config, o.weights,
                        Work{"tokens", prefill, positions - std::min(prefill, positions)}, err);
  }
  if (o.report.empty()) {
    return;
  }
  json j = run_report(o, m, *b.backend, r, steps);
  add_rtl_sections(j, b.session.get(), cycles, stopped);
  write_json(o.report, j);
}

int cmd_run(const RunOptions& o, std::ostream& out, std::ostream& err, const RtlFactory& rtl) {
  check_run_outputs(o);
  check_run_usage(o, bool(rtl));
  const bool is_float = o.model.backend == "float";
  // The online Softmax's lane order is the hardware's: cpu takes the lanes of --config too.
  const hw::HwConfig* hw_cfg = &config_arg(o.rtl.config);
  const kernels::SoftmaxOptions softmax{o.softmax == "online" ? kernels::SoftmaxMode::kOnline
                                                              : kernels::SoftmaxMode::kThreePass,
                                        hw_cfg->lanes};
  const LoadedModel m = load(o.model, is_float, !is_float, err, nullptr, &o.prompt);
  run_self_check(o, m, err);
  RunBackend b;
  if (o.model.backend == "rtl" || o.model.backend == "model") {
    start_session(o, m, *hw_cfg, softmax.mode, o.model.backend == "model" ? model_factory() : rtl,
                  b, err);
  } else {
    b.owned = make_backend(o.model.backend, m, softmax);
    b.backend = b.owned.get();
  }
  GenerateOptions g{o.prompt, clamp_steps(o.steps, m.config.seq_len,
                                          [&](std::string_view msg) { fmt::print(err, "{}\n", msg); }),
                    o.temperature, o.top_p, o.seed, o.prefill == "on"};
  g.notice = [&](std::string_view msg) { fmt::print(err, "{}\n", msg); };
  GenerateResult r;
  std::string stopped;  // the watchdog's message when --max-cycles stopped the run
  std::string shown;    // the text printed so far
  try {
    generate_into(r, *b.backend, *m.tokenizer, g, [&](std::string_view piece) {
      out << piece;
      out.flush();
      shown += piece;
    });
  } catch (const std::runtime_error& e) {
    if (!b.session || !b.session->absorb_partial_run(e)) {
      // The prompt against the model's context, its tokenizer, or (float) an overflow.
      throw std::runtime_error(fmt::format("{}: {}", model_name(o.model), e.what()));
    }
    stopped = e.what();
    r.text = shown;
    out << '\n';
    fmt::print(err,
               "partial run: {}; {} position(s) completed; the tables below cover the run until "
               "the stop\n",
               stopped, r.steps);
  }
  if (stopped.empty()) {
    print_timing(err, *b.backend, r);
  }
  print_split_notice(err, b, r);
  write_run_outputs(o, m, b, r, g.steps, stopped, err);
  if (!stopped.empty()) {
    throw std::runtime_error(fmt::format("{}: {}{}", model_name(o.model), stopped,
                                         o.report.empty() ? "" : " (partial report written)"));
  }
  return 0;
}

const CLI::Validator kFinite(
    [](std::string& s) {
      char* end = nullptr;
      const double v = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size()) {
        return std::string("must be a number");
      }
      return std::isfinite(v) ? std::string() : std::string("must be finite");
    },
    "FINITE");

const CLI::Validator kNonzeroSeed(
    [](std::string& s) {
      const bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
      const bool too_big = s.size() > 20 || (s.size() == 20 && s > "18446744073709551615");
      if (!digits || too_big) {
        return std::string("must be an integer in 1..2^64-1");
      }
      return std::stoull(s) == 0 ? std::string("must be non-zero (xorshift state 0 is stuck)")
                                 : std::string();
    },
    "SEED");


void add_generation_options(CLI::App* cmd, RunOptions& o) {
  cmd->add_option("--prompt,-i", o.prompt, "prompt text (default: empty)");
  cmd->add_option("--steps,-n", o.steps,
                  "positions including the prompt; 0 or > seq_len means seq_len")
      ->transform(signed_decimal_in(std::numeric_limits<int>::min(),
                                    std::numeric_limits<int>::max()))
      ->capture_default_str();
  cmd->add_option("--temperature,-t", o.temperature, "0 = greedy")
      ->check(kFinite & CLI::Range(0.0f, 100.0f))
      ->capture_default_str();
  cmd->add_option("--top-p,-p", o.top_p, "nucleus sampling threshold")
      ->check(kFinite & CLI::Range(0.0f, 1.0f))
      ->capture_default_str();
  cmd->add_option("--seed,-s", o.seed, "RNG seed, non-zero")
      ->transform(decimal_in(0, std::numeric_limits<std::uint64_t>::max()))
      ->check(kNonzeroSeed)
      ->capture_default_str();
}

void add_hardware_options(CLI::App* cmd, RunOptions& o) {
  cmd->add_option("--backend,-b", o.model.backend,
                  "float | cpu | rtl (the simulated accelerator) | model (its cycle model)")
      ->check(CLI::IsMember({"float", "cpu", "rtl", "model"}))
      ->capture_default_str();
  cmd->add_option("--config", o.rtl.config,
                  "rtl: hardware configuration: tiny, small, base, RxC:lL[:memory=depth]... "
                  "(e.g. 4x4:l4; Verilated on first use and cached) or FILE.json; cpu: the "
                  "compiler's tiling, and the lanes whose order --softmax online follows")
      ->check(config_validator())
      ->capture_default_str();
  cmd->add_option("--trace", o.rtl.trace_path, "rtl: write an FST waveform here");
  cmd->add_option("--trace-scope", o.rtl.trace_scope,
                  "with --trace: only this unit's signals (controller, dma, matmul, vector, "
                  "softmax, layernorm, rmsnorm, batchnorm, gelu, silu, rope, eltwise, attn, "
                  "counters, memories); its model is Verilated on first use and cached")
      ->check(CLI::IsMember(std::vector<std::string>(kTraceScopeUnits.begin(),
                                                     kTraceScopeUnits.end())));
  cmd->add_option("--trace-window", o.trace_window,
                  "with --trace: only cycles START <= c < END of the simulation clock "
                  "(START:END; the waveform's time divided by the clock period)");
  cmd->add_option("--max-cycles", o.rtl.max_cycles, "rtl: watchdog, cycles per program (0 = none)")
      ->transform(cycles_validator());
  add_memory_timing_options(cmd, o.rtl);
  add_progress_options(cmd, o.rtl, o.quiet);
  cmd->add_option("--prefill", o.prefill,
                  "on: the prompt in one pass (every matmul on all its rows), then token by token; "
                  "off: every position alone, as run.c")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  cmd->add_option("--softmax", o.softmax,
                  "3pass | online (max and sum in one pass, then normalise: 2 passes per "
                  "row; cpu and rtl)")
      ->check(CLI::IsMember({"3pass", "online"}))
      ->capture_default_str();
  cmd->add_option("--weights", o.weights,
                  "rtl: resident (every weight tile loaded once into the weight scratchpad), "
                  "streamed (DMA'd by every MATMUL), auto (resident when they fit)")
      ->check(CLI::IsMember({"auto", "resident", "streamed"}))
      ->capture_default_str();
  cmd->add_option("--attention", o.attention,
                  "rtl: where q k^T and p v run: array (both as MATMUL_ACT on the systolic "
                  "array), scores (q k^T on the array, p v on the vector unit), vector "
                  "(ATTN_SCORE, ATTN_VALUE), auto (per pass of two or more rows, whichever "
                  "the units' closed forms say is faster); a pass whose operands do not fit "
                  "the array's memories uses the vector unit")
      ->check(CLI::IsMember({"auto", "array", "scores", "vector"}))
      ->capture_default_str();
}

}  // namespace

Command add_run_command(CLI::App& app, const RtlFactory& rtl) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "generate text (run.c semantics)");
  add_model_options(cmd, o->model);
  add_generation_options(cmd, *o);
  add_hardware_options(cmd, *o);
  cmd->add_option("--report", o->report, "write a JSON report here");
  return {[cmd] { return bool(*cmd); },
          [o, cmd, rtl](std::ostream& out, std::ostream& err) {
            o->config_given = cmd->count("--config") > 0;
            check_memory_timing_usage(*cmd, o->model.backend);
            parse_trace_options(*o);
            apply_progress_options(o->rtl, o->quiet, err);
            return cmd_run(*o, out, err, rtl);
          }};
}

}  // namespace passim::app

// SPDX-License-Identifier: Apache-2.0
// What the `passim` commands share: options, loading, output paths and JSON reports.
#include "options.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <new>

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "default_model.hpp"
#include "passim/eval/generate.hpp"
#include "passim/io/file.hpp"
#include "passim/io/psm.hpp"
#include "passim/model/float_backend.hpp"
#include "passim/quant/cpu_backend.hpp"

namespace passim::app {

namespace fs = std::filesystem;
using nlohmann::json;

std::string model_name(const ModelOptions& o) {
  return o.model.empty() ? std::string(kDefaultModelName) : o.model;
}

void add_model_options(CLI::App* cmd, ModelOptions& o) {
  cmd->add_option("--model,-m", o.model,
                  "llama2.c checkpoint (.bin), GGUF file (llama or passim-gpt, F32/F16) or "
                  "passim model (.psm) (default: the built-in LayerNorm character GPT)");
  cmd->add_option("--tokenizer,-z", o.tokenizer,
                  "llama2.c tokenizer, or a GGUF file to take the tokenizer from (default: a "
                  "GGUF model's own, else tokenizer.bin or tok512.bin next to the model)");
  cmd->add_option("--calib-text", o.calib_text,
                  "text for activation calibration when quantising a .bin or GGUF model "
                  "(default: the model's own generated text)");
  cmd->add_option("--batchnorm", o.batchnorm,
                  "BatchNorm models: unfused (a one-pass affine op) or folded into the next "
                  "matmul's weights and bias (no pass); default: a .psm's own, else unfused")
      ->check(CLI::IsMember({"unfused", "folded"}));
}

void add_text_options(CLI::App* cmd, TextOptions& t) {
  cmd->add_option("--text", t.path,
                  "text file; llama models: documents split on <|endoftext|>; character "
                  "models: one stream cut into seq_len windows")
      ->required();
  cmd->add_option("--split", t.split,
                  "character models: train (first 90 % of the characters), val (last 10 %) "
                  "or all")
      ->check(CLI::IsMember({"train", "val", "all"}))
      ->capture_default_str();
  cmd->add_option("--max-windows", t.max_windows,
                  "character models: evaluate at most this many windows (0 = all)")
      ->transform(decimal_in(0, std::uint64_t{1} << 40))
      ->capture_default_str();
}

namespace {

/// Refuses the character-model text options for a model with a BPE (llama) tokenizer.
void check_text_options(const Tokenizer& tok, const TextOptions& t, const std::string& model) {
  if (!tok.is_char_level() && (t.split != "all" || t.max_windows != 0)) {
    throw UsageError(fmt::format(
        "{}: only for character-level models; {} is a llama model (its text is split into "
        "documents)", t.split != "all" ? "--split " + t.split : std::string("--max-windows"),
        model));
  }
}

/// Options of the integer backends that do not apply to the float one, and a missing or
/// doubled model: usage errors, before anything is read.
void check_model_usage(const ModelOptions& o, bool need_quant, bool builtin) {
  if (o.model.empty() && !builtin) {
    throw UsageError(
        "--model: required (this passim was built without its default model; give a llama2.c "
        ".bin, a GGUF file or a passim .psm file)");
  }
  if (o.model.empty() && !o.tokenizer.empty()) {
    throw UsageError("--tokenizer: the built-in model has its own; give --model too");
  }
  if (!need_quant && !o.calib_text.empty()) {
    throw UsageError(
        "--calib-text: only used when quantising a float model (backends cpu and rtl), found "
        "--backend float");
  }
  if (!need_quant && !o.batchnorm.empty()) {
    throw UsageError(fmt::format(
        "--batchnorm {}: only for the integer backends (cpu, rtl); the float backend runs the "
        "model's BatchNorm as trained", o.batchnorm));
  }
}

/// --batchnorm against the model: a folded BatchNorm needs one, and a .psm keeps the mode it
/// was quantised with.
void check_batchnorm(const ModelOptions& o, const LoadedModel& m) {
  const bool folded = o.batchnorm == "folded";
  if (folded && m.config.norm != NormKind::kBatch) {
    throw UsageError(fmt::format("--batchnorm folded: {} has no BatchNorm (its norm is {})",
                                 model_name(o), norm_name(m.config.norm)));
  }
  if (m.quant_model && m.config.norm == NormKind::kBatch &&
      folded != (m.quant_model->batchnorm == BatchNormMode::kFolded)) {
    throw std::runtime_error(fmt::format(
        "--batchnorm {}: {} was quantised with BatchNorm {}; quantise the float model again "
        "with --batchnorm {}", o.batchnorm, o.model,
        m.quant_model->batchnorm == BatchNormMode::kFolded ? "folded" : "unfused", o.batchnorm));
  }
}

/// A prompt too long for the model's context, refused before minutes of calibration: the
/// error names the model.
void check_prompt(const ModelOptions& o, const LoadedModel& m, const std::string* prompt) {
  if (prompt == nullptr) {
    return;
  }
  try {
    (void)encode_prompt(*m.tokenizer, *prompt, m.config.seq_len);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(fmt::format("{}: {}", model_name(o), e.what()));
  }
}

}  // namespace

LoadedModel load(const ModelOptions& o, bool need_float, bool need_quant, std::ostream& err,
                 const TextOptions* text, const std::string* prompt) {
  const auto builtin = default_model_bytes();
  check_model_usage(o, need_quant, !builtin.empty());
  if (!need_float && !o.calib_text.empty() && !o.model.empty() && is_psm_file(o.model)) {
    throw UsageError(fmt::format(
        "--calib-text: {} is already quantised; calibration only applies to a float model",
        o.model));
  }
  LoadedModel m = read_model({o.model, o.tokenizer, builtin, kDefaultModelName, need_float});
  if (text != nullptr) {
    check_text_options(*m.tokenizer, *text, model_name(o));
  }
  if (!o.batchnorm.empty() && o.batchnorm != "unfused" && o.batchnorm != "folded") {
    throw std::runtime_error(
        fmt::format("--batchnorm: expected unfused or folded, found {}", o.batchnorm));
  }
  if (o.batchnorm.empty() && m.quant_model) {  // a .psm says how it was quantised
    check_prompt(o, m, prompt);
    return m;
  }
  check_batchnorm(o, m);
  check_prompt(o, m, prompt);
  if (need_quant && !m.quant_model) {
    quantise_in_memory(m, o.calib_text,
                       o.batchnorm == "folded" ? BatchNormMode::kFolded : BatchNormMode::kUnfused,
                       [&](std::string_view line) { fmt::print(err, "{}\n", line); });
  }
  return m;
}

std::unique_ptr<Backend> make_backend(const std::string& name, const LoadedModel& m,
                                      kernels::SoftmaxOptions softmax) {
  if (name == "float") {
    return std::make_unique<FloatBackend>(*m.float_model);
  }
  return std::make_unique<CpuBackend>(*m.quant_model, softmax);
}

PerplexityResult evaluate_text(Backend& backend, const Tokenizer& tok, const TextOptions& t,
                               const std::string& model) {
  const auto with_context = [&](const auto& evaluate) {
    try {
      return evaluate();
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(fmt::format("{} (model {}): {}", t.path, model, e.what()));
    }
  };
  const auto reading = [&](const auto& read) {
    try {
      return read();
    } catch (const std::bad_alloc&) {
      throw std::runtime_error(fmt::format("out of memory while reading the text {}", t.path));
    }
  };
  if (!tok.is_char_level()) {
    const auto docs = reading([&] { return read_documents(t.path); });
    return with_context([&] { return perplexity(backend, tok, docs); });
  }
  const auto bytes = reading([&] { return read_file(t.path, std::uint64_t{1} << 30); });
  return with_context([&] {
    const std::string text = text_split(
        {reinterpret_cast<const char*>(bytes.data()), bytes.size()}, t.split);
    return perplexity_windows(backend, tok.encode(text, false, false), t.max_windows);
  });
}

void check_output_path(const std::string& path, const char* option,
                       std::initializer_list<NamedInput> inputs, OutputKind kind) {
  if (path.empty()) {
    return;
  }
  std::error_code ec;
  for (const NamedInput& in : inputs) {
    if (!in.path.empty() && fs::exists(path, ec) && fs::exists(in.path, ec) &&
        fs::equivalent(path, in.path, ec)) {
      throw std::runtime_error(
          fmt::format("{} {}: is the {}; not overwritten", option, path, in.what));
    }
  }
  const fs::path parent = fs::absolute(path).parent_path();
  if (!fs::is_directory(parent, ec)) {
    throw std::runtime_error(fmt::format("{} {}: folder {} does not exist", option, path,
                                         parent.string()));
  }
  if (fs::is_directory(path, ec)) {
    throw std::runtime_error(fmt::format("{} {}: is a folder", option, path));
  }
  const bool exists = fs::exists(path, ec);
  if (kind == OutputKind::kReplaced && exists && !fs::is_regular_file(path, ec)) {
    throw std::runtime_error(fmt::format(
        "{} {}: expected a regular file, found a device, pipe or socket; not replaced", option,
        path));
  }
  // The file (if it exists) or its folder must be writable; checked now, not after the run.
  const std::string target = exists ? path : parent.string();
  if (::access(target.c_str(), W_OK) != 0) {
    throw std::runtime_error(fmt::format("{} {}: cannot write {}: {}", option, path, target,
                                         std::strerror(errno)));
  }
}

void check_text_report_path(const std::string& report, const ModelOptions& m,
                            const TextOptions& t) {
  const std::string tokenizer = tokenizer_path(m.model, m.tokenizer);
  check_output_path(report, "--report",
                    {{"input model", m.model},
                     {"tokenizer", tokenizer},
                     {"text", t.path},
                     {"calibration text", m.calib_text}});
}

namespace {

/// True when `path` names the file open on descriptor `fd` (a `/dev/stdout` that the shell
/// redirected to a file, say): reopening it would truncate what the run printed there.
bool same_file_as(const std::string& path, int fd) {
  struct stat a {};
  struct stat b {};
  return ::stat(path.c_str(), &a) == 0 && ::fstat(fd, &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino && S_ISREG(a.st_mode);
}

}  // namespace

void write_json(const std::string& path, const json& j) {
  // Text that is not valid UTF-8 (a raw-byte prompt) is written with U+FFFD replacements.
  const std::string text = j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  errno = 0;
  for (const auto& [fd, stream] : {std::pair<int, std::ostream*>{1, &std::cout},
                                   std::pair<int, std::ostream*>{2, &std::cerr}}) {
    if (same_file_as(path, fd)) {  // append to the stream instead of truncating its file
      *stream << text << std::flush;
      if (!*stream) {
        throw std::runtime_error(fmt::format("{}: cannot write the report", path));
      }
      return;
    }
  }
  std::ofstream f(path);
  if (f) {
    f << text;
    f.flush();  // a full disk shows here, not at the implicit close
  }
  if (!f) {
    throw std::runtime_error(
        fmt::format("{}: cannot write the report: {}", path, std::strerror(errno)));
  }
}

json config_json(const ModelConfig& c) {
  return {{"arch", arch_name(c.arch)},
          {"norm", norm_name(c.norm)},
          {"dim", c.dim},
          {"hidden_dim", c.hidden_dim},
          {"n_layers", c.n_layers},
          {"n_heads", c.n_heads},
          {"n_kv_heads", c.n_kv_heads},
          {"vocab_size", c.vocab_size},
          {"seq_len", c.seq_len},
          {"shared_classifier", c.shared_classifier}};
}

CLI::Validator decimal_in(std::uint64_t lo, std::uint64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) {
        const std::string range = fmt::format("must be a decimal integer in {}..{}", lo, hi);
        if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) {
          return range;
        }
        const std::size_t first = std::min(s.find_first_not_of('0'), s.size() - 1);
        s = s.substr(first);  // "010" is ten, not octal eight
        if (s.size() > 20 || (s.size() == 20 && s > "18446744073709551615")) {
          return range;
        }
        const std::uint64_t v = std::stoull(s);
        return v < lo || v > hi ? range : std::string();
      },
      fmt::format("INT in [{} - {}]", lo, hi));
}

CLI::Validator signed_decimal_in(std::int64_t lo, std::int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) {
        const std::string range = fmt::format("must be a decimal integer in {}..{}", lo, hi);
        const bool negative = !s.empty() && s[0] == '-';
        std::string digits = negative ? s.substr(1) : s;
        if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
          return range;
        }
        digits = digits.substr(std::min(digits.find_first_not_of('0'), digits.size() - 1));
        if (digits.size() > 19) {
          return range;
        }
        const std::uint64_t mag = std::stoull(digits);  // < 10^19 < 2^64
        constexpr std::uint64_t kMinMag = std::uint64_t{1} << 63;  // |INT64_MIN|
        if (mag > (negative ? kMinMag : kMinMag - 1)) {
          return range;
        }
        const std::int64_t v = !negative      ? std::int64_t(mag)
                               : mag == kMinMag ? std::numeric_limits<std::int64_t>::min()
                                                : -std::int64_t(mag);
        if (v < lo || v > hi) {
          return range;
        }
        s = (negative && mag != 0 ? "-" : "") + digits;
        return std::string();
      },
      fmt::format("INT in [{} - {}]", lo, hi));
}

CLI::Validator cycles_validator() { return decimal_in(0, 999'999'999'999'999); }

CLI::Validator real_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (s.empty() || s.find_first_not_of("0123456789.eE+-") != std::string::npos ||
            end != s.c_str() + s.size() || !std::isfinite(v)) {
          return fmt::format("expected a finite decimal number, found {}", s);
        }
        return v >= lo && v <= hi ? std::string()
                                  : fmt::format("expected {} to {}, found {}", lo, hi, s);
      },
      fmt::format("NUMBER in [{}, {}]", lo, hi));
}

namespace {

constexpr std::array<const char*, 4> kTimingOptions = {"--clock-mhz", "--dram-latency",
                                                       "--dram-bandwidth", "--progress"};

/// The default of --progress: about every 10 s at the simulator's 1-3 M cycles per second.
constexpr std::uint64_t kProgressCycles = 20'000'000;

}  // namespace

void add_memory_timing_options(CLI::App* cmd, RtlOptions& o) {
  cmd->add_option(kTimingOptions[0], o.clock_mhz,
                  "rtl: the accelerator's clock in MHz (the DRAM's latency and bandwidth stay in "
                  "ns, so a faster clock waits more cycles for memory)")
      ->check(real_in(0.001, 10'000))->capture_default_str();
  cmd->add_option(kTimingOptions[1], o.dram_latency_ns,
                  "rtl: DRAM latency in ns, from the end of a transfer to its response "
                  "(at most 100 us: a run at that latency takes minutes)")
      ->check(real_in(0, 1e5))->capture_default_str();
  cmd->add_option(kTimingOptions[2], o.dram_bytes_per_ns,
                  "rtl: DRAM bandwidth in bytes per ns (= GB/s); transfers are serialised")
      ->check(real_in(0.001, 1e6))->capture_default_str();
}

void add_progress_options(CLI::App* cmd, RtlOptions& o, bool& quiet) {
  o.progress_cycles = kProgressCycles;
  cmd->add_option("--progress", o.progress_cycles,
                  "rtl: a progress line on stderr every this many simulated cycles (0 = none)")
      ->transform(decimal_in(0, 999'999'999'999'999))->capture_default_str();
  cmd->add_flag("--quiet", quiet, "no progress line");
}

void apply_progress_options(RtlOptions& o, bool quiet, std::ostream& err) {
  if (quiet) {
    o.progress_cycles = 0;
  }
  o.progress_out = &err;
}

void check_memory_timing_usage(const CLI::App& cmd, const std::string& backend) {
  for (const char* name : kTimingOptions) {
    if (backend != "rtl" && backend != "model" && cmd.count(name) > 0) {
      throw UsageError(fmt::format("{}: only for --backend rtl (the simulator) or model (the "
                                   "cycle model), found --backend {}", name, backend));
    }
  }
}

}  // namespace passim::app

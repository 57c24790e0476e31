// SPDX-License-Identifier: Apache-2.0
/// \file What the `passim` commands share: the model and text options, loading a model for a
/// command, output paths that are checked before any work, and JSON reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "passim/eval/load.hpp"
#include "passim/eval/perplexity.hpp"
#include "passim/kernels/softmax.hpp"
#include "passim/model/backend.hpp"
#include "rtl_session.hpp"

namespace passim::app {

inline constexpr int kReportVersion = 1;
inline constexpr const char* kVersion = "0.1.0";

/// Options that do not fit together, or do not apply to the backend or to the kind of model
/// given: reported like every other error, but with exit code 2, as CLI11's own usage errors.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Options shared by the commands that load a model.
struct ModelOptions {
  std::string model;  ///< empty: the built-in model
  std::string tokenizer;
  std::string calib_text;
  std::string backend = "cpu";
  std::string batchnorm;  ///< BatchNorm models: unfused | folded; empty: the .psm's, else unfused
};

/// The text a perplexity-style command evaluates.
struct TextOptions {
  std::string path;
  std::string split = "all";    ///< character models: train | val | all
  std::size_t max_windows = 0;  ///< character models: at most this many windows (0 = all)
};

/// The model's name in messages: its path, or the built-in model's name.
[[nodiscard]] std::string model_name(const ModelOptions& o);

void add_model_options(CLI::App* cmd, ModelOptions& o);
void add_text_options(CLI::App* cmd, TextOptions& t);

/// Loads the model and its tokenizer for a command, and quantises a float model when
/// `need_quant`. Options that do not apply throw UsageError before anything is read; `text`
/// (a command that evaluates a text) is checked against the tokenizer, and `prompt` (run)
/// against the model's context (std::runtime_error naming the model), before any quantising.
/// Notices go to `err`.
[[nodiscard]] LoadedModel load(const ModelOptions& o, bool need_float, bool need_quant,
                               std::ostream& err, const TextOptions* text = nullptr,
                               const std::string* prompt = nullptr);

/// The float or cpu backend of a loaded model.
[[nodiscard]] std::unique_ptr<Backend> make_backend(const std::string& name,
                                                    const LoadedModel& m,
                                                    kernels::SoftmaxOptions softmax = {});

/// Perplexity of the text: documents (llama) or seq_len windows of the split (characters).
/// Errors name the text file once, with the model `model`.
[[nodiscard]] PerplexityResult evaluate_text(Backend& backend, const Tokenizer& tok,
                                             const TextOptions& t, const std::string& model);

/// A file the command reads, named for error messages ("input model", "tokenizer", ...).
struct NamedInput {
  const char* what;
  const std::string& path;
};

/// How an output file is written: in place (a report, which may also go to /dev/stdout) or by
/// replacing whatever is there (a model or a waveform), which only a regular file may be.
enum class OutputKind { kInPlace, kReplaced };

/// Fails early (before any work) when an output file could not be written there, or when it
/// is one of the command's inputs (which would be overwritten).
void check_output_path(const std::string& path, const char* option,
                       std::initializer_list<NamedInput> inputs,
                       OutputKind kind = OutputKind::kInPlace);

/// check_output_path for the --report of a command that reads a model and a text
/// (perplexity, accuracy): none of the files read (the model, its tokenizer, the text, the
/// calibration text) is overwritten.
void check_text_report_path(const std::string& report, const ModelOptions& m,
                            const TextOptions& t);

/// Writes a report (invalid UTF-8 becomes U+FFFD). Throws naming the file when it fails.
void write_json(const std::string& path, const nlohmann::json& j);

/// An option's whole number, written in decimal digits only, in [lo, hi]. CLI11 would read
/// "010" as octal and "0x10" as hex; this refuses signs and prefixes and strips leading zeros,
/// and names the range when the value is outside it.
[[nodiscard]] CLI::Validator decimal_in(std::uint64_t lo, std::uint64_t hi);

/// As decimal_in, with an optional leading '-': a signed whole number in [lo, hi] ("-010" is
/// minus ten).
[[nodiscard]] CLI::Validator signed_decimal_in(std::int64_t lo, std::int64_t hi);

/// A finite decimal number (digits, '.', an exponent; no hex, no "inf") in [lo, hi], the
/// range named in the error.
[[nodiscard]] CLI::Validator real_in(double lo, double hi);

/// `--max-cycles`: a watchdog in cycles per program, 0 (none) up to 10^15 - 1.
[[nodiscard]] CLI::Validator cycles_validator();

/// `--clock-mhz`, `--dram-latency` (ns) and `--dram-bandwidth` (bytes per ns, = GB/s): the
/// SystemC memory's timing on the rtl backend, into `o`, within sim::SimOptions' ranges.
void add_memory_timing_options(CLI::App* cmd, RtlOptions& o);

/// `--progress CYCLES` (a progress line on stderr every CYCLES simulated cycles, rtl only)
/// and `--quiet` (none), into `o.progress_cycles`; apply_progress_options() sets them.
void add_progress_options(CLI::App* cmd, RtlOptions& o, bool& quiet);

/// After parsing: `--quiet` turns the progress line off, and rtl sessions print it on `err`.
void apply_progress_options(RtlOptions& o, bool quiet, std::ostream& err);

/// Throws UsageError naming the first of add_memory_timing_options()'s options (or
/// --progress) given on `cmd`'s command line when `backend` is not rtl.
void check_memory_timing_usage(const CLI::App& cmd, const std::string& backend);

/// The model's shape as reports give it.
[[nodiscard]] nlohmann::json config_json(const ModelConfig& c);

}  // namespace passim::app

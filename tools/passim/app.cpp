// SPDX-License-Identifier: Apache-2.0
// `passim run | quantize | perplexity`: argument parsing (CLI11), model loading, reports (JSON).
#include "app.hpp"
#include "default_model.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "passim/compiler/compiler.hpp"
#include "passim/eval/calibrate.hpp"
#include "passim/eval/generate.hpp"
#include "passim/eval/perplexity.hpp"
#include "passim/io/file.hpp"
#include "passim/io/gguf.hpp"
#include "passim/io/gguf_model.hpp"
#include "passim/io/llama2c.hpp"
#include "passim/io/psm.hpp"
#include "passim/io/tokenizer.hpp"
#include "passim/kernels/softmax.hpp"
#include "passim/model/activations.hpp"
#include "passim/model/float_backend.hpp"
#include "passim/model/weights.hpp"
#include "passim/quant/calibration.hpp"
#include "passim/quant/cpu_backend.hpp"
#include "passim/quant/quant_model.hpp"
#include "passim/quant/quantize.hpp"

namespace passim::app {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

inline constexpr int kReportVersion = 1;
inline constexpr const char* kVersion = "0.1.0";
inline constexpr int kDefaultCalibPositions = 128;

/// Options that do not fit together, or do not apply to the backend or to the kind of model
/// given: reported like every other error, but with exit code 2, as CLI11's own usage errors.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Options shared by the subcommands that load a model.
struct ModelOptions {
  std::string model;  ///< empty: the built-in model
  std::string tokenizer;
  std::string calib_text;
  std::string backend = "cpu";
  std::string batchnorm;  ///< BatchNorm models: unfused | folded; empty: the .psm's, else unfused
};

/// The model's name in messages: its path, or the built-in model's name.
std::string model_name(const ModelOptions& o) {
  return o.model.empty() ? std::string(kDefaultModelName) : o.model;
}

/// The text a perplexity-style command evaluates.
struct TextOptions {
  std::string path;
  std::string split = "all";    ///< character models: train | val | all
  std::size_t max_windows = 0;  ///< character models: at most this many windows (0 = all)
};

/// Refuses the character-model text options for a model with a BPE (llama) tokenizer.
void check_text_options(const Tokenizer& tok, const TextOptions& t, const std::string& model) {
  if (!tok.is_char_level() && (t.split != "all" || t.max_windows != 0)) {
    throw UsageError(fmt::format(
        "{}: only for character-level models; {} is a llama model (its text is split into "
        "documents)", t.split != "all" ? "--split " + t.split : std::string("--max-windows"),
        model));
  }
}

/// A loaded model: the float checkpoint and/or the quantised model, plus the tokenizer.
struct Loaded {
  std::optional<FloatModel> float_model;
  std::optional<QuantModel> quant_model;
  std::optional<Tokenizer> tokenizer;
  std::string model_sha256;
  ModelConfig config;
};

std::string find_tokenizer(const ModelOptions& o) {
  if (!o.tokenizer.empty()) {
    return o.tokenizer;
  }
  const fs::path dir = fs::path(o.model).parent_path();
  for (const char* name : {"tokenizer.bin", "tok512.bin"}) {
    if (fs::exists(dir / name)) {
      return (dir / name).string();
    }
  }
  throw std::runtime_error(fmt::format(
      "--tokenizer: not given, and neither tokenizer.bin nor tok512.bin is next to {}",
      o.model));
}

/// A llama2.c tokenizer file, or the tokenizer in a GGUF file's metadata (by content).
Tokenizer load_tokenizer(const std::string& path, int vocab_size) {
  if (is_gguf_file(path)) {
    return tokenizer_from_gguf(GgufFile::read(path), vocab_size);
  }
  return Tokenizer::load(path, vocab_size);
}

std::vector<std::string> read_documents(const std::string& path) {
  const auto bytes = read_file(path, std::uint64_t{1} << 30);
  auto docs = split_documents({reinterpret_cast<const char*>(bytes.data()), bytes.size()});
  if (docs.empty()) {
    throw std::runtime_error(fmt::format("{}: no non-empty document in the text", path));
  }
  return docs;
}

/// Calibration documents: the given text, or the float model's own continuations.
Calibration run_calibration(const FloatModel& fm, const Tokenizer& tok, const std::string& text,
                            std::ostream& err) {
  std::vector<std::vector<int>> ids;
  std::string source;
  if (!text.empty()) {
    const auto docs = read_documents(text);
    for (std::size_t d = 0; d < docs.size(); ++d) {
      // Only the first seq_len tokens are used: encode only the bytes that can hold them
      // (cut at a character boundary), not a whole long text.
      std::string_view doc = docs[d];
      const std::size_t keep = std::size_t(fm.config.seq_len) * tok.max_piece_bytes();
      if (doc.size() > keep) {
        std::size_t cut = keep;
        while (cut > 0 && (static_cast<unsigned char>(doc[cut]) & 0xC0) == 0x80) {
          --cut;
        }
        doc = doc.substr(0, cut);
      }
      std::vector<int> t;
      try {
        t = tok.encode(doc, true, false);
      } catch (const std::runtime_error& e) {
        throw std::runtime_error(fmt::format("--calib-text {}: document {}: {}", text, d, e.what()));
      }
      if (t.size() > std::size_t(fm.config.seq_len)) {
        fmt::print(err, "notice: {}: calibration document {} has {} tokens; using the first {}\n",
                   text, d, t.size(), fm.config.seq_len);
        t.resize(std::size_t(fm.config.seq_len));
      }
      ids.push_back(std::move(t));
    }
    source = fmt::format("text {} ({} documents)", fs::path(text).filename().string(), ids.size());
  } else {
    ids = self_generated_calibration(fm, kDefaultCalibPositions);
    source = "self-generated text (greedy + 3 sampled runs)";
  }
  Calibration c = calibrate(fm, ids);
  c.description = fmt::format("{}, {} positions", source, c.positions);
  fmt::print(err, "calibration: {}\n", c.description);
  if (c.positions < kDefaultCalibPositions) {
    fmt::print(err, "warning: calibration saw only {} positions; activation scales may clip\n",
               c.positions);
  }
  return c;
}

/// The steps of `load()`; `doing` says what is being done, for an out-of-memory message.
Loaded load_steps(const ModelOptions& o, bool need_float, bool need_quant, std::ostream& err,
                  const TextOptions* text, std::string& doing) {
  Loaded L;
  const auto builtin = default_model_bytes();
  if (o.model.empty() && builtin.empty()) {
    throw UsageError(
        "--model: required (this passim was built without its default model; give a llama2.c "
        ".bin, a GGUF file or a passim .psm file)");
  }
  if (o.model.empty() && !o.tokenizer.empty()) {
    throw UsageError("--tokenizer: the built-in model has its own; give --model too");
  }
  // Options of the integer backends; the float backend runs the float weights as they are.
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
  doing = fmt::format("loading the model {}", model_name(o));
  // The format is told by the file's first bytes, never by its name.
  if (o.model.empty() || is_gguf_file(o.model)) {
    const GgufFile file =
        o.model.empty()
            ? GgufFile::parse(std::vector<std::uint8_t>(builtin.begin(), builtin.end()),
                              kDefaultModelName)
            : GgufFile::read(o.model);
    L.float_model = float_model_from_gguf(file);
    L.config = L.float_model->config;
    L.model_sha256 = L.float_model->sha256;
    if (o.tokenizer.empty()) {
      L.tokenizer = tokenizer_from_gguf(file, L.config.vocab_size);
    }
  } else if (is_psm_file(o.model)) {
    if (need_float) {
      throw std::runtime_error(fmt::format(
          "{}: backend float needs a float model (llama2.c .bin or GGUF), found a quantised "
          ".psm model", o.model));
    }
    if (!o.calib_text.empty()) {
      throw UsageError(fmt::format(
          "--calib-text: {} is already quantised; calibration only applies to a float model",
          o.model));
    }
    L.quant_model = load_psm(o.model);
    L.config = L.quant_model->config;
    L.model_sha256 = sha256_hex(read_file(o.model, std::uint64_t{1} << 34));
    if (!L.quant_model->char_vocab.empty() && o.tokenizer.empty()) {
      L.tokenizer = Tokenizer::char_level(L.quant_model->char_vocab, L.config.bos_token, o.model);
    }
  } else {
    // Neither magic: a llama2.c checkpoint, unless a magic is there with a byte or two
    // changed (then say so instead of reporting a bad llama2.c header).
    for (const std::string& why : {psm_magic_near_miss(o.model), gguf_magic_near_miss(o.model)}) {
      if (!why.empty()) {
        throw std::runtime_error(why);
      }
    }
    L.float_model = load_llama2c(o.model);
    L.config = L.float_model->config;
    L.model_sha256 = L.float_model->sha256;
  }
  if (!L.tokenizer) {
    const std::string path = find_tokenizer(o);
    doing = fmt::format("loading the tokenizer {}", path);
    L.tokenizer = load_tokenizer(path, L.config.vocab_size);
  }
  if (text != nullptr) {
    check_text_options(*L.tokenizer, *text, model_name(o));
  }
  if (!o.batchnorm.empty() && o.batchnorm != "unfused" && o.batchnorm != "folded") {
    throw std::runtime_error(
        fmt::format("--batchnorm: expected unfused or folded, found {}", o.batchnorm));
  }
  if (o.batchnorm.empty() && L.quant_model) {  // a .psm says how it was quantised
    return L;
  }
  const bool folded = o.batchnorm == "folded";
  if (folded && L.config.norm != NormKind::kBatch) {
    throw UsageError(fmt::format("--batchnorm folded: {} has no BatchNorm (its norm is {})",
                                 model_name(o), norm_name(L.config.norm)));
  }
  if (L.quant_model && L.config.norm == NormKind::kBatch &&
      folded != (L.quant_model->batchnorm == BatchNormMode::kFolded)) {
    throw std::runtime_error(fmt::format(
        "--batchnorm {}: {} was quantised with BatchNorm {}; quantise the float model again "
        "with --batchnorm {}", o.batchnorm, o.model,
        L.quant_model->batchnorm == BatchNormMode::kFolded ? "folded" : "unfused", o.batchnorm));
  }
  if (need_quant && !L.quant_model) {
    fmt::print(err, "quantising {} in memory\n", model_name(o));
    doing = fmt::format("quantising the model {}", model_name(o));
    QuantOptions qo;
    qo.batchnorm = folded ? BatchNormMode::kFolded : BatchNormMode::kUnfused;
    try {
      L.quant_model = quantize(*L.float_model, run_calibration(*L.float_model, *L.tokenizer,
                                                               o.calib_text, err), qo);
    } catch (const std::bad_alloc&) {
      throw;  // not the model's fault
    } catch (const std::exception& e) {
      // Weights or activations outside what int8 with int32 requantisation can represent.
      throw std::runtime_error(
          fmt::format("{}: cannot quantise this model: {}", model_name(o), e.what()));
    }
    if (L.tokenizer->is_char_level()) {
      for (int i = 0; i < L.tokenizer->vocab_size(); ++i) {
        L.quant_model->char_vocab.push_back(L.tokenizer->piece(i));
      }
    }
  }
  return L;
}

/// Loads the model and its tokenizer, and quantises it when `need_quant` and it is a float
/// model. `text`: the options of a command that evaluates a text, checked against the
/// tokenizer before any quantising. Running out of memory is reported with what was being
/// loaded.
Loaded load(const ModelOptions& o, bool need_float, bool need_quant, std::ostream& err,
            const TextOptions* text = nullptr) {
  std::string doing = "loading";
  try {
    return load_steps(o, need_float, need_quant, err, text, doing);
  } catch (const std::bad_alloc&) {
    throw std::runtime_error(fmt::format("out of memory while {}", doing));
  }
}

std::unique_ptr<Backend> make_backend(const std::string& name, const Loaded& L,
                                      kernels::SoftmaxOptions softmax = {}) {
  if (name == "float") {
    return std::make_unique<FloatBackend>(*L.float_model);
  }
  return std::make_unique<CpuBackend>(*L.quant_model, softmax);
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
                       OutputKind kind = OutputKind::kInPlace) {
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

void write_json(const std::string& path, const json& j) {
  // Text that is not valid UTF-8 (a raw-byte prompt) is written with U+FFFD replacements.
  const std::string text = j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  errno = 0;
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

// ---- run ------------------------------------------------------------------------------------

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
  bool config_given = false;      ///< --config was on the command line
};

/// "0".."n_layers-1" for the transformer layers, "head" for the final norm and classifier.
std::string layer_label(std::uint32_t layer, const ModelConfig& c) {
  return layer == std::uint32_t(c.n_layers) ? "head" : std::to_string(layer);
}

/// Prints the class table from the counters; returns the JSON totals.
json class_report(const RtlSession& s, std::ostream& err) {
  const auto cnt = s.counters();
  const auto at = [&](hw::Counter k) { return cnt.at(std::size_t(k)); };
  const std::uint64_t total = at(hw::Counter::kTotalCycles);
  const auto pct = [&](std::uint64_t v) { return total ? 100.0 * double(v) / double(total) : 0.0; };
  json j;
  j["total"] = total;
  j["mem_stall"] = at(hw::Counter::kMemStall);
  j["unit_stall"] = at(hw::Counter::kUnitStall);
  j["instructions"] = at(hw::Counter::kInstret);
  j["busy"] = {{"matmul", at(hw::Counter::kBusyMatmul)},
               {"vector", at(hw::Counter::kBusyVector)},
               {"dma", at(hw::Counter::kBusyDma)}};
  fmt::print(err, "\ncycles by op class ({} config, counters read from the RTL)\n", s.hw().name);
  fmt::print(err, "{:<14}{:>14}{:>9}{:>12}\n", "class", "cycles", "%", "passes");
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < kOpClassNames.size(); ++i) {
    const std::uint64_t cyc = cnt.at(std::size_t(hw::Counter::kCyclesMatmul) + i);
    const std::uint64_t passes = cnt.at(std::size_t(hw::Counter::kPassesMatmul) + i);
    sum += cyc;
    j["by_class"][std::string(kOpClassNames[i])] = {{"cycles", cyc}, {"passes", passes}};
    fmt::print(err, "{:<14}{:>14}{:>8.1f}%{:>12}\n", kOpClassNames[i], cyc, pct(cyc), passes);
  }
  fmt::print(err, "{:<14}{:>14}{:>8.1f}%\n", "total", total, 100.0);
  fmt::print(err, "{:<14}{:>14}{:>8.1f}%   (DMA and program fetch waiting on DRAM)\n",
             "memory stall", at(hw::Counter::kMemStall), pct(at(hw::Counter::kMemStall)));
  j["class_totals_sum_to_total"] = sum == total;
  return j;
}

/// True when, per op class, the records' cycles equal `cycles_<class>` (control excepted:
/// no unit runs its cycles) and their passes equal `passes_<class>`.
bool records_match_classes(const std::vector<OpRecord>& recs,
                           const std::vector<std::uint64_t>& cnt) {
  std::array<std::uint64_t, kOpClassNames.size()> cycles{}, passes{};
  for (const OpRecord& r : recs) {
    if (r.op_class >= cycles.size()) {
      return false;
    }
    cycles[r.op_class] += r.cycles;
    passes[r.op_class] += r.passes;
  }
  for (std::size_t i = 0; i < cycles.size(); ++i) {
    const bool control = i == std::size_t(hw::OpClass::kControl);
    if ((!control && cycles[i] != cnt.at(std::size_t(hw::Counter::kCyclesMatmul) + i)) ||
        passes[i] != cnt.at(std::size_t(hw::Counter::kPassesMatmul) + i)) {
      return false;
    }
  }
  return true;
}

/// Prints the record cycles summed by layer (rows) and op class (columns, control has no
/// records).
void print_layer_table(const std::vector<OpRecord>& recs, const ModelConfig& c, std::ostream& err) {
  std::map<std::uint32_t, std::array<std::uint64_t, kOpClassNames.size()>> by_layer;
  for (const OpRecord& r : recs) {
    by_layer[r.layer].at(std::min<std::size_t>(r.op_class, kOpClassNames.size() - 1)) += r.cycles;
  }
  const std::size_t classes = std::size_t(hw::OpClass::kControl);
  fmt::print(err, "\ncycles by layer (sum of the instruction records)\n{:<8}", "layer");
  for (std::size_t i = 0; i < classes; ++i) {
    fmt::print(err, "{:>13}", kOpClassNames[i]);
  }
  fmt::print(err, "\n");
  for (const auto& [layer, cycles] : by_layer) {
    fmt::print(err, "{:<8}", layer_label(layer, c));
    for (std::size_t i = 0; i < classes; ++i) {
      fmt::print(err, "{:>13}", cycles[i]);
    }
    fmt::print(err, "\n");
  }
}

/// Prints the records summed by opcode, most cycles first.
void print_op_table(const std::vector<OpRecord>& recs, std::uint64_t total, std::ostream& err) {
  std::map<hw::Opcode, OpRecord> by_op;
  for (const OpRecord& r : recs) {
    OpRecord& o = by_op[r.op];
    o.op = r.op;
    o.count += r.count;
    o.passes += r.passes;
    o.cycles += r.cycles;
    o.stall_cycles += r.stall_cycles;
    o.macs += r.macs;
  }
  std::vector<OpRecord> rows;
  for (const auto& [op, r] : by_op) {
    rows.push_back(r);
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const OpRecord& a, const OpRecord& b) { return a.cycles > b.cycles; });
  fmt::print(err, "\ncycles by opcode (sum of the instruction records)\n");
  fmt::print(err, "{:<12}{:>9}{:>14}{:>8}{:>11}{:>12}{:>13}\n", "opcode", "count", "cycles", "%",
             "passes", "stall", "MACs");
  for (const OpRecord& r : rows) {
    fmt::print(err, "{:<12}{:>9}{:>14}{:>7.1f}%{:>11}{:>12}{:>13}\n", hw::opcode_name(r.op),
               r.count, r.cycles, total ? 100.0 * double(r.cycles) / double(total) : 0.0, r.passes,
               r.stall_cycles, r.macs);
  }
}

/// The JSON records: one per (layer, opcode, op class, shape), by layer, then in order of
/// first appearance.
json records_json(std::vector<OpRecord> recs, const ModelConfig& c) {
  std::stable_sort(recs.begin(), recs.end(),
                   [](const OpRecord& a, const OpRecord& b) { return a.layer < b.layer; });
  json out = json::array();
  for (const OpRecord& r : recs) {
    json shape = json::object();
    for (const auto& [name, v] : r.shape) {
      shape[std::string(name)] = v;
    }
    out.push_back(
        {{"layer", layer_label(r.layer, c)},
         {"op", std::string(hw::opcode_name(r.op))},
         {"class", r.op_class < kOpClassNames.size() ? std::string(kOpClassNames[r.op_class])
                                                     : std::string("unknown")},
         {"shape", shape},
         {"count", r.count},
         {"passes", r.passes},
         {"cycles", r.cycles},
         {"stall_cycles", r.stall_cycles},
         {"macs", r.macs}});
  }
  return out;
}

/// Prints the cycle tables from the RTL counters and the instruction records, and returns
/// the JSON "cycles" section.
json cycle_report(const RtlSession& s, const ModelConfig& c, std::ostream& err) {
  json j = class_report(s, err);
  const auto recs = s.op_records();
  j["records_sum_to_class_totals"] = records_match_classes(recs, s.counters());
  print_layer_table(recs, c, err);
  print_op_table(recs, j["total"].get<std::uint64_t>(), err);
  j["records"] = records_json(recs, c);
  return j;
}

int cmd_run(const RunOptions& o, std::ostream& out, std::ostream& err, const RtlFactory& rtl) {
  check_output_path(o.report, "--report",
                    {{"input model", o.model.model},
                     {"tokenizer", o.model.tokenizer},
                     {"calibration text", o.model.calib_text}});
  check_output_path(o.rtl.trace_path, "--trace",
                    {{"input model", o.model.model},
                     {"tokenizer", o.model.tokenizer},
                     {"calibration text", o.model.calib_text}},
                    OutputKind::kReplaced);
  if (!o.rtl.trace_path.empty()) {
    // A waveform takes 10-30 MB per position: refuse an almost full file system up front
    // (the FST writer cannot report a full disk once it runs).
    constexpr std::uintmax_t kMinFreeMb = 64;
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
  const bool is_float = o.model.backend == "float";
  const bool is_rtl = o.model.backend == "rtl";
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
  if (is_rtl && !rtl) {
    throw std::runtime_error("--backend rtl: this passim was built without the RTL simulator "
                             "(configure with PASSIM_BUILD_SIM=ON)");
  }
  const bool online = o.softmax == "online";
  if (online && is_float) {
    throw UsageError("--softmax online: only for the integer backends (cpu, rtl); the float "
                     "backend computes Softmax in float");
  }
  // The online Softmax's lane order is the hardware's: cpu takes the lanes of --config too.
  const hw::HwConfig* hw_cfg = hw::find_config(o.rtl.config);
  if (hw_cfg == nullptr) {
    throw std::runtime_error(fmt::format("--config: unknown configuration {}", o.rtl.config));
  }
  const kernels::SoftmaxOptions softmax{
      online ? kernels::SoftmaxMode::kOnline : kernels::SoftmaxMode::kThreePass, hw_cfg->lanes};
  Loaded L = load(o.model, is_float, !is_float, err);
  std::unique_ptr<RtlSession> session;
  std::unique_ptr<Backend> owned;
  std::optional<ModelCompiler> compiled;
  if (is_rtl) {
    // The model is compiled once; the config's vector scratchpad bounds the KV window: say so
    // before simulating.
    compiled.emplace(*L.quant_model, *hw_cfg, CompileOptions{softmax.mode});
    const int window = compiled->max_positions();
    const int wanted = o.steps <= 0 || o.steps > L.config.seq_len ? L.config.seq_len : o.steps;
    if (wanted > window) {
      throw std::runtime_error(fmt::format(
          "--steps {}{}: config {} holds a KV window of {} positions in its vector scratchpad; "
          "use --steps {} or less, or a larger config", o.steps,
          wanted == o.steps ? std::string() : fmt::format(" (the context length, {})", wanted),
          o.rtl.config, window, window));
    }
    RtlOptions ro = o.rtl;
    ro.softmax = softmax.mode;
    session = rtl(*compiled, ro);
  } else {
    owned = make_backend(o.model.backend, L, softmax);
  }
  Backend* backend = is_rtl ? &session->backend() : owned.get();
  GenerateOptions g;
  g.prompt = o.prompt;
  g.steps = clamp_steps(o.steps, L.config.seq_len,
                        [&](std::string_view msg) { fmt::print(err, "{}\n", msg); });
  g.temperature = o.temperature;
  g.top_p = o.top_p;
  g.seed = o.seed;
  GenerateResult r;
  try {
    r = generate(*backend, *L.tokenizer, g, [&](std::string_view piece) {
      out << piece;
      out.flush();
    });
  } catch (const std::runtime_error& e) {
    // The prompt against the model's context, its tokenizer, or (float) an overflow.
    throw std::runtime_error(fmt::format("{}: {}", model_name(o.model), e.what()));
  }
  // As run.c: no tokens/s figure unless more than one position ran (its clock starts after
  // the first).
  const bool timed = r.steps > 1;
  fmt::print(err, "backend {}: {} position{} in {:.3f} s{}\n", backend->name(), r.steps,
             r.steps == 1 ? "" : "s", r.seconds,
             timed ? fmt::format(", achieved tok/s: {:.1f}", r.tokens_per_second) : "");
  json cycles;
  if (session) {
    session->close_trace();
    cycles = cycle_report(*session, L.config, err);
  }
  if (!o.report.empty()) {
    json j;
    j["format_version"] = kReportVersion;
    j["tool"] = "passim run";
    j["model"] = {{"path", model_name(o.model)}, {"sha256", L.model_sha256},
                  {"config", config_json(L.config)}};
    if (L.quant_model) {
      j["model"]["calibration"] = L.quant_model->calibration;
    }
    j["backend"] = std::string(backend->name());
    if (!is_float) {
      j["softmax"] = online ? json{{"mode", "online"}, {"lanes", softmax.lanes}}
                            : json{{"mode", "3pass"}};
    }
    j["prompt"] = o.prompt;
    // float options are reported as the decimal the user typed (not 0.8999999761581421)
  auto decimal = [](float v) { return std::stod(fmt::format("{}", v)); };
  j["sampling"] = {{"steps", g.steps}, {"temperature", decimal(o.temperature)},
                   {"top_p", decimal(o.top_p)}, {"seed", o.seed}};
    j["prompt_tokens"] = r.prompt_tokens;
    j["generated_tokens"] = r.generated_tokens;
    j["text"] = r.text;
    // The last position's logits, exact: a Q.16 int32 logit is a float without rounding.
    j["final_logits"] = std::vector<float>(backend->logits().begin(), backend->logits().end());
    j["timings"] = {{"positions", r.steps}, {"seconds", r.seconds},
                    {"tokens_per_second", timed ? json(r.tokens_per_second) : json(nullptr)}};
    if (session) {
      const hw::HwConfig& h = session->hw();
      const std::string canon = fmt::format(
          "{} R{} C{} L{} in{} w{} v{} p{} a{} prog{}", h.name, h.array_rows, h.array_cols,
          h.lanes, h.input_depth, h.weight_depth, h.vector_depth, h.param_depth, h.acc_depth,
          h.prog_depth);
      j["hardware"] = {{"config", std::string(h.name)},
                       {"config_hash", sha256_hex({reinterpret_cast<const std::uint8_t*>(
                                                       canon.data()), canon.size()})},
                       {"array_rows", h.array_rows}, {"array_cols", h.array_cols},
                       {"lanes", h.lanes}};
      j["cycles"] = cycles;
    }
    write_json(o.report, j);
  }
  return 0;
}

// ---- quantize -------------------------------------------------------------------------------

int cmd_quantize(const ModelOptions& o, const std::string& out_path, std::ostream& err) {
  if (is_psm_file(o.model)) {
    throw std::runtime_error(fmt::format("{}: already a quantised .psm model", o.model));
  }
  check_output_path(out_path, "--out",
                    {{"input model", o.model},
                     {"tokenizer", o.tokenizer},
                     {"calibration text", o.calib_text}},
                    OutputKind::kReplaced);
  Loaded L = load(o, true, true, err);
  save_psm(*L.quant_model, out_path);
  fmt::print(err, "wrote {} ({} bytes)\n", out_path, fs::file_size(out_path));
  return 0;
}

// ---- perplexity -----------------------------------------------------------------------------

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
      ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 40))
      ->capture_default_str();
}

/// Perplexity of the text: documents (llama) or seq_len windows of the split (characters).
/// Errors name the text file once: reading errors already do, and the others (encoding,
/// context length, overflow) get it with the model, `model`.
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

int cmd_perplexity(const ModelOptions& o, const TextOptions& t, const std::string& report,
                   std::ostream& out, std::ostream& err) {
  const std::string& text = t.path;
  check_output_path(report, "--report",
                    {{"input model", o.model},
                     {"tokenizer", o.tokenizer},
                     {"text", text},
                     {"calibration text", o.calib_text}});
  const bool is_float = o.backend == "float";
  Loaded L = load(o, is_float, !is_float, err, &t);
  auto backend = make_backend(o.backend, L);
  const auto t0 = std::chrono::steady_clock::now();
  const PerplexityResult r = evaluate_text(*backend, *L.tokenizer, t, model_name(o));
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  json j;
  j["format_version"] = kReportVersion;
  j["tool"] = "passim perplexity";
  j["model"] = {{"path", model_name(o)}, {"sha256", L.model_sha256}};
  if (L.tokenizer->is_char_level()) {
    j["split"] = t.split;
    j["windows"] = r.documents.size();
  }
  j["backend"] = std::string(backend->name());
  j["text"] = text;
  for (std::size_t d = 0; d < r.documents.size(); ++d) {
    const auto& doc = r.documents[d];
    if (!L.tokenizer->is_char_level()) {  // windows of a character model: only the total
      fmt::print(err, "document {}: {} tokens, sum NLL {:.6f}, mean {:.6f}\n", d, doc.tokens,
                 doc.nll, doc.nll / double(std::max(doc.tokens - 1, 1)));
    }
    j["documents"].push_back({{"tokens", doc.tokens}, {"sum_nll", doc.nll}});
  }
  j["mean_nll"] = r.mean_nll();
  j["perplexity"] = r.perplexity();
  j["seconds"] = secs;
  fmt::print(out, "perplexity {:.6f} (mean NLL {:.6f} over {} predicted tokens, backend {})\n",
             r.perplexity(), r.mean_nll(), r.predicted, backend->name());
  if (!report.empty()) {
    write_json(report, j);
  }
  return 0;
}

// ---- accuracy -------------------------------------------------------------------------------

/// Int vs float error of one tensor, accumulated over positions.
struct ErrorStats {
  double max_abs_lsb = 0;  ///< max |int - float / scale|, in the int tensor's LSB
  double dot = 0, nf = 0, ni = 0;  ///< for the cosine similarity of the concatenation
  long values = 0, saturated = 0, zeros = 0;

  void add(std::span<const float> f, std::span<const std::int16_t> q, double scale) {
    for (std::size_t i = 0; i < f.size(); ++i) {
      const double fi = f[i], qi = double(q[i]) * scale;
      max_abs_lsb = std::max(max_abs_lsb, std::fabs(double(q[i]) - fi / scale));
      dot += fi * qi;
      nf += fi * fi;
      ni += qi * qi;
      saturated += (q[i] == 32767 || q[i] == -32768) ? 1 : 0;
      zeros += q[i] == 0 ? 1 : 0;
      ++values;
    }
  }
  [[nodiscard]] double cosine() const {
    return nf > 0 && ni > 0 ? dot / std::sqrt(nf * ni) : (nf == ni ? 1.0 : 0.0);
  }
  [[nodiscard]] double saturated_share() const { return values ? double(saturated) / double(values) : 0; }
  [[nodiscard]] double zero_share() const { return values ? double(zeros) / double(values) : 0; }
};

/// Shares above which a layer's int output is reported as mostly saturated or collapsed.
constexpr double kSaturatedWarn = 0.5;
constexpr double kCollapsedWarn = 0.5;
constexpr double kCosineWarn = 0.9;

/// Keeps the last float residual (dim) of each layer seen in the current forward.
class LastResidual final : public ActivationObserver {
 public:
  explicit LastResidual(std::size_t layers) : last_(layers + 1) {}
  void observe(Act act, int layer, std::span<const float> v) override {
    if (act == Act::kResidual) {
      last_[std::size_t(layer + 1)].assign(v.begin(), v.end());
    }
  }
  [[nodiscard]] std::span<const float> at(int layer) const { return last_[std::size_t(layer + 1)]; }

 private:
  std::vector<std::vector<float>> last_;
};

int cmd_accuracy(const ModelOptions& o, const TextOptions& t, const std::string& report,
                 std::ostream& out, std::ostream& err) {
  check_output_path(report, "--report",
                    {{"input model", o.model},
                     {"tokenizer", o.tokenizer},
                     {"text", t.path},
                     {"calibration text", o.calib_text}});
  if (!o.model.empty() && is_psm_file(o.model)) {
    throw std::runtime_error(fmt::format(
        "{}: accuracy compares int8 with float and needs the float model (llama2.c .bin or "
        "GGUF), found a quantised .psm model", o.model));
  }
  Loaded L = load(o, true, true, err, &t);
  const ModelConfig& c = L.config;
  const double s_res = L.quant_model->scales.residual;
  FloatBackend fb(*L.float_model);
  CpuBackend qb(*L.quant_model);
  LastResidual fres(std::size_t(c.n_layers));
  fb.set_observer(&fres);
  std::vector<ErrorStats> layers(std::size_t(c.n_layers) + 1);
  ErrorStats logits;
  qb.set_residual_observer([&](int layer, std::span<const std::int16_t> x) {
    layers[std::size_t(layer + 1)].add(fres.at(layer), x, s_res);
  });
  // The float forward runs first at each position, so its residuals are ready when the int
  // forward reports its own; perplexity of both on the same windows/documents.
  struct Pair final : Backend {
    FloatBackend& f;
    CpuBackend& q;
    ErrorStats& lg;
    Pair(FloatBackend& f_, CpuBackend& q_, ErrorStats& lg_) : f(f_), q(q_), lg(lg_) {}
    [[nodiscard]] std::string_view name() const noexcept override { return "float+cpu"; }
    [[nodiscard]] const ModelConfig& config() const noexcept override { return q.config(); }
    void forward(int token, int pos) override {
      f.forward(token, pos);
      q.forward(token, pos);
      const auto fl = f.logits();
      const auto ql = q.logits_i32();
      for (std::size_t i = 0; i < fl.size(); ++i) {
        const double fi = fl[i], qi = std::ldexp(double(ql[i]), -kLogitFracBits);
        lg.max_abs_lsb = std::max(lg.max_abs_lsb, std::fabs(qi - fi) * std::ldexp(1.0, kLogitFracBits));
        lg.dot += fi * qi;
        lg.nf += fi * fi;
        lg.ni += qi * qi;
        ++lg.values;
      }
    }
    [[nodiscard]] std::span<const float> logits() const noexcept override { return q.logits(); }
    void reset() override {
      f.reset();
      q.reset();
    }
  };
  Pair pair(fb, qb, logits);
  const auto t0 = std::chrono::steady_clock::now();
  const PerplexityResult r_int = evaluate_text(pair, *L.tokenizer, t, model_name(o));
  // Second pass for the float perplexity (the paired pass above kept only the int logits).
  const PerplexityResult rf = evaluate_text(fb, *L.tokenizer, t, model_name(o));
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  fmt::print(out, "accuracy of {} ({} {}, {} layers), int8 (cpu) vs float, {} positions\n",
             model_name(o), arch_name(c.arch), norm_name(c.norm), c.n_layers, r_int.predicted);
  fmt::print(out, "{:<26} {:>14} {:>10} {:>11} {:>9}\n", "layer", "max |err| LSB", "cosine",
             "saturated", "zeros");
  json jl = json::array();
  std::vector<std::string> warnings;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const ErrorStats& e = layers[l];
    const std::string label =
        l == 0 ? "0 input quantisation" : fmt::format("{} block {} output", l, l - 1);
    fmt::print(out, "{:<26} {:>14.1f} {:>10.6f} {:>10.2f}% {:>8.2f}%\n", label, e.max_abs_lsb,
               e.cosine(), 100 * e.saturated_share(), 100 * e.zero_share());
    jl.push_back({{"layer", l}, {"name", label}, {"tensor", "residual int16"},
                  {"max_abs_err_lsb", e.max_abs_lsb}, {"cosine", e.cosine()},
                  {"saturated_share", e.saturated_share()}, {"zero_share", e.zero_share()}});
    if (e.saturated_share() > kSaturatedWarn) {
      warnings.push_back(fmt::format("layer {} ({}): {:.1f}% of its int16 outputs are saturated",
                                     l, label, 100 * e.saturated_share()));
    }
    if (e.zero_share() > kCollapsedWarn || e.cosine() < kCosineWarn) {
      warnings.push_back(fmt::format(
          "layer {} ({}): collapsed ({:.1f}% zeros, cosine {:.3f} with float)", l, label,
          100 * e.zero_share(), e.cosine()));
    }
  }
  fmt::print(out, "{:<26} {:>14.1f} {:>10.6f}\n", "logits (Q.16)", logits.max_abs_lsb,
             logits.cosine());
  const double ppl_f = rf.perplexity(), ppl_i = r_int.perplexity();
  fmt::print(out, "perplexity: float {:.4f}, int8 {:.4f} ({:+.2f}%)\n", ppl_f, ppl_i,
             100 * (ppl_i / ppl_f - 1));
  for (const auto& w : warnings) {
    fmt::print(err, "warning: {}\n", w);
  }
  if (!report.empty()) {
    json j;
    j["format_version"] = kReportVersion;
    j["tool"] = "passim accuracy";
    j["model"] = {{"path", model_name(o)}, {"sha256", L.model_sha256},
                  {"config", config_json(c)}, {"calibration", L.quant_model->calibration}};
    if (c.norm == NormKind::kBatch) {
      j["model"]["batchnorm"] =
          L.quant_model->batchnorm == BatchNormMode::kFolded ? "folded" : "unfused";
    }
    j["text"] = {{"path", t.path}, {"split", t.split}, {"positions", r_int.predicted}};
    j["layers"] = jl;
    j["logits"] = {{"max_abs_err_lsb", logits.max_abs_lsb}, {"cosine", logits.cosine()},
                   {"lsb", "2^-16"}};
    j["perplexity"] = {{"float", ppl_f}, {"int8", ppl_i},
                       {"float_mean_nll", rf.mean_nll()}, {"int8_mean_nll", r_int.mean_nll()}};
    j["warnings"] = warnings;
    j["seconds"] = secs;
    write_json(report, j);
  }
  return 0;
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
            const RtlFactory& rtl) {
  CLI::App app{"passim: a fixed-point Transformer runtime and the accelerator that runs it",
               "passim"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("passim ") + kVersion);
  const CLI::Validator finite(
      [](std::string& s) {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size()) {
          return std::string("must be a number");
        }
        return std::isfinite(v) ? std::string() : std::string("must be finite");
      },
      "FINITE");
  const CLI::Validator nonzero_seed(
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

  RunOptions run;
  CLI::App* run_cmd = app.add_subcommand("run", "generate text (run.c semantics)");
  add_model_options(run_cmd, run.model);
  run_cmd->add_option("--prompt,-i", run.prompt, "prompt text (default: empty)");
  run_cmd->add_option("--steps,-n", run.steps,
                      "positions including the prompt; 0 or > seq_len means seq_len")
      ->capture_default_str();
  run_cmd->add_option("--temperature,-t", run.temperature, "0 = greedy")
      ->check(finite & CLI::Range(0.0f, 100.0f))
      ->capture_default_str();
  run_cmd->add_option("--top-p,-p", run.top_p, "nucleus sampling threshold")
      ->check(finite & CLI::Range(0.0f, 1.0f))
      ->capture_default_str();
  run_cmd->add_option("--seed,-s", run.seed, "RNG seed, non-zero")
      ->check(nonzero_seed)
      ->capture_default_str();
  run_cmd->add_option("--backend,-b", run.model.backend,
                      "float | cpu | rtl (the simulated accelerator)")
      ->check(CLI::IsMember({"float", "cpu", "rtl"}))
      ->capture_default_str();
  run_cmd->add_option("--config", run.rtl.config,
                      "rtl: hardware configuration built into the simulator; cpu with --softmax "
                      "online: the lanes whose order the online Softmax follows")
      ->check(CLI::IsMember({"tiny", "small", "base"}))
      ->capture_default_str();
  run_cmd->add_option("--trace", run.rtl.trace_path, "rtl: write an FST waveform here");
  run_cmd->add_option("--max-cycles", run.rtl.max_cycles,
                      "rtl: watchdog, cycles per program (0 = none)")
      ->check(CLI::Validator(
          [](std::string& s) {
            return !s.empty() && s.size() <= 15 &&
                           s.find_first_not_of("0123456789") == std::string::npos
                       ? std::string()
                       : std::string("must be a non-negative integer below 10^15");
          },
          "CYCLES"));
  run_cmd->add_option("--softmax", run.softmax,
                      "3pass | online (max and sum in one pass, then normalise: 2 passes per "
                      "row; cpu and rtl)")
      ->check(CLI::IsMember({"3pass", "online"}))
      ->capture_default_str();
  run_cmd->add_option("--report", run.report, "write a JSON report here");

  ModelOptions quant;
  std::string quant_out;
  CLI::App* quant_cmd = app.add_subcommand("quantize", "write the int8 model (.psm)");
  add_model_options(quant_cmd, quant);
  quant_cmd->add_option("--out,-o", quant_out, "output .psm file")->required();

  ModelOptions ppl;
  TextOptions ppl_text;
  std::string ppl_report;
  CLI::App* ppl_cmd = app.add_subcommand("perplexity", "perplexity of a text");
  add_model_options(ppl_cmd, ppl);
  add_text_options(ppl_cmd, ppl_text);
  ppl_cmd->add_option("--backend,-b", ppl.backend, "float | cpu")
      ->check(CLI::IsMember({"float", "cpu"}))
      ->capture_default_str();
  ppl_cmd->add_option("--report", ppl_report, "write a JSON report here");

  ModelOptions acc;
  TextOptions acc_text;
  std::string acc_report;
  CLI::App* acc_cmd = app.add_subcommand(
      "accuracy", "int8 vs float: per-layer error, perplexity, saturation warnings");
  add_model_options(acc_cmd, acc);
  add_text_options(acc_cmd, acc_text);
  acc_cmd->add_option("--report", acc_report, "write a JSON report here");

  std::vector<std::string> rev(args.rbegin(), args.rend() - 1);  // CLI11 wants reversed argv
  try {
    app.parse(rev);
  } catch (const CLI::ParseError& e) {
    std::ostringstream o, e2;
    const int code = app.exit(e, o, e2);
    out << o.str();
    // Usage errors read like every other error; --help and --version are not errors.
    err << (code == 0 || e2.str().empty() ? "" : "passim: error: ") << e2.str();
    return code == 0 ? 0 : 2;
  }
  run.config_given = run_cmd->count("--config") > 0;
  try {
    if (*run_cmd) {
      return cmd_run(run, out, err, rtl);
    }
    if (*quant_cmd) {
      return cmd_quantize(quant, quant_out, err);
    }
    if (*ppl_cmd) {
      return cmd_perplexity(ppl, ppl_text, ppl_report, out, err);
    }
    if (*acc_cmd) {
      return cmd_accuracy(acc, acc_text, acc_report, out, err);
    }
  } catch (const UsageError& e) {
    fmt::print(err, "passim: error: {}\nRun with --help for more information.\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    fmt::print(err, "passim: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    fmt::print(err, "passim: error: {}\n", e.what());
    return 1;
  }
  return 2;
}

}  // namespace passim::app

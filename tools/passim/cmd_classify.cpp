// SPDX-License-Identifier: Apache-2.0
// `passim classify`: keyword spotting with a model read from its TFLite file (KWT-1): the
// front end on the host, the encoder on the chosen backend, one line per clip.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "commands.hpp"
#include "hw_config.hpp"
#include "model_session.hpp"
#include "options.hpp"
#include "passim/device/device_backend.hpp"
#include "passim/eval/calibrate.hpp"
#include "passim/io/tflite_model.hpp"
#include "passim/io/wav.hpp"
#include "passim/model/float_backend.hpp"
#include "passim/quant/cpu_backend.hpp"
#include "passim/quant/quantize.hpp"
#include "report.hpp"

#include <nlohmann/json.hpp>

namespace passim::app {
namespace {

/// SHA-256 of KWT-1's published file (ARM-software/keyword-transformer,
/// models_data_v2_12_labels/kwt1/tflite_non_stream/non_stream.tflite).
constexpr std::string_view kKwt1Sha256 =
    "b7dc15b422494adbdd1b721c4a0f073af36a4d93331e96299512eb1561278327";

/// TFLite files carry no checksum: a byte flipped inside a weight that stays a finite number
/// cannot be detected by reading the file. A model of KWT-1's shape whose bytes are not the
/// published file's gets a notice, so that a corrupted copy does not pass unremarked.
void check_published(const KeywordModel& km, std::ostream& err) {
  const ModelConfig& c = km.model.config;
  const bool kwt1_shape = c.dim == 64 && c.hidden_dim == 256 && c.n_layers == 12 &&
                          c.vocab_size == 12 && c.seq_len == 99 && c.input_features == 40;
  if (kwt1_shape && km.model.sha256 != kKwt1Sha256) {
    fmt::print(err, "notice: {} has KWT-1's shape but not the published file's bytes (SHA-256 "
                    "{}, published {}): a retrained model, or a corrupted copy\n",
               km.model.source, km.model.sha256, kKwt1Sha256);
  }
}

struct ClassifyOptions {
  std::string model;
  std::vector<std::string> audio;
  std::string labels;  ///< default: labels.txt beside the model, if there is one
  std::vector<std::string> calib_audio;  ///< int8 backends: calibration clips
  std::string backend = "float";
  std::string config = "base";
  std::string attention = "auto";  ///< rtl: where q k^T and p v run
  std::string report;  ///< JSON report path; empty = none
  bool logits = false;
  bool config_given = false;
  RtlOptions timing;  ///< rtl: the clock, the DRAM's timing and the progress line
  bool quiet = false;  ///< --quiet: no progress line
};

/// Options that only some backends read, and the report's path.
void check_classify_usage(const ClassifyOptions& o) {
  const bool compiled = o.backend == "rtl" || o.backend == "model";  // the compiler's programs
  if (o.config_given && !compiled) {
    throw UsageError(fmt::format("--config {}: only for --backend rtl or model, found --backend "
                                 "{}", o.config, o.backend));
  }
  if (o.attention != "auto" && !compiled) {
    throw UsageError(fmt::format("--attention {}: only for --backend rtl or model, found "
                                 "--backend {}", o.attention, o.backend));
  }
  if (!o.calib_audio.empty() && o.backend == "float") {
    throw UsageError("--calib-audio: only for the int8 backends (cpu, rtl), found --backend "
                     "float");
  }
  check_output_path(o.report, "--report", {{"model", o.model}});
  const std::string labels =
      o.labels.empty() ? (std::filesystem::path(o.model).parent_path() / "labels.txt").string()
                       : o.labels;
  check_output_path(o.report, "--report", {{"labels file", labels}});
  for (const auto& clip : o.audio) {
    check_output_path(o.report, "--report", {{"audio clip", clip}});
  }
  for (const auto& clip : o.calib_audio) {
    check_output_path(o.report, "--report", {{"calibration clip", clip}});
  }
}

/// Each clip's features (frames, coefficients), every file read and checked first: a bad
/// file stops the run before anything is printed.
std::vector<std::vector<float>> clip_features(const SpeechFrontEnd& fe,
                                              const std::vector<std::string>& paths) {
  std::vector<std::vector<float>> clips;
  for (const std::string& path : paths) {
    clips.push_back(read_clip(path, 16000, fe.samples));
  }
  std::vector<std::vector<float>> features;
  for (const auto& clip : clips) {
    features.push_back(fe.features(clip));
  }
  return features;
}

/// The labels: --labels, else labels.txt beside the model, else "class <i>".
std::vector<std::string> class_labels(const ClassifyOptions& o, int classes) {
  std::filesystem::path path = o.labels;
  if (path.empty()) {
    path = std::filesystem::path(o.model).parent_path() / "labels.txt";
    if (!std::filesystem::exists(path)) {
      std::vector<std::string> names;
      for (int i = 0; i < classes; ++i) {
        names.push_back(fmt::format("class {}", i));
      }
      return names;
    }
  }
  return read_labels(path, classes);
}

/// The top class and its softmax probability.
std::pair<std::size_t, double> top_class(std::span<const float> logits) {
  const auto best = std::size_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
  double sum = 0.0;
  for (const float l : logits) {
    sum += std::exp(double(l) - double(logits[best]));
  }
  return {best, 1.0 / sum};
}

/// One line per clip: path, label, probability (and the logits with --logits).
void print_clip(std::ostream& out, const ClassifyOptions& o, const std::string& path,
                const std::vector<std::string>& labels, std::span<const float> logits,
                nlohmann::json& clips) {
  const auto [best, p] = top_class(logits);
  clips.push_back({{"path", path}, {"label", labels[best]}, {"class", best}, {"score", p},
                   {"logits", std::vector<float>(logits.begin(), logits.end())}});
  fmt::print(out, "{} {} {:.4f}", path, labels[best], p);
  if (o.logits) {
    for (const float l : logits) {
      fmt::print(out, " {:.9g}", l);
    }
  }
  fmt::print(out, "\n");
}

/// The --report: the model, the backend, each clip's result, and (rtl) the cycle sections.
void write_classify_report(const ClassifyOptions& o, const KeywordModel& km,
                           const QuantModel* qm, const nlohmann::json& clips,
                           const RtlSession* session, const nlohmann::json& cycles) {
  if (o.report.empty()) {
    return;
  }
  nlohmann::json j;
  j["format_version"] = kReportVersion;
  j["tool"] = "passim classify";
  j["model"] = {{"name", "kwt"}, {"source", km.model.source}, {"sha256", km.model.sha256},
                {"config", config_json(km.model.config)}};
  if (qm != nullptr) {
    j["model"]["calibration"] = qm->calibration;
    j["model"]["feature_scales"] = qm->input_scale;
  }
  j["backend"] = o.backend == "rtl" || o.backend == "model" ? o.backend + ":" + o.config
                                                            : o.backend;
  j["clips"] = clips;
  add_rtl_sections(j, session, cycles, "");
  write_json(o.report, j);
}

/// The clips on the simulated accelerator, one pass each, then the cycle tables on `err`.
int classify_on_rtl(const ClassifyOptions& o, const KeywordModel& km, const QuantModel& qm,
                    const std::vector<std::string>& labels,
                    const std::vector<std::vector<float>>& features, const RtlFactory& rtl,
                    std::ostream& out, std::ostream& err) {
  if (!rtl && o.backend == "rtl") {
    throw UsageError("--backend rtl: this passim was built without the simulator");
  }
  const ModelCompiler compiled(qm, config_arg(o.config),
                               {.attention = attention_unit(o.attention)});
  (void)compiled.features_pass(km.front_end.frames);  // fits the config, or a clear error
  const auto n = std::size_t(km.model.config.seq_len);
  if (const std::size_t rows = compiled.rows_at(0, n); rows < n) {
    fmt::print(err, "notice: config {} holds {} of the {} positions in one pass: each clip runs "
                    "in chunks of rows, layer by layer (docs/kwt.md)\n", o.config, rows, n);
  }
  RtlOptions ro = o.timing;
  ro.config = o.config;
  const auto session = rtl(compiled, ro);
  auto& backend = dynamic_cast<DeviceBackend&>(session->backend());
  nlohmann::json clips = nlohmann::json::array();
  for (std::size_t i = 0; i < features.size(); ++i) {
    backend.forward_features(quantize_features(qm, features[i]), km.front_end.frames);
    print_clip(out, o, o.audio[i], labels, backend.logits(), clips);
  }
  const nlohmann::json cycles = rtl_cycles(*session, km.model.config, "auto",
                                              Work{"clips", features.size(), 0}, err);
  write_classify_report(o, km, &qm, clips, session.get(), cycles);
  return 0;
}

int cmd_classify(const ClassifyOptions& o, std::ostream& out, std::ostream& err,
                 const RtlFactory& rtl) {
  check_classify_usage(o);
  const KeywordModel km = load_keyword_model(o.model);
  check_published(km, err);
  const SpeechFrontEnd& fe = km.front_end;
  const std::vector<std::string> labels = class_labels(o, km.model.config.vocab_size);
  const auto features = clip_features(fe, o.audio);  // each (frames, coefficients)
  nlohmann::json clips = nlohmann::json::array();
  if (o.backend == "float") {
    FloatBackend backend(km.model);
    for (std::size_t i = 0; i < features.size(); ++i) {
      backend.forward_features(features[i], fe.frames);
      print_clip(out, o, o.audio[i], labels, backend.logits(), clips);
    }
    write_classify_report(o, km, nullptr, clips, nullptr, {});
    return 0;
  }
  // int8: calibrated on --calib-audio, else on the clips themselves
  const bool own = o.calib_audio.empty();
  const auto calib_features = own ? features : clip_features(fe, o.calib_audio);
  Calibration calib = calibrate_features(km.model, calib_features, fe.frames);
  calib.description = fmt::format("{} clip{} ({})", calib_features.size(),
                                  calib_features.size() == 1 ? "" : "s",
                                  own ? "the clips classified" : "--calib-audio");
  const QuantModel qm = quantize(km.model, calib);
  fmt::print(err, "quantised {} on {} calibration clip{}{}\n", o.model, calib_features.size(),
             calib_features.size() == 1 ? "" : "s",
             own ? " (the clips classified: pass --calib-audio for a fixed set)" : "");
  if (o.backend == "cpu") {
    CpuBackend backend(qm);
    for (std::size_t i = 0; i < features.size(); ++i) {
      backend.forward_features(quantize_features(qm, features[i]), fe.frames);
      print_clip(out, o, o.audio[i], labels, backend.logits(), clips);
    }
    write_classify_report(o, km, &qm, clips, nullptr, {});
    return 0;
  }
  return classify_on_rtl(o, km, qm, labels, features, o.backend == "model" ? model_factory() : rtl,
                         out, err);
}

}  // namespace

Command add_classify_command(CLI::App& app, const RtlFactory& rtl) {
  auto o = std::make_shared<ClassifyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "classify", "keyword spotting: a TFLite keyword model (KWT) on 16 kHz mono WAV clips");
  cmd->add_option("--model,-m", o->model, "the model's .tflite file")->required();
  cmd->add_option("--audio,-a", o->audio, "WAV clips: 16 kHz, mono, 16-bit PCM")
      ->required()->expected(1, -1);
  cmd->add_option("--labels", o->labels, "class labels, one per line (default: labels.txt "
                                          "beside the model)");
  cmd->add_option("--backend,-b", o->backend,
                  "float | cpu (int8, the golden model) | rtl (the simulated accelerator) | model "
                  "(its cycle model)")
      ->check(CLI::IsMember({"float", "cpu", "rtl", "model"}))->capture_default_str();
  cmd->add_option("--config", o->config,
                  "rtl: hardware configuration (KWT-1: small in chunks of rows, base in one pass)")
      ->check(config_validator())->capture_default_str();
  cmd->add_option("--calib-audio", o->calib_audio,
                  "cpu, rtl: WAV clips to calibrate the int8 scales on (default: the --audio "
                  "clips)")
      ->expected(1, -1);
  cmd->add_option("--attention", o->attention,
                  "rtl: auto | array | scores | vector (where q k^T and p v run)")
      ->check(CLI::IsMember({"auto", "array", "scores", "vector"}))->capture_default_str();
  add_memory_timing_options(cmd, o->timing);
  add_progress_options(cmd, o->timing, o->quiet);
  cmd->add_flag("--logits", o->logits, "print every class's logit after the score");
  cmd->add_option("--report", o->report, "write a JSON report here");
  return {[cmd] { return bool(*cmd); },
          [o, cmd, rtl](std::ostream& out, std::ostream& err) {
            o->config_given = cmd->count("--config") > 0;
            check_memory_timing_usage(*cmd, o->backend);
            apply_progress_options(o->timing, o->quiet, err);
            return cmd_classify(*o, out, err, rtl);
          }};
}

}  // namespace passim::app

// SPDX-License-Identifier: Apache-2.0
// `passim classify`: keyword spotting with a model read from its TFLite file (KWT-1): the
// front end on the host, the encoder on the chosen backend, one line per clip.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "commands.hpp"
#include "options.hpp"
#include "passim/io/tflite_model.hpp"
#include "passim/io/wav.hpp"
#include "passim/model/float_backend.hpp"

namespace passim::app {
namespace {

struct ClassifyOptions {
  std::string model;
  std::vector<std::string> audio;
  std::string labels;  ///< default: labels.txt beside the model, if there is one
  std::string backend = "float";
  bool logits = false;
};

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

int cmd_classify(const ClassifyOptions& o, std::ostream& out, std::ostream& err) {
  const KeywordModel km = load_keyword_model(o.model);
  const SpeechFrontEnd& fe = km.front_end;
  const std::vector<std::string> labels = class_labels(o, km.model.config.vocab_size);
  // Every clip is read before anything runs: a bad file stops the run with nothing printed.
  std::vector<std::vector<float>> clips;
  for (const std::string& path : o.audio) {
    clips.push_back(read_clip(path, 16000, fe.samples));
  }
  FloatBackend backend(km.model);
  for (std::size_t i = 0; i < clips.size(); ++i) {
    const std::vector<float> features = fe.features(clips[i]);  // (frames, coefficients)
    backend.forward_features(features, fe.frames);
    const auto [best, p] = top_class(backend.logits());
    fmt::print(out, "{} {} {:.4f}", o.audio[i], labels[best], p);
    if (o.logits) {
      for (const float l : backend.logits()) {
        fmt::print(out, " {:.9g}", l);
      }
    }
    fmt::print(out, "\n");
  }
  fmt::print(err, "classified {} clip{} with {} ({} on {}, {} frames of {} features)\n",
             clips.size(), clips.size() == 1 ? "" : "s", o.model, "the encoder", o.backend,
             fe.frames, fe.coefficients);
  return 0;
}

}  // namespace

Command add_classify_command(CLI::App& app) {
  auto o = std::make_shared<ClassifyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "classify", "keyword spotting: a TFLite keyword model (KWT) on 16 kHz mono WAV clips");
  cmd->add_option("--model,-m", o->model, "the model's .tflite file")->required();
  cmd->add_option("--audio,-a", o->audio, "WAV clips: 16 kHz, mono, 16-bit PCM")
      ->required()->expected(1, -1);
  cmd->add_option("--labels", o->labels, "class labels, one per line (default: labels.txt "
                                          "beside the model)");
  cmd->add_option("--backend,-b", o->backend, "float")
      ->check(CLI::IsMember({"float"}))->capture_default_str();
  cmd->add_flag("--logits", o->logits, "print every class's logit after the score");
  return {[cmd] { return bool(*cmd); },
          [o](std::ostream& out, std::ostream& err) { return cmd_classify(*o, out, err); }};
}

}  // namespace passim::app

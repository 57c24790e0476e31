// SPDX-License-Identifier: Apache-2.0
// `passim accuracy`: the integer model against its float reference, layer by layer, with the
// perplexity of both and warnings for saturated or collapsed layers (docs/reports.md).
#include <chrono>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "options.hpp"
#include "passim/eval/accuracy.hpp"
#include "passim/io/psm.hpp"

namespace passim::app {

using nlohmann::json;

namespace {

struct AccuracyOptions {
  ModelOptions model;
  TextOptions text;
  std::string report;
};

/// Prints the per-layer table, the logits and the perplexities; returns the layers as JSON.
json print_accuracy(const AccuracyResult& r, std::ostream& out) {
  fmt::print(out, "{:<26} {:>14} {:>10} {:>11} {:>9}\n", "layer", "max |err| LSB", "cosine",
             "saturated", "zeros");
  json jl = json::array();
  for (std::size_t l = 0; l < r.layers.size(); ++l) {
    const TensorError& e = r.layers[l];
    const std::string label = accuracy_layer_label(l);
    const json err_lsb = r.has_float ? json(e.max_abs_lsb) : json(nullptr);
    const json cosine = r.has_float ? json(e.cosine()) : json(nullptr);
    fmt::print(out, "{:<26} {:>14} {:>10} {:>10.2f}% {:>8.2f}%\n", label,
               r.has_float ? fmt::format("{:.1f}", e.max_abs_lsb) : "-",
               r.has_float ? fmt::format("{:.6f}", e.cosine()) : "-", 100 * e.saturated_share(),
               100 * e.zero_share());
    jl.push_back({{"layer", l}, {"name", label}, {"tensor", "residual int16"},
                  {"max_abs_err_lsb", err_lsb}, {"cosine", cosine},
                  {"saturated_share", e.saturated_share()}, {"zero_share", e.zero_share()}});
  }
  if (!r.has_float) {
    fmt::print(out, "perplexity: int8 {:.4f} (no float model: a .psm)\n", r.int8.perplexity());
    return jl;
  }
  fmt::print(out, "{:<26} {:>14.1f} {:>10.6f}\n", "logits (Q.16)", r.logits.max_abs_lsb,
             r.logits.cosine());
  const double ppl_f = r.float32.perplexity(), ppl_i = r.int8.perplexity();
  if (!r.float_error.empty()) {
    fmt::print(out, "float reference: INVALID at {} of {} positions ({})\n",
               r.float_failed_positions, r.int8.predicted, r.float_error);
  }
  if (r.float32.predicted == 0) {
    fmt::print(out, "perplexity: float invalid, int8 {:.4f}\n", ppl_i);
  } else {
    fmt::print(out, "perplexity: float {:.4f}, int8 {:.4f} ({:+.2f}%)\n", ppl_f, ppl_i,
               100 * (ppl_i / ppl_f - 1));
  }
  return jl;
}

json accuracy_report(const AccuracyOptions& o, const LoadedModel& m, const AccuracyResult& r,
                     json layers) {
  const QuantModel& q = *m.quant_model;
  json j;
  j["format_version"] = kReportVersion;
  j["tool"] = "passim accuracy";
  j["model"] = {{"path", model_name(o.model)}, {"sha256", m.sha256},
                {"config", config_json(m.config)}, {"calibration", q.calibration}};
  if (m.config.norm == NormKind::kBatch) {
    j["model"]["batchnorm"] = q.batchnorm == BatchNormMode::kFolded ? "folded" : "unfused";
  }
  j["text"] = {{"path", o.text.path}, {"split", o.text.split}, {"positions", r.int8.predicted}};
  j["layers"] = std::move(layers);
  j["logits"] = r.has_float ? json{{"max_abs_err_lsb", r.logits.max_abs_lsb},
                                   {"cosine", r.logits.cosine()}, {"lsb", "2^-16"}}
                            : json(nullptr);
  const bool float_ok = r.float32.predicted > 0;
  j["perplexity"] = {{"float", float_ok ? json(r.float32.perplexity()) : json(nullptr)},
                     {"int8", r.int8.perplexity()},
                     {"float_mean_nll", float_ok ? json(r.float32.mean_nll()) : json(nullptr)},
                     {"int8_mean_nll", r.int8.mean_nll()}};
  j["float_reference"] = {{"present", r.has_float},
                          {"valid", r.has_float && r.float_error.empty()},
                          {"failed_positions", r.float_failed_positions},
                          {"error", r.float_error}};
  j["warnings"] = r.warnings;
  return j;
}

int cmd_accuracy(const AccuracyOptions& o, std::ostream& out, std::ostream& err) {
  check_text_report_path(o.report, o.model, o.text);
  const bool psm = !o.model.model.empty() && is_psm_file(o.model.model);
  const LoadedModel m = load(o.model, !psm, true, err, &o.text);
  const std::string name = model_name(o.model);
  const auto t0 = std::chrono::steady_clock::now();
  const auto evaluate = [&](Backend& backend) {
    return evaluate_text(backend, *m.tokenizer, o.text, name);
  };
  // A .psm has no float model: its layers' saturated and zero shares still show a broken one.
  const AccuracyResult r = psm ? inspect_int8(*m.quant_model, evaluate)
                               : compare_int8_float(*m.float_model, *m.quant_model, evaluate);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const ModelConfig& c = m.config;
  fmt::print(out, "accuracy of {} ({} {}, {} layers), int8 (cpu){}, {} positions\n", name,
             arch_name(c.arch), norm_name(c.norm), c.n_layers,
             r.has_float ? " vs float" : " alone (a .psm has no float model)", r.int8.predicted);
  json layers = print_accuracy(r, out);
  for (const auto& w : r.warnings) {
    fmt::print(err, "warning: {}\n", w);
  }
  if (!o.report.empty()) {
    json j = accuracy_report(o, m, r, std::move(layers));
    j["seconds"] = secs;
    write_json(o.report, j);
  }
  return 0;
}

}  // namespace

Command add_accuracy_command(CLI::App& app) {
  auto o = std::make_shared<AccuracyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "accuracy", "int8 vs float: per-layer error, perplexity, saturation warnings");
  add_model_options(cmd, o->model);
  add_text_options(cmd, o->text);
  cmd->add_option("--report", o->report, "write a JSON report here");
  return {[cmd] { return bool(*cmd); },
          [o](std::ostream& out, std::ostream& err) { return cmd_accuracy(*o, out, err); }};
}

}  // namespace passim::app

// SPDX-License-Identifier: Apache-2.0
// `passim perplexity`: perplexity of a text on the float or cpu backend.
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "options.hpp"

namespace passim::app {

using nlohmann::json;

namespace {

struct PerplexityOptions {
  ModelOptions model;
  TextOptions text;
  std::string report;
};

int cmd_perplexity(const PerplexityOptions& o, std::ostream& out, std::ostream& err) {
  check_text_report_path(o.report, o.model, o.text);
  const bool is_float = o.model.backend == "float";
  const LoadedModel m = load(o.model, is_float, !is_float, err, &o.text);
  auto backend = make_backend(o.model.backend, m);
  const auto t0 = std::chrono::steady_clock::now();
  const PerplexityResult r = evaluate_text(*backend, *m.tokenizer, o.text, model_name(o.model));
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  json j;
  j["format_version"] = kReportVersion;
  j["tool"] = "passim perplexity";
  j["model"] = {{"path", model_name(o.model)}, {"sha256", m.sha256}};
  const bool chars = m.tokenizer->is_char_level();
  if (chars) {
    j["split"] = o.text.split;
    j["windows"] = r.documents.size();
  }
  j["backend"] = std::string(backend->name());
  j["text"] = o.text.path;
  for (std::size_t d = 0; d < r.documents.size(); ++d) {
    const auto& doc = r.documents[d];
    if (!chars) {  // windows of a character model: only the total
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
  if (!o.report.empty()) {
    write_json(o.report, j);
  }
  return 0;
}

}  // namespace

Command add_perplexity_command(CLI::App& app) {
  auto o = std::make_shared<PerplexityOptions>();
  CLI::App* cmd = app.add_subcommand("perplexity", "perplexity of a text");
  add_model_options(cmd, o->model);
  add_text_options(cmd, o->text);
  cmd->add_option("--backend,-b", o->model.backend, "float | cpu")
      ->check(CLI::IsMember({"float", "cpu"}))
      ->capture_default_str();
  cmd->add_option("--report", o->report, "write a JSON report here");
  return {[cmd] { return bool(*cmd); },
          [o](std::ostream& out, std::ostream& err) { return cmd_perplexity(*o, out, err); }};
}

}  // namespace passim::app

// SPDX-License-Identifier: Apache-2.0
// `passim quantize`: calibrate and quantise a float model, and write the project format (.psm).
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "commands.hpp"
#include "options.hpp"
#include "passim/io/psm.hpp"

namespace passim::app {

namespace {

int cmd_quantize(const ModelOptions& o, const std::string& out_path, std::ostream& err) {
  if (is_psm_file(o.model)) {
    throw std::runtime_error(fmt::format("{}: already a quantised .psm model", o.model));
  }
  const std::string tokenizer = tokenizer_path(o.model, o.tokenizer);
  check_output_path(out_path, "--out",
                    {{"input model", o.model},
                     {"tokenizer", tokenizer},
                     {"calibration text", o.calib_text}},
                    OutputKind::kReplaced);
  const LoadedModel m = load(o, true, true, err);
  save_psm(*m.quant_model, out_path);
  fmt::print(err, "wrote {} ({} bytes)\n", out_path, std::filesystem::file_size(out_path));
  return 0;
}

}  // namespace

Command add_quantize_command(CLI::App& app) {
  struct Options {
    ModelOptions model;
    std::string out;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("quantize", "write the int8 model (.psm)");
  add_model_options(cmd, o->model);
  cmd->add_option("--out,-o", o->out, "output .psm file")->required();
  return {[cmd] { return bool(*cmd); },
          [o](std::ostream&, std::ostream& err) { return cmd_quantize(o->model, o->out, err); }};
}

}  // namespace passim::app

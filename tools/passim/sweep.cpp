// SPDX-License-Identifier: Apache-2.0
// `passim sweep`'s grid and commands (sweep.hpp).
#include "sweep.hpp"

#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>

#include <fmt/format.h>

#include "hw_config.hpp"
#include "options.hpp"

#ifndef PASSIM_SOURCE_DIR
#error "PASSIM_SOURCE_DIR must name the repository (tools/passim/CMakeLists.txt)"
#endif

namespace passim::app {

namespace {

/// A fixed text for the character GPTs' prompts: a prompt of n tokens is BOS and its first
/// n - 1 characters (Shakespeare, public domain; the models' training text), on one line so
/// that each point's command is one line for GNU parallel.
constexpr std::string_view kPromptText =
    "First Citizen: Before we proceed any further, hear me speak. All: Speak, speak. "
    "First Citizen: You are all resolved rather to die than to famish? All: Resolved. "
    "resolved. First Citizen: First, you know Caius Marcius is chief enemy to the people.";

/// Every value of the axes that passim run and encode would refuse: a usage error now, before
/// any point runs.
void check_values(const SweepGrid& g) {
  const auto each = [](const char* axis, const std::vector<std::string>& values,
                       const std::function<std::string(std::string)>& check) {
    for (const std::string& v : values) {
      std::string copy = v;
      const std::string why = v.empty() ? "expected a value, found an empty one" : check(copy);
      if (!why.empty()) {
        throw UsageError(fmt::format("sweep --{} {}: {}", axis, v, why));
      }
    }
  };
  const auto member = [](std::initializer_list<const char*> ok) {
    return [ok](const std::string& v) {
      std::string names;
      for (const char* o : ok) {
        if (v == o) {
          return std::string();
        }
        names += names.empty() ? "" : ", ";
        names += o;
      }
      return fmt::format("expected one of {}", names);
    };
  };
  each("model", g.models, member({"ln-gpt", "bn-gpt", "encoder"}));
  each("softmax", g.softmax, member({"3pass", "online"}));
  each("norm", g.norms, member({"layer", "batch"}));
  each("seq", g.seqs, [](const std::string&) { return std::string(); });
  each("config", g.configs, [](const std::string&) { return std::string(); });
  each("dram-latency", g.dram_latency, real_in(0, 1e5));
  each("dram-bandwidth", g.dram_bandwidth, real_in(0.001, 1e6));
}

/// The character GPTs' context: positions a prompt and its decoded steps may take.
constexpr int kGptContext = 128;

int positive(const std::string& axis, const std::string& v, int hi) {
  int n = 0;
  if (v.empty() || v.size() > 6 || v.find_first_not_of("0123456789") != std::string::npos ||
      (n = std::stoi(v)) < 1 || n > hi) {
    throw UsageError(fmt::format("sweep --{} {}: expected a whole number from 1 to {}", axis, v,
                                 hi));
  }
  return n;
}

/// The model file or `passim encode` for `model` (ln-gpt, bn-gpt, encoder) with `norm`
/// (layer, batch or empty).
std::vector<std::string> model_args(const std::string& model, const std::string& norm) {
  const std::string src = PASSIM_SOURCE_DIR;
  if (model == "encoder") {
    if (!norm.empty() && norm != "layer") {
      throw UsageError(fmt::format("sweep --norm {}: the random encoder has LayerNorm only; "
                                   "expected layer", norm));
    }
    return {"encode"};
  }
  // check_values() has refused any other model and norm.
  const bool batch = norm.empty() ? model == "bn-gpt" : norm == "batch";
  return {"run", "--model",
          src + (batch ? "/models/bn-gpt/bn-gpt.gguf" : "/models/ln-gpt/ln-gpt.gguf")};
}

/// The command of one point; `v` maps each axis to its value.
std::vector<std::string> point_argv(const SweepGrid& g, const std::string& passim,
                                    const std::map<std::string, std::string>& v,
                                    const std::string& report) {
  std::vector<std::string> a{passim};
  for (const std::string& s : model_args(v.at("model"), v.at("norm"))) {
    a.push_back(s);
  }
  const bool encoder = a[1] == "encode";
  const int seq = positive("seq", v.at("seq"), encoder ? 4096 : kGptContext - g.decode_steps);
  if (encoder) {
    a.insert(a.end(), {"--seq", std::to_string(seq), "--context", std::to_string(seq)});
  } else {
    if (static_cast<std::size_t>(seq - 1) > kPromptText.size()) {
      throw UsageError(fmt::format("sweep --seq {}: the prompt text has {} characters; expected "
                                   "at most {}", seq, kPromptText.size(), kPromptText.size() + 1));
    }
    a.insert(a.end(), {"--prompt", std::string(kPromptText.substr(0, std::size_t(seq - 1))),
                       "--steps", std::to_string(seq + g.decode_steps), "--temperature", "0"});
  }
  // A clear error now rather than in the point; a file by its absolute path, so that the
  // command runs from any directory.
  (void)config_arg(v.at("config"));
  const std::string config = v.at("config").ends_with(".json")
                                 ? std::filesystem::absolute(v.at("config")).string()
                                 : v.at("config");
  a.insert(a.end(), {"--backend", g.backend, "--config", config, "--softmax",
                     v.at("softmax"), "--dram-latency", v.at("dram-latency"),
                     "--dram-bandwidth", v.at("dram-bandwidth"), "--quiet", "--report", report});
  return a;
}

}  // namespace

std::vector<SweepPoint> sweep_points(const SweepGrid& g, const std::string& passim) {
  check_values(g);
  const std::vector<std::string> none{""};
  const std::vector<std::pair<std::string, const std::vector<std::string>*>> axes{
      {"model", &g.models},     {"config", &g.configs},
      {"seq", &g.seqs},         {"softmax", &g.softmax},
      {"norm", g.norms.empty() ? &none : &g.norms},
      {"dram-latency", &g.dram_latency}, {"dram-bandwidth", &g.dram_bandwidth}};
  std::size_t count = 1;
  for (const auto& [name, values] : axes) {
    count *= values->size();
  }
  for (const auto& [name, values] : axes) {
    if (values->empty()) {
      throw UsageError(fmt::format("sweep: the grid has no points (--{} has no values)", name));
    }
  }
  std::vector<SweepPoint> points;
  for (std::size_t i = 0; i < count; ++i) {
    std::map<std::string, std::string> v;
    SweepPoint p;
    std::size_t rest = i;
    for (auto it = axes.rbegin(); it != axes.rend(); ++it) {  // the last axis fastest
      const std::string& value = (*it->second)[rest % it->second->size()];
      rest /= it->second->size();
      v[it->first] = value;
    }
    for (const auto& [name, values] : axes) {
      p.axes.emplace_back(name, v[name]);
    }
    p.report = (std::filesystem::path(g.out_dir) / fmt::format("{:04}.json", i)).string();
    p.argv = point_argv(g, passim, v, p.report);
    points.push_back(std::move(p));
  }
  return points;
}

std::string shell_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& a : argv) {
    const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                          "0123456789_-+=./:,@%") ==
                                         std::string::npos;
    std::string quoted = "'";
    for (const char c : a) {
      quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    quoted += "'";
    line += line.empty() ? "" : " ";
    line += plain ? a : quoted;
  }
  return line;
}

}  // namespace passim::app

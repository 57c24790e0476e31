// SPDX-License-Identifier: Apache-2.0
// `--config` (hw_config.hpp).
#include "hw_config.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "options.hpp"
#include "passim/hw/config_spec.hpp"

namespace passim::app {

namespace {

using nlohmann::json;

/// `j[key]` as a whole number from 1 to 2^31 - 1; `where` names the file and field.
std::size_t count_field(const json& j, const std::string& key, const std::string& where) {
  const json& v = j.at(key);
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() >= (std::uint64_t{1} << 31)) {
    throw UsageError(fmt::format("{}: {}: expected a whole number, found {}", where, key,
                                 v.dump()));
  }
  return v.get<std::size_t>();
}

/// The depth `mem` names ("input", ...), or nullptr.
std::size_t hw::HwConfig::*depth_field(const std::string& mem) {
  using C = hw::HwConfig;
  return mem == "input"    ? &C::input_depth
         : mem == "weight" ? &C::weight_depth
         : mem == "vector" ? &C::vector_depth
         : mem == "param"  ? &C::param_depth
         : mem == "acc"    ? &C::acc_depth
         : mem == "prog"   ? &C::prog_depth
                           : nullptr;
}

hw::HwConfig config_from_json(const json& j, const std::string& file) {
  if (!j.is_object()) {
    throw UsageError(fmt::format("{}: expected a JSON object, found {}", file, j.type_name()));
  }
  hw::HwConfig cfg = hw::kSpecDefaultDepths;
  for (const auto& [key, value] : j.items()) {
    if (key == "array_rows" || key == "array_cols" || key == "lanes") {
      (key == "array_rows" ? cfg.array_rows : key == "array_cols" ? cfg.array_cols
                                                                   : cfg.lanes) =
          count_field(j, key, file);
    } else if (key == "depths" && value.is_object()) {
      for (const auto& [mem, d] : value.items()) {
        std::size_t hw::HwConfig::*field = depth_field(mem);
        if (field == nullptr) {
          throw UsageError(fmt::format("{}: depths.{}: expected one of input, weight, vector, "
                                       "param, acc, prog; found {}", file, mem, d.dump()));
        }
        cfg.*field = count_field(value, mem, file + ": depths");
      }
    } else if (key != "name" && key != "doc") {
      throw UsageError(fmt::format("{}: {}: expected one of array_rows, array_cols, lanes, "
                                   "depths (an object), name, doc; found {}", file, key,
                                   value.dump()));
    }
  }
  for (const char* k : {"array_rows", "array_cols", "lanes"}) {
    if (!j.contains(k)) {
      throw UsageError(fmt::format("{}: {}: expected a whole number, found none", file, k));
    }
  }
  try {
    hw::check_config(cfg, file);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return cfg;
}

const hw::HwConfig& config_file(const std::string& path) {
  if (std::filesystem::is_directory(path)) {
    throw UsageError(fmt::format("{}: expected a JSON configuration file, found a directory",
                                 path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw UsageError(fmt::format("{}: cannot open the file", path));
  }
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const json j = json::parse(bytes, nullptr, false);
  if (j.is_discarded()) {
    throw UsageError(fmt::format("{}: expected a JSON configuration, found text that does not "
                                 "parse as JSON", path));
  }
  const hw::HwConfig cfg = config_from_json(j, path);
  const bool named = j.contains("name") && j["name"].is_string() &&
                     !j["name"].get<std::string>().empty();
  if (j.contains("name") && !named) {
    throw UsageError(fmt::format("{}: name: expected a non-empty string, found {}", path,
                                 j["name"].dump()));
  }
  if (named && hw::find_config(j["name"].get<std::string>()) != nullptr &&
      !hw::same_hardware(*hw::find_config(j["name"].get<std::string>()), cfg)) {
    throw UsageError(fmt::format("{}: name: {} is a built-in configuration with other numbers; "
                                 "expected another name", path, j["name"].get<std::string>()));
  }
  if (named && j["name"].get<std::string>().find('x') != std::string::npos) {
    bool spec = true;  // a name spelled like a spec must be that spec
    hw::HwConfig as_spec;
    try {
      as_spec = hw::parse_config_spec(j["name"].get<std::string>());
    } catch (const std::invalid_argument&) {
      spec = false;
    }
    if (spec && !hw::same_hardware(as_spec, cfg)) {
      throw UsageError(fmt::format("{}: name: {} reads as another configuration's spec; expected "
                                   "another name, or {}", path, j["name"].get<std::string>(),
                                   hw::config_spec_name(cfg)));
    }
  }
  return hw::intern_config(cfg, named ? j["name"].get<std::string>()
                                      : hw::config_spec_name(cfg));
}

}  // namespace

const hw::HwConfig& config_arg(const std::string& text) {
  if (text.size() > 5 && text.ends_with(".json")) {
    return config_file(text);
  }
  try {
    return hw::resolve_config(text);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("{} (or a .json file; docs/accelerator.md)", e.what()));
  }
}

CLI::Validator config_validator() {
  return CLI::Validator(
      [](std::string& s) {
        try {
          (void)config_arg(s);
          return std::string();
        } catch (const UsageError& e) {
          return std::string(e.what());
        }
      },
      "tiny|small|base|RxC:lL[:memory=depth]...|FILE.json");
}

}  // namespace passim::app

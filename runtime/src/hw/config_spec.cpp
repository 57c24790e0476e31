// SPDX-License-Identifier: Apache-2.0
// Configurations written RxC:lL[:memory=depth]... (config_spec.hpp).
#include "passim/hw/config_spec.hpp"

#include <array>
#include <charconv>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace passim::hw {

namespace {

/// One memory's depth field, its spec name and its limit.
struct DepthField {
  std::string_view name;
  std::size_t HwConfig::*depth;
  std::size_t max;
};

constexpr std::array<DepthField, 6> kDepthFields{{
    {"input", &HwConfig::input_depth, kMaxInputDepth},
    {"weight", &HwConfig::weight_depth, kMaxWeightDepth},
    {"vector", &HwConfig::vector_depth, kMaxVectorDepth},
    {"param", &HwConfig::param_depth, kMaxParamDepth},
    {"acc", &HwConfig::acc_depth, kMaxAccDepth},
    {"prog", &HwConfig::prog_depth, kMaxProgDepth},
}};

[[noreturn]] void bad(std::string_view text, std::string_view part, std::string_view expected) {
  throw std::invalid_argument(fmt::format("config '{}': {}: expected {}", text, part, expected));
}

/// A decimal number in [1, 2^31) spelled with digits only.
std::size_t parse_count(std::string_view text, std::string_view part, std::string_view digits) {
  std::size_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() ||
      v >= (std::size_t{1} << 31)) {
    bad(text, part, fmt::format("a decimal number below 2^31, found '{}'", digits));
  }
  return v;
}

/// "RxC" into rows and cols.
void parse_array(std::string_view text, std::string_view part, HwConfig& cfg) {
  const std::size_t x = part.find('x');
  if (x == std::string_view::npos) {
    bad(text, part, "the array as RxC (rows x columns, e.g. 4x4)");
  }
  cfg.array_rows = parse_count(text, part, part.substr(0, x));
  cfg.array_cols = parse_count(text, part, part.substr(x + 1));
}

/// "memory=depth" into the depth it names; `seen` holds the memories named so far (each at
/// most once).
void parse_depth(std::string_view text, std::string_view part, HwConfig& cfg,
                 std::string& seen) {
  const std::size_t eq = part.find('=');
  const std::string_view name = part.substr(0, eq);
  for (const DepthField& f : kDepthFields) {
    if (f.name == name && eq != std::string_view::npos) {
      if (seen.find(fmt::format("/{}/", name)) != std::string::npos) {
        bad(text, part, fmt::format("each memory once, found {} twice", name));
      }
      seen += fmt::format("/{}/", name);
      cfg.*f.depth = parse_count(text, part, part.substr(eq + 1));
      return;
    }
  }
  bad(text, part, "memory=depth with memory one of input, weight, vector, param, acc, prog");
}

void check_range(std::string_view where, std::string_view field, std::size_t v, std::size_t lo,
                 std::size_t hi) {
  if (v < lo || v > hi) {
    throw std::invalid_argument(
        fmt::format("{}: {}: expected {} to {}, found {}", where, field, lo, hi, v));
  }
}

}  // namespace

void check_config(const HwConfig& cfg, std::string_view where) {
  check_range(where, "array_rows (R)", cfg.array_rows, 1, kMaxArrayRows);
  check_range(where, "array_cols (C)", cfg.array_cols, 1, kMaxArrayCols);
  check_range(where, "lanes (L)", cfg.lanes, 1, kMaxLanes);
  if (cfg.macs() < 2) {
    throw std::invalid_argument(fmt::format(
        "{}: array: expected at least 2 PEs (R * C >= 2; a 1 x 1 array cannot keep consecutive "
        "tiles' accumulator updates apart, docs/cycle-model.md), found 1x1", where));
  }
  for (const DepthField& f : kDepthFields) {
    const std::size_t d = cfg.*f.depth;
    if (d < 2 || d > f.max || (d & (d - 1)) != 0) {
      throw std::invalid_argument(fmt::format(
          "{}: depths.{}: expected a power of two from 2 to {}, found {}", where, f.name, f.max,
          d));
    }
  }
}

HwConfig parse_config_spec(std::string_view text) {
  HwConfig cfg = kSpecDefaultDepths;
  cfg.name = {};
  std::size_t index = 0;
  std::size_t start = 0;
  std::string seen;  // memories named so far
  while (start <= text.size()) {
    const std::size_t colon = std::min(text.find(':', start), text.size());
    const std::string_view part = text.substr(start, colon - start);
    if (index == 0) {
      parse_array(text, part, cfg);
    } else if (index == 1) {
      if (part.size() < 2 || part[0] != 'l') {
        bad(text, part, "the lanes as lL (e.g. l4) after the array");
      }
      cfg.lanes = parse_count(text, part, part.substr(1));
    } else {
      parse_depth(text, part, cfg, seen);
    }
    ++index;
    start = colon + 1;
  }
  if (index < 2) {
    bad(text, text, "RxC:lL (array rows x columns, then lanes; e.g. 4x4:l4)");
  }
  check_config(cfg, fmt::format("config '{}'", text));
  return cfg;
}

std::string config_spec_name(const HwConfig& cfg) {
  std::string s = fmt::format("{}x{}:l{}", cfg.array_rows, cfg.array_cols, cfg.lanes);
  for (const DepthField& f : kDepthFields) {
    if (cfg.*f.depth != kSpecDefaultDepths.*f.depth) {
      s += fmt::format(":{}={}", f.name, cfg.*f.depth);
    }
  }
  return s;
}

bool same_hardware(const HwConfig& a, const HwConfig& b) noexcept {
  bool same = a.array_rows == b.array_rows && a.array_cols == b.array_cols && a.lanes == b.lanes;
  for (const DepthField& f : kDepthFields) {
    same = same && a.*f.depth == b.*f.depth;
  }
  return same;
}

const HwConfig* named_equivalent(const HwConfig& a) noexcept {
  for (const HwConfig& named : kConfigs) {
    if (same_hardware(a, named)) {
      return &named;
    }
  }
  return nullptr;
}

const HwConfig& intern_config(const HwConfig& cfg, std::string_view name) {
  static std::mutex mutex;
  static std::deque<std::pair<std::string, HwConfig>> store;  // stable addresses
  const std::lock_guard<std::mutex> lock(mutex);
  for (const auto& [n, c] : store) {
    if (n == name && same_hardware(c, cfg)) {
      return c;
    }
  }
  auto& [stored_name, stored] = store.emplace_back(std::string(name), cfg);
  stored.name = stored_name;
  return stored;
}

const HwConfig& resolve_config(std::string_view text) {
  if (const HwConfig* named = find_config(text)) {
    return *named;
  }
  if (text.find('x') == std::string_view::npos) {
    throw std::invalid_argument(fmt::format(
        "config '{}': expected tiny, small, base or RxC:lL[:memory=depth]... (e.g. 4x4:l4)",
        text));
  }
  return intern_config(parse_config_spec(text), text);
}

}  // namespace passim::hw

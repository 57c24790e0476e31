// SPDX-License-Identifier: Apache-2.0
// Parser for the llama2.c reference outputs.
#include "reference_cases.hpp"

#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace passim::test {

namespace {
std::vector<std::string> read_lines(const std::filesystem::path& md) {
  std::ifstream in(md);
  if (!in) {
    throw std::runtime_error(md.string() + ": cannot open");
  }
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

std::vector<int> parse_ints(const std::string& s) {
  std::istringstream in(s);
  std::vector<int> v;
  for (int x = 0; in >> x;) {
    v.push_back(x);
  }
  return v;
}

/// The lines between the next ``` fence pair after line i.
std::string fenced_block(const std::vector<std::string>& lines, std::size_t& i) {
  while (i < lines.size() && lines[i].find("```") == std::string::npos) {
    ++i;
  }
  std::string body;
  for (++i; i < lines.size() && lines[i].find("```") == std::string::npos; ++i) {
    body += lines[i] + "\n";
  }
  return body;
}
}  // namespace

std::vector<ReferenceCase> read_reference_cases(const std::filesystem::path& md) {
  const auto lines = read_lines(md);
  const std::regex header(R"(^### (\w+): prompt (".*"), `-n (\d+)`)");
  const std::regex prompt_ids(R"(Prompt token ids \(\d+, BOS first\): `([\d ]+)`)");
  std::vector<ReferenceCase> cases;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (std::regex_search(lines[i], m, header)) {
      ReferenceCase c;
      c.name = m[1];
      c.prompt = nlohmann::json::parse(m[2].str()).get<std::string>();
      c.steps = std::stoi(m[3]);
      cases.push_back(c);
      continue;
    }
    if (cases.empty()) {
      continue;
    }
    ReferenceCase& c = cases.back();
    if (std::regex_search(lines[i], m, prompt_ids)) {
      c.prompt_ids = parse_ints(m[1]);
    } else if (lines[i].rfind("- Generated token ids", 0) == 0 && c.generated_ids.empty()) {
      c.generated_ids = parse_ints(fenced_block(lines, i));
    } else if (lines[i].rfind("- Exact standard output as a JSON string", 0) == 0 &&
               c.text.empty()) {
      c.text = nlohmann::json::parse(fenced_block(lines, i)).get<std::string>();
    }
  }
  if (cases.empty()) {
    throw std::runtime_error(md.string() + ": no reference case found");
  }
  return cases;
}

std::vector<ReferenceStory> read_reference_stories(const std::filesystem::path& md) {
  const std::regex row(R"(^\| (\d+) \| (\d+) \| \d+ \| ([\d.]+) \|)");
  std::vector<ReferenceStory> stories;
  for (const auto& line : read_lines(md)) {
    std::smatch m;
    if (std::regex_search(line, m, row)) {
      stories.push_back({std::stoi(m[1]), std::stoi(m[2]), std::stod(m[3])});
    }
  }
  if (stories.empty()) {
    throw std::runtime_error(md.string() + ": no perplexity table row found");
  }
  return stories;
}

}  // namespace passim::test

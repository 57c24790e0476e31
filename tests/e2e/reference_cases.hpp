// SPDX-License-Identifier: Apache-2.0
/// \file Parser for ../shared/data/reference/stories260K_greedy.md (llama2.c run.c outputs).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace passim::test {

/// One greedy case: prompt, steps, the ids run.c sampled, and its exact standard output.
struct ReferenceCase {
  std::string name;    ///< "S1" ... "L1"
  std::string prompt;
  int steps = 0;
  std::vector<int> prompt_ids;
  std::vector<int> generated_ids;
  std::string text;    ///< standard output, final newline included
};

/// Per-story float32 NLL sums from the reference ("| story | tokens | ... |" table).
struct ReferenceStory {
  int story = 0;
  int tokens = 0;
  double fp32_sum_nll = 0;
};

/// Reads every case and story row; throws std::runtime_error if the file has none.
std::vector<ReferenceCase> read_reference_cases(const std::filesystem::path& md);
std::vector<ReferenceStory> read_reference_stories(const std::filesystem::path& md);

}  // namespace passim::test

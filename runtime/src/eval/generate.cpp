// SPDX-License-Identifier: Apache-2.0
// Generation loop, perplexity and backend agreement.
#include "passim/eval/generate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "passim/eval/sampler.hpp"

namespace passim {

namespace {

using Clock = std::chrono::steady_clock;

/// "1 byte", "7 bytes".
std::string bytes_text(std::size_t n) { return fmt::format("{} byte{}", n, n == 1 ? "" : "s"); }

/// Wall time of the loop, and the positions per second after the first forward pass (run.c
/// leaves out the first position; with prefill, the first pass is the whole prompt).
void record_timing(GenerateResult& res, Clock::time_point t0, Clock::time_point t_first) {
  const auto t1 = Clock::now();
  res.seconds = std::chrono::duration<double>(t1 - t0).count();
  const double after_first = std::chrono::duration<double>(t1 - t_first).count();
  const int first = std::max(res.prefill_positions, 1);
  if (res.steps > first && after_first > 0) {
    res.tokens_per_second = double(res.steps - first) / after_first;
  }
}

/// The prompt positions one prefill pass feeds: the prompt, at most `steps` positions, and
/// not past a BOS inside it (which ends the text, as in run.c's loop).
int prefill_length(const std::vector<int>& prompt, int steps, const ModelConfig& c) {
  const int p = std::min(int(prompt.size()), steps);
  for (int j = 1; j < p; ++j) {
    if (prompt[std::size_t(j)] == c.bos_token && c.bos_ends_text) {
      return j;
    }
  }
  return p;
}

/// Warns once (`warned`) when the logits at `pos` are not all finite; -Inf alone is a
/// legitimate "never this token" and passes.
void warn_bad_logits(std::span<const float> logits, int pos,
                     const std::function<void(std::string_view)>& notice, bool& warned) {
  if (warned || !notice) {
    return;
  }
  const LogitCount c = count_logits(logits);
  if (c.nan == 0 && c.pos_inf == 0) {
    return;
  }
  warned = true;
  notice(fmt::format(
      "warning: position {}: the logits hold {} NaN and {} +Inf values (first at index {}); "
      "the model or the backend overflowed. NaN is never chosen, +Inf wins; later positions "
      "are not checked again",
      pos, c.nan, c.pos_inf, c.first_bad));
}

/// The sampler's choice from the logits at `pos` (copied to `scratch`), after a warning about
/// non-finite logits (once per run); an error names the position.
int sample_at(Sampler& sampler, std::span<const float> logits, std::vector<float>& scratch,
              int pos, const std::function<void(std::string_view)>& notice, bool& warned) {
  warn_bad_logits(logits, pos, notice, warned);
  std::copy(logits.begin(), logits.end(), scratch.begin());
  try {
    return sampler.sample(scratch);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(fmt::format("position {}: {}", pos, e.what()));
  }
}

}  // namespace

std::vector<int> encode_prompt(const Tokenizer& tok, const std::string& prompt, int seq_len) {
  const std::size_t min_tokens = prompt.size() / tok.max_piece_bytes();
  if (min_tokens > std::size_t(seq_len)) {
    throw std::runtime_error(fmt::format(
        "prompt: expected at most seq_len = {} tokens (BOS included), found at least {} tokens "
        "(the prompt has {} bytes; no piece of the vocabulary has more than {})",
        seq_len, min_tokens, prompt.size(), bytes_text(tok.max_piece_bytes())));
  }
  std::vector<int> tokens = tok.encode(prompt, true, false);
  if (tokens.size() > std::size_t(seq_len)) {
    throw std::runtime_error(
        fmt::format("prompt: expected at most seq_len = {} tokens (BOS included), found {} tokens",
                    seq_len, tokens.size()));
  }
  return tokens;
}

int clamp_steps(int steps, int seq_len, const std::function<void(std::string_view)>& notice) {
  if (steps <= 0 || steps > seq_len) {
    if (notice) {
      notice(fmt::format("notice: --steps {} is outside 1..{} (seq_len); using {}", steps,
                         seq_len, seq_len));
    }
    return seq_len;
  }
  return steps;
}

GenerateResult generate(Backend& backend, const Tokenizer& tok, const GenerateOptions& opts,
                        const std::function<void(std::string_view)>& on_text) {
  GenerateResult res;
  generate_into(res, backend, tok, opts, on_text);
  return res;
}

void generate_into(GenerateResult& res, Backend& backend, const Tokenizer& tok,
                   const GenerateOptions& opts,
                   const std::function<void(std::string_view)>& on_text) {
  const ModelConfig& c = backend.config();
  res = GenerateResult{};
  res.prompt_tokens = encode_prompt(tok, opts.prompt, c.seq_len);
  const int n_prompt = static_cast<int>(res.prompt_tokens.size());
  const int steps = opts.steps;
  if (steps < 1 || steps > c.seq_len) {
    throw std::runtime_error(fmt::format("steps: expected 1..{}, found {}", c.seq_len, steps));
  }
  backend.reset();
  Sampler sampler(c.vocab_size, opts.temperature, opts.top_p, opts.seed);
  std::vector<float> scratch(std::size_t(c.vocab_size));
  const auto t0 = Clock::now();
  Clock::time_point t_first{};
  int token = res.prompt_tokens[0];
  int pos = 0;
  bool warned = false;
  if (opts.prefill) {
    const int n = prefill_length(res.prompt_tokens, steps, c);
    backend.forward_sequence(std::span(res.prompt_tokens).first(std::size_t(n)), 0);
    res.prefill_positions = n;  // set once the pass has run
    res.prefill_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  while (pos < steps) {
    if (pos >= res.prefill_positions) {
      backend.forward(token, pos);
    }
    int next = 0;
    if (pos < n_prompt - 1) {
      next = res.prompt_tokens[std::size_t(pos) + 1];
    } else {
      next = sample_at(sampler, backend.logits(), scratch, pos, opts.notice, warned);
      res.generated_tokens.push_back(next);
    }
    res.steps = ++pos;
    if (next == c.bos_token && c.bos_ends_text) {
      break;
    }
    const std::string piece = tok.decode(token, next);
    res.text += piece;
    if (on_text && !piece.empty()) {
      on_text(piece);
    }
    token = next;
    if (pos == std::max(res.prefill_positions, 1)) {
      t_first = Clock::now();
    }
  }
  res.text += '\n';
  if (on_text) {
    on_text("\n");
  }
  record_timing(res, t0, t_first);
}

}  // namespace passim

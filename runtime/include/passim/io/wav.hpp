// SPDX-License-Identifier: Apache-2.0
/// \file Reading audio clips for keyword spotting: RIFF/WAVE files of 16-bit PCM.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

namespace passim {

/// A WAV file's format and samples (interleaved when channels > 1).
struct WavFile {
  int format = 0;       ///< 1: integer PCM
  int channels = 0;
  int sample_rate = 0;  ///< Hz
  int bits = 0;         ///< per sample
  std::vector<std::int16_t> samples;
};

/// Reads a RIFF/WAVE file of 16-bit integer PCM (any rate and channel count). Throws
/// std::runtime_error naming the file and what is wrong: not RIFF/WAVE, a chunk that runs past
/// the end of the file, no fmt or data chunk, a format other than 16-bit integer PCM.
[[nodiscard]] WavFile read_wav(const std::filesystem::path& path);

/// One clip of `length` samples at `rate` Hz, mono, as a keyword-spotting model takes it:
/// each 16-bit sample s becomes s / 32768; a shorter recording is zero-padded with the
/// recording centred (floor((length - n) / 2) zeros before it), a longer one is cut to its
/// middle `length` samples (floor((n - length) / 2) skipped). Throws as read_wav(), and naming
/// the field with the expected and found values when the file is not mono or not at `rate`.
[[nodiscard]] std::vector<float> read_clip(const std::filesystem::path& path, int rate,
                                           std::size_t length);

}  // namespace passim

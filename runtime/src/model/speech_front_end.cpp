// SPDX-License-Identifier: Apache-2.0
#include "passim/model/speech_front_end.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace passim {
namespace {

/// out (rows) = w (rows, n) x (n): each dot product accumulated in float32 in index order.
void matvec(float* out, const std::vector<float>& w, const float* x, std::size_t rows,
            std::size_t n) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = w.data() + r * n;
    float acc = 0.0F;
    for (std::size_t j = 0; j < n; ++j) {
      acc += row[j] * x[j];
    }
    out[r] = acc;
  }
}

}  // namespace

std::vector<float> SpeechFrontEnd::features(std::span<const float> audio) const {
  if (audio.size() != samples) {
    throw std::runtime_error(fmt::format("speech front end: audio: expected {} samples, found {}",
                                         samples, audio.size()));
  }
  const std::size_t len = frame_length();
  std::vector<float> frame(len), re(bins), im(bins), mag(bins), energy(mels);
  std::vector<float> out(frames * coefficients);
  for (std::size_t f = 0; f < frames; ++f) {
    // frame (len): its chunks, windowed
    for (std::size_t k = 0; k < chunks_per_frame; ++k) {
      const auto c = std::size_t(frame_chunks[f * chunks_per_frame + k]);
      std::copy_n(audio.data() + c * chunk, chunk, frame.data() + k * chunk);
    }
    for (std::size_t i = 0; i < len; ++i) {
      frame[i] *= window[i];
    }
    // mag (bins) = |DFT|: sqrt(re^2 + im^2)
    matvec(re.data(), dft_real, frame.data(), bins, len);
    matvec(im.data(), dft_imag, frame.data(), bins, len);
    for (std::size_t b = 0; b < bins; ++b) {
      mag[b] = std::sqrt(re[b] * re[b] + im[b] * im[b]);
    }
    // energy (mels) = log(max(mel mag, floor))
    matvec(energy.data(), mel, mag.data(), mels, bins);
    for (float& e : energy) {
      e = std::log(std::max(e, mel_floor));
    }
    // out row f (coefficients) = (DCT energy - offset) * scale
    float* row = out.data() + f * coefficients;
    matvec(row, dct, energy.data(), coefficients, mels);
    for (std::size_t c = 0; c < coefficients; ++c) {
      row[c] = (row[c] - norm_offset) * norm_scale[c];
    }
  }
  return out;
}

}  // namespace passim

// SPDX-License-Identifier: Apache-2.0
/// \file A keyword-spotting model's front end: one clip of audio samples to MFCC features,
/// computed in float on the host, as keyword-spotting deployments compute it on the
/// microcontroller's DSP before the network runs. Every constant comes from the model file
/// (io/tflite_model.hpp), so the features are the file's own; the steps are those of Google's
/// speech front end as KWT exports it (Berg et al. 2021, Sec. 3.1; Tang & Lin 2018): frames
/// made of consecutive chunks, a window, a real DFT as two matrix products, magnitude, a mel
/// matrix, a floor, log, a DCT, and a normalisation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace passim {

struct SpeechFrontEnd {
  std::size_t samples = 0;                  ///< input length (16000: one second at 16 kHz)
  std::size_t chunk = 0;                    ///< samples per chunk (the frame step)
  std::size_t frames = 0;                   ///< output rows
  std::size_t chunks_per_frame = 0;         ///< frame length / chunk
  std::vector<std::int32_t> frame_chunks;   ///< (frames, chunks_per_frame) chunk indices
  std::vector<float> window;                ///< (frame length)
  std::size_t bins = 0;                     ///< DFT bins
  std::vector<float> dft_real, dft_imag;    ///< (bins, frame length) each
  std::size_t mels = 0;
  std::vector<float> mel;                   ///< (mels, bins)
  float mel_floor = 0.0F;                   ///< max(mel energy, floor) before the log
  std::size_t coefficients = 0;
  std::vector<float> dct;                   ///< (coefficients, mels)
  float norm_offset = 0.0F;                 ///< subtracted from every coefficient
  std::vector<float> norm_scale;            ///< (coefficients), multiplied after

  [[nodiscard]] std::size_t frame_length() const noexcept { return chunk * chunks_per_frame; }

  /// Features (frames, coefficients), row-major, of `audio` (samples values, the model's input
  /// scale), in float32 with Eigen's matrix products (their order of summation, not the
  /// file's: the front end is not part of the golden model). Throws std::runtime_error when
  /// audio.size() != samples.
  [[nodiscard]] std::vector<float> features(std::span<const float> audio) const;
};

}  // namespace passim

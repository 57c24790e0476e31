// SPDX-License-Identifier: Apache-2.0
#include "passim/model/speech_front_end.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <Eigen/Core>
#include <fmt/format.h>

namespace passim {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajor>;

}  // namespace

std::vector<float> SpeechFrontEnd::features(std::span<const float> audio) const {
  if (audio.size() != samples) {
    throw std::runtime_error(fmt::format("speech front end: audio: expected {} samples, found {}",
                                         samples, audio.size()));
  }
  const auto len = Eigen::Index(frame_length()), nf = Eigen::Index(frames);
  // frames (frames, len): each frame's chunks, windowed
  RowMajor framed(nf, len);
  for (Eigen::Index f = 0; f < nf; ++f) {
    for (std::size_t k = 0; k < chunks_per_frame; ++k) {
      const auto c = std::size_t(frame_chunks[std::size_t(f) * chunks_per_frame + k]);
      std::copy_n(audio.data() + c * chunk, chunk, framed.row(f).data() + k * chunk);
    }
  }
  framed.array().rowwise() *= Eigen::Map<const Eigen::RowVectorXf>(window.data(), len).array();
  // mag (frames, bins) = |DFT|: sqrt(re^2 + im^2), the DFT as two matrix products
  const auto nb = Eigen::Index(bins), nm = Eigen::Index(mels), nc = Eigen::Index(coefficients);
  const RowMajor re = framed * ConstMap(dft_real.data(), nb, len).transpose();
  const RowMajor im = framed * ConstMap(dft_imag.data(), nb, len).transpose();
  const RowMajor mag = (re.array().square() + im.array().square()).sqrt().matrix();
  // energy (frames, mels) = log(max(mel mag, floor))
  const RowMajor energy = (mag * ConstMap(mel.data(), nm, nb).transpose())
                              .array().max(mel_floor).log().matrix();
  // out (frames, coefficients) = (DCT energy - offset) * scale
  RowMajor out = energy * ConstMap(dct.data(), nc, nm).transpose();
  out.array() -= norm_offset;
  out.array().rowwise() *= Eigen::Map<const Eigen::RowVectorXf>(norm_scale.data(), nc).array();
  return {out.data(), out.data() + out.size()};
}

}  // namespace passim

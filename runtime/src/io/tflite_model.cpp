// SPDX-License-Identifier: Apache-2.0
// KWT from its TFLite file: the front end, the input projection, the class token and the
// positions, the post-norm blocks and the head, step by step in the file's operator order.
#include "passim/io/tflite_model.hpp"

#include <cmath>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "passim/io/file.hpp"
#include "tflite_blocks.hpp"
#include "tflite_walk.hpp"

namespace passim {
namespace {

using tflite::Fc;
using tflite::Graph;
using tflite::OpCode;
using tflite::Operator;
using tflite::OpWalk;
using tflite::binary;
using tflite::fully_connected;
using tflite::unary;
using tflite::with_constant;
using Shape = std::vector<std::int64_t>;

/// The clip cut into frames: the input, its chunks, each frame's chunks; returns the frames.
int frames(OpWalk& walk, SpeechFrontEnd& fe) {
  const Graph& g = walk.graph();
  const int input = g.inputs().at(0);
  const Shape in_shape = walk.shape(input);
  const Operator& slice = walk.next(OpCode::kStridedSlice, "the audio input");
  walk.input_is(slice, 0, input, "the audio input");
  if (in_shape.size() != 2 || in_shape[0] != 1) {
    walk.fail(slice, "the audio input: expected the graph's input of shape [1, samples]");
  }
  walk.shape_is(slice, slice.outputs[0], in_shape, "the audio input (the whole clip)");
  const std::vector<std::pair<std::int64_t, std::int64_t>> whole = {{0, 1}, {0, in_shape[1]}};
  if (walk.slice_ranges(slice) != whole) {
    walk.fail(slice, "the audio input: expected the whole clip, begin [0, 0] to end [1, samples]");
  }
  fe.samples = std::size_t(in_shape[1]);
  const Operator& chunks = walk.next(OpCode::kReshape, "the clip's chunks");
  walk.input_is(chunks, 0, slice.outputs[0], "the clip's chunks");
  const Shape cs = walk.shape(chunks.outputs[0]);  // (1, chunks, chunk)
  if (cs.size() != 3 || cs[0] != 1 || cs[1] * cs[2] != in_shape[1]) {
    walk.fail(chunks, "the clip's chunks: expected shape [1, chunks, samples / chunks]");
  }
  fe.chunk = std::size_t(cs[2]);
  const Operator& gather = walk.next(OpCode::kGather, "the frames' chunks");
  walk.input_is(gather, 0, chunks.outputs[0], "the frames' chunks");
  const Shape is = walk.input_shape(gather, 1);
  if (gather.options.axis != 1 || is.size() != 2) {
    walk.fail(gather, "the frames' chunks: expected (frames, chunks) indices on axis 1");
  }
  fe.frame_chunks = g.ints(gather.inputs[1]);
  for (const std::int32_t c : fe.frame_chunks) {
    if (c < 0 || c >= cs[1]) {
      walk.fail(gather, fmt::format("chunk index: expected 0..{}, found {}", cs[1] - 1, c));
    }
  }
  fe.frames = std::size_t(is[0]);
  fe.chunks_per_frame = std::size_t(is[1]);
  return walk.skip_reshapes(gather.outputs[0]);
}

/// The front end (model/speech_front_end.hpp) from the graph's input; returns the features.
int front_end(OpWalk& walk, SpeechFrontEnd& fe) {
  int t = frames(walk, fe);
  const auto len = std::int64_t(fe.frame_length());
  t = with_constant(walk, OpCode::kMul, t, {len}, fe.window, "the window");
  const Fc re = fully_connected(walk, t, -1, len, &fe.dft_real, nullptr, "the DFT's real part");
  const int re2 = binary(walk, OpCode::kMul, re.y, re.y, "the real part squared");
  const Fc im = fully_connected(walk, t, re.out, len, &fe.dft_imag, nullptr,
                                "the DFT's imaginary part");
  const int im2 = binary(walk, OpCode::kMul, im.y, im.y, "the imaginary part squared");
  const int power = binary(walk, OpCode::kAdd, re2, im2, "the power spectrum");
  const int mag = unary(walk, OpCode::kSqrt, power, "the magnitude");
  fe.bins = std::size_t(re.out);
  const Fc mel = fully_connected(walk, mag, -1, re.out, &fe.mel, nullptr, "the mel matrix");
  fe.mels = std::size_t(mel.out);
  std::vector<float> c;
  t = with_constant(walk, OpCode::kMaximum, mel.y, {}, c, "the mel floor");
  fe.mel_floor = c[0];
  t = unary(walk, OpCode::kLog, walk.skip_reshapes(t), "the log mel energies");
  const Fc dct = fully_connected(walk, t, -1, mel.out, &fe.dct, nullptr, "the DCT");
  fe.coefficients = std::size_t(dct.out);
  t = with_constant(walk, OpCode::kSub, dct.y, {}, c, "the normalisation's offset", 1);
  fe.norm_offset = c[0];
  return with_constant(walk, OpCode::kMul, t, {dct.out}, fe.norm_scale,
                       "the normalisation's scale");
}

/// The input projection, the class token and the positions; returns the first block's input.
int encoder_input(OpWalk& walk, int features, std::int64_t n_features, ModelConfig& c,
                  FloatWeights& w) {
  const Fc e = fully_connected(walk, features, -1, n_features, &w.input_proj, &w.input_bias,
                               "the input projection");
  const int rows = walk.skip_reshapes(e.y);
  const Operator& cat = walk.next(OpCode::kConcatenation, "the class token");
  if (cat.inputs.size() != 2 || cat.inputs[1] != rows || cat.options.axis != 1) {
    walk.fail(cat, fmt::format("the class token: expected CONCATENATION(class token, tensor {}) "
                               "on axis 1", rows));
  }
  w.class_token = walk.constant(cat, 0, {1, 1, e.out}, "the class token");
  const Shape& rs = walk.shape(rows);
  const std::int64_t n = rs.size() == 3 ? rs[1] + 1 : 0;
  walk.shape_is(cat, cat.outputs[0], {1, n, e.out}, "the class token and the frames");
  c.dim = int(e.out);
  c.input_features = int(n_features);
  c.class_token = true;
  c.seq_len = int(n);
  return with_constant(walk, OpCode::kAdd, cat.outputs[0], {1, n, e.out}, w.pos_embedding,
                       "the learned positions");
}

}  // namespace

KeywordModel keyword_model_from_tflite(const Graph& g) {
  KeywordModel km;
  ModelConfig& c = km.model.config;
  FloatWeights& w = km.model.weights;
  OpWalk walk(g);
  const int features = front_end(walk, km.front_end);
  int x = encoder_input(walk, features, std::int64_t(km.front_end.coefficients), c, w);
  const std::int64_t d = c.dim;
  float eps = 0.0F;
  while (walk.next_is(OpCode::kFullyConnected, x)) {  // a block: the queries read x
    x = tflite::encoder_block(walk, x, c, w, eps);
    ++c.n_layers;
  }
  const int logits = tflite::classifier_head(walk, x, d, c, w);
  if (!walk.done() || g.outputs().size() != 1 || g.outputs()[0] != logits) {
    throw std::runtime_error(fmt::format("{}: expected the classifier's output as the graph's "
                                         "only output, after the last operator", g.origin()));
  }
  c.n_heads = c.n_kv_heads = 1;
  c.shared_classifier = false;
  c.arch = Arch::kGpt;
  c.norm = NormKind::kLayer;
  c.norm_eps = eps;
  c.bos_token = 0;
  c.bos_ends_text = false;
  c.norm_placement = NormPlacement::kPost;
  c.mask = MaskKind::kNone;
  c.head_norm = false;
  c.gelu = GeluForm::kTanh;
  validate_config(c, g.origin());
  return km;
}

KeywordModel load_keyword_model(const std::filesystem::path& path) {
  const Graph g = Graph::read(path);
  KeywordModel km = keyword_model_from_tflite(g);
  km.model.source = path.string();
  km.model.sha256 = sha256_hex(read_file(path, 256ULL << 20));
  return km;
}

std::vector<std::string> read_labels(const std::filesystem::path& path, int classes) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw std::runtime_error(path.string() + ": labels: expected a file, found " +
                             (std::filesystem::exists(path, ec) ? "a folder or a device"
                                                                : "nothing there"));
  }
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error(path.string() + ": cannot open the labels file");
  }
  std::vector<std::string> labels;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    if (!line.empty()) {
      labels.push_back(line);
    }
  }
  if (int(labels.size()) != classes) {
    throw std::runtime_error(fmt::format("{}: labels: expected {} (the model's classes), found {}",
                                         path.string(), classes, labels.size()));
  }
  return labels;
}

}  // namespace passim

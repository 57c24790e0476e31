// SPDX-License-Identifier: Apache-2.0
#include "passim/io/wav.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "passim/io/file.hpp"

namespace passim {
namespace {

constexpr std::uint64_t kMaxWavBytes = 64ULL << 20;

std::uint32_t u32(const std::uint8_t* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 |
         std::uint32_t(p[3]) << 24;
}
std::uint16_t u16(const std::uint8_t* p) { return std::uint16_t(p[0] | p[1] << 8); }

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw std::runtime_error(path.string() + ": " + what);
}

/// The fmt chunk's format, checked: 16-bit integer PCM (plain, or extensible with a PCM
/// sub-format), a rate, channels, and a block size and byte rate that agree with them, and a
/// data chunk of whole frames.
WavFile wav_format(const std::filesystem::path& path, const std::uint8_t* fmt_chunk,
                   const std::vector<std::uint8_t>& b, std::size_t data_bytes) {
  WavFile w;
  w.format = u16(fmt_chunk);
  w.channels = u16(fmt_chunk + 2);
  const std::uint32_t rate = u32(fmt_chunk + 4);
  w.bits = u16(fmt_chunk + 14);
  if (rate > 1'000'000 || rate == 0) {
    fail(path, fmt::format("sample rate: expected 1 to 1000000 Hz, found {} Hz", rate));
  }
  w.sample_rate = int(rate);
  // WAVE_FORMAT_EXTENSIBLE (0xFFFE): the format code is the sub-format GUID's first two bytes.
  const bool extensible = w.format == 0xFFFE && u16(fmt_chunk + 16) >= 22 &&
                          std::uint64_t(fmt_chunk - b.data()) + 26 <= b.size();
  const int code = extensible ? u16(fmt_chunk + 24) : w.format;
  if (w.channels < 1) {
    fail(path, "channels: expected at least 1, found 0");
  }
  if (code != 1 || w.bits != 16) {
    fail(path, fmt::format("sample format: expected 16-bit integer PCM (format 1, 16 bits), "
                           "found format {}{}, {} bits", code, extensible ? " (extensible)" : "",
                           w.bits));
  }
  const std::uint32_t block = u16(fmt_chunk + 12), byte_rate = u32(fmt_chunk + 8);
  if (block != 2U * std::uint32_t(w.channels) || byte_rate != rate * block) {
    fail(path, fmt::format("block size and byte rate: expected {} and {} for {} channels of "
                           "16 bits at {} Hz, found {} and {}", 2 * w.channels,
                           std::uint64_t(rate) * 2 * std::uint64_t(w.channels), w.channels, rate,
                           block, byte_rate));
  }
  if (data_bytes == 0 || data_bytes % block != 0) {
    fail(path, fmt::format("chunk \"data\": expected a whole number of {}-byte frames, at least "
                           "one, found {} bytes", block, data_bytes));
  }
  return w;
}

}  // namespace

WavFile read_wav(const std::filesystem::path& path) {
  const std::vector<std::uint8_t> b = read_file(path, kMaxWavBytes);
  if (b.size() < 12 || std::memcmp(b.data(), "RIFF", 4) != 0 ||
      std::memcmp(b.data() + 8, "WAVE", 4) != 0) {
    fail(path, "not a WAV file: expected \"RIFF\" and \"WAVE\" in its first 12 bytes");
  }
  const std::uint8_t* fmt_chunk = nullptr;
  const std::uint8_t* data = nullptr;
  std::size_t data_bytes = 0;
  for (std::size_t at = 12; at + 8 <= b.size();) {
    const std::string id(reinterpret_cast<const char*>(b.data() + at), 4);
    const std::uint64_t size = u32(b.data() + at + 4);
    if (size > b.size() - at - 8) {
      fail(path, fmt::format("chunk \"{}\" at byte {}: expected {} bytes, found {} (truncated)",
                             id, at, size, b.size() - at - 8));
    }
    if ((id == "fmt " && fmt_chunk != nullptr) || (id == "data" && data != nullptr)) {
      fail(path, fmt::format("chunk \"{}\" at byte {}: expected one, found a second", id, at));
    }
    if (id == "fmt ") {
      if (size < 16) {
        fail(path, fmt::format("chunk \"fmt \": expected at least 16 bytes, found {}", size));
      }
      fmt_chunk = b.data() + at + 8;
    } else if (id == "data") {
      data = b.data() + at + 8;
      data_bytes = std::size_t(size);
    }
    at += 8 + std::size_t(size) + std::size_t(size % 2);
  }
  if (fmt_chunk == nullptr || data == nullptr) {
    fail(path, fmt::format("expected a \"fmt \" and a \"data\" chunk, found {}",
                           fmt_chunk == nullptr ? "no \"fmt \" chunk" : "no \"data\" chunk"));
  }
  WavFile w = wav_format(path, fmt_chunk, b, data_bytes);
  w.samples.resize(data_bytes / 2);
  for (std::size_t i = 0; i < w.samples.size(); ++i) {
    w.samples[i] = static_cast<std::int16_t>(u16(data + 2 * i));
  }
  return w;
}

std::vector<float> read_clip(const std::filesystem::path& path, int rate, std::size_t length) {
  const WavFile w = read_wav(path);
  if (w.channels != 1) {
    fail(path, fmt::format("channels: expected 1 (mono), found {}", w.channels));
  }
  if (w.sample_rate != rate) {
    fail(path, fmt::format("sample rate: expected {} Hz, found {} Hz", rate, w.sample_rate));
  }
  const std::size_t n = w.samples.size();
  const std::size_t skip = n > length ? (n - length) / 2 : 0;  // longer: its middle
  const std::size_t pad = n < length ? (length - n) / 2 : 0;   // shorter: centred
  std::vector<float> clip(length, 0.0F);
  for (std::size_t i = 0; i < std::min(n, length); ++i) {
    clip[pad + i] = float(w.samples[skip + i]) / 32768.0F;
  }
  return clip;
}

}  // namespace passim

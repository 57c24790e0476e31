// SPDX-License-Identifier: Apache-2.0
/// \file A `llama` GGUF file as the runtime's float model and tokenizer (the same in-memory
/// model and tokenizer as the llama2.c `.bin` + `tokenizer.bin` pair).
#pragma once

#include "passim/io/llama2c.hpp"
#include "passim/io/gguf.hpp"
#include "passim/io/tokenizer.hpp"

namespace passim {

/// The float model of a GGUF file with `general.architecture` = "llama".
///  - Shape: `llama.embedding_length` (dim), `llama.feed_forward_length` (hidden_dim),
///    `llama.block_count`, `llama.attention.head_count`, `llama.attention.head_count_kv`
///    (default: head_count), `llama.context_length` (seq_len); vocab_size is the row count
///    of `token_embd.weight`. Each is range checked like a llama2.c header.
///  - Features the runtime does not implement are rejected: RoPE over part of a head, a RoPE
///    base other than 10000, RoPE scaling, an RMSNorm epsilon other than 1e-5, experts.
///  - Tensors (F32, or F16 widened exactly): `token_embd`, `output_norm`, optional `output`,
///    and per block `attn_norm`, `attn_q/k/v/output`, `ffn_norm`, `ffn_gate` (w1),
///    `ffn_down` (w2), `ffn_up` (w3), all `.weight`, with the shapes the config implies.
///    Q and K rows are used as stored: llama GGUF files keep llama2.c's interleaved-pair RoPE
///    layout. Any other tensor is rejected.
///  - No `output.weight`, or one bit-identical to `token_embd.weight`, gives a shared
///    classifier (`wcls` empty), as in the `.bin` of the same model.
/// `source` is the file name and `sha256` the hash of the whole file. Throws
/// std::runtime_error naming the file, the key or tensor and expected vs found.
[[nodiscard]] FloatModel float_model_from_gguf(const GgufFile& file);

/// The tokenizer in the metadata of a `llama` GGUF file (`tokenizer.ggml.model` = "llama",
/// SentencePiece pieces with merge scores), converted the way llama2.c's tokenizer export
/// does it: U+2581 becomes a space and the BOS and EOS pieces are wrapped in newlines
/// ("\n<s>\n"), so it encodes and decodes exactly like the matching `tokenizer.bin`.
/// Checks: `tokenizer.ggml.tokens` and `.scores` (and `.token_type` if present) have
/// `vocab_size` entries and every score is finite; BOS and EOS ids (if given) are 1 and 2;
/// ids 3..258 are the byte pieces "<0x00>".."<0xFF>"; `tokenizer.ggml.add_space_prefix` (if
/// given) is true.
/// Throws std::runtime_error naming the file, the key and expected vs found.
[[nodiscard]] Tokenizer tokenizer_from_gguf(const GgufFile& file, int vocab_size);

}  // namespace passim

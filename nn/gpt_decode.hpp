// One decoding step of the GPT (nn/gpt.hpp) with a key-value cache: the logits of the next
// token of a batch of sequences from the token at position L alone, the keys and values of
// positions 0..L-1 read from the cache instead of recomputed. The cache's length L may be a
// symbolic extent (core/range.hpp `dynamic`), so one compiled program serves every position.
// Attention at one position is softmax(q·kᵀ / √D) over the L cached keys and its own, in f32:
// the same values the full causal forward computes at that position (gpt_logits), up to the
// order of float sums.
#pragma once

#include <vector>

#include "core/array.hpp"
#include "nn/gpt.hpp"

namespace hedra::nn {

struct GptDecodeStep {
    Array logits;              // (B, vocab)
    std::vector<Array> keys;   // per layer: (B, heads, D), this position's, for the cache
    std::vector<Array> values; // per layer: (B, heads, D)
};

// `tokens` (B) integers at position `position` (a rank-0 integer array, equal to L);
// `cache_keys[l]`, `cache_values[l]` (L, B, heads, D) per layer, or both empty at position 0.
// `params` as gpt_parameters() lists them.
GptDecodeStep gpt_decode_step(const GptConfig& config, const std::vector<Array>& params,
                              const Array& tokens, const Array& position,
                              const std::vector<Array>& cache_keys,
                              const std::vector<Array>& cache_values);

} // namespace hedra::nn

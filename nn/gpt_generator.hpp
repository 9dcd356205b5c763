// Text generation from a trained GPT with a key-value cache: each new token costs one decoding
// step (gpt_decode.hpp) over the cached keys and values of the positions before it, not a
// forward over the whole context. Two programs are compiled once, on first use: the step at
// position 0 (no cache) and the step at every later position (the cache's length symbolic).
// Tokens are chosen greedily or sampled with a temperature and top-k from a seeded generator,
// so a run repeats exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "core/compute.hpp"
#include "nn/gpt.hpp"

namespace hedra::nn {

struct SamplingOptions {
    double temperature = 0.0; // 0: greedy (the most likely token); else logits / temperature
    std::int64_t top_k = 0;   // > 0: sample among the k most likely tokens only
    std::uint64_t seed = 0;   // of the generator that draws the samples
};

class GptGenerator {
public:
    // `params` as gpt_parameters(config) lists them (f32); `batch` sequences generated together.
    GptGenerator(GptConfig config, std::vector<HostArray> params, std::int64_t batch = 1,
                 ComputeOptions options = {});

    // Feeds each sequence's prompt (batch rows of equal length >= 1), then appends `count`
    // tokens to each; returns the new tokens, batch rows of `count`. Prompt and new tokens
    // together must fit the context (config.block): a longer text needs the window to slide,
    // which a cache of past positions cannot do.
    std::vector<std::vector<std::int64_t>>
    generate(const std::vector<std::vector<std::int64_t>>& prompt, std::int64_t count,
             const SamplingOptions& sampling = {});

    // The logits (batch × vocab, row-major) after the last token fed.
    const std::vector<float>& last_logits() const { return logits_; }
    const GptConfig& config() const { return config_; }
    std::int64_t batch() const { return batch_; }
    // Programs compiled so far (at most 2) and the seconds they took.
    int programs_compiled() const { return compiled_; }
    double compile_seconds() const { return compile_seconds_; }

private:
    void feed(const std::vector<std::int64_t>& tokens); // one position of every sequence
    std::int64_t choose(const float* logits, const SamplingOptions& s, std::mt19937_64& engine);

    GptConfig config_;
    std::vector<HostArray> params_;
    std::int64_t batch_;
    ComputeOptions options_;
    std::optional<CompiledProgram> first_, next_;
    // Per layer, keys and values of positions 0..length_-1: (block, B, heads, D) buffers whose
    // first length_ rows the step reads in place.
    std::vector<std::shared_ptr<std::vector<float>>> keys_, values_;
    std::int64_t length_ = 0;
    std::vector<float> logits_;
    int compiled_ = 0;
    double compile_seconds_ = 0;
};

} // namespace hedra::nn

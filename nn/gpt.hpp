// A GPT (nanoGPT's model, bench/peers/gpt_model.py): token and position embeddings, pre-norm
// blocks of causal self-attention and a GELU MLP with residuals, a final layer norm and an
// output head tied to the token embedding; the loss is the mean cross-entropy of the next
// token over all positions. Parameters are a list in nanoGPT's named_parameters() order, with
// PyTorch's layouts and names, so weights exported by PyTorch load unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/array.hpp"
#include "core/host_array.hpp"

namespace hedra::nn {

struct GptConfig {
    std::int64_t vocab = 84;  // characters
    std::int64_t block = 64;  // context length T
    std::int64_t layers = 4;  // transformer blocks
    std::int64_t heads = 4;   // attention heads per block
    std::int64_t embd = 128;  // width C
    bool bias = true;         // biases in every linear and layer norm
};

struct GptParameter {
    std::string name;                 // "transformer.h.0.attn.c_attn.weight"
    std::vector<std::int64_t> shape;  // PyTorch's layout
    bool decay = false;               // weight decay applies (rank >= 2: matrices, embeddings)
};

// The parameters in nanoGPT's named_parameters() order (lm_head.weight is wte's and has no
// entry of its own).
std::vector<GptParameter> gpt_parameters(const GptConfig& config);

// Logits (B, T, vocab) of integer tokens (B, T), T <= config.block; `params` as
// gpt_parameters() lists them.
Array gpt_logits(const GptConfig& config, const std::vector<Array>& params, const Array& tokens);

// The mean cross-entropy of `targets` (B, T) under gpt_logits.
Array gpt_loss(const GptConfig& config, const std::vector<Array>& params, const Array& tokens,
               const Array& targets);

// nanoGPT's initialization drawn from hedra's generator (N(0, 0.02) for matrices and
// embeddings, N(0, 0.02 / sqrt(2 layers)) for the blocks' output projections, zero biases,
// unit layer-norm weights); the replay loads PyTorch's exported weights instead.
std::vector<HostArray> gpt_init(const GptConfig& config, std::uint64_t seed);

} // namespace hedra::nn

// A GPT (nanoGPT's model, bench/peers/gpt_model.py): token and position embeddings, pre-norm
// blocks of causal self-attention and a GELU MLP with residuals, a final layer norm and an
// output head tied to the token embedding; the loss is the mean cross-entropy of the next
// token over all positions. Parameters are a list in nanoGPT's named_parameters() order, with
// PyTorch's layouts and names, so weights exported by PyTorch load unchanged.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/array.hpp"
#include "core/collective.hpp"
#include "core/host_array.hpp"

namespace hedra::nn {

struct GptConfig {
    std::int64_t vocab = 84; // characters
    std::int64_t block = 64; // context length T
    std::int64_t layers = 4; // transformer blocks
    std::int64_t heads = 4;  // attention heads per block
    std::int64_t embd = 128; // width C
    bool bias = true;        // biases in every linear and layer norm
};

struct GptParameter {
    std::string name;                // "transformer.h.0.attn.c_attn.weight"
    std::vector<std::int64_t> shape; // PyTorch's layout
    bool decay = false;              // weight decay applies (rank >= 2: matrices, embeddings)
    // Tensor parallelism: the axis cut across the ranks (-1: every rank holds all of it), made
    // of `blocks` equal blocks each cut alike (3 for attention's [q | k | v]).
    int split_axis = -1;
    int blocks = 1;
};

// The parameters in nanoGPT's named_parameters() order (lm_head.weight is wte's and has no
// entry of its own).
std::vector<GptParameter> gpt_parameters(const GptConfig& config);
// The same on each of `tp` tensor-parallel ranks: the shapes of one rank's shards (Megatron's
// split: attention's heads and the MLP's hidden features are cut; the embeddings, layer
// norms and the output projections' biases are whole on every rank). tp must divide the heads.
std::vector<GptParameter> gpt_parameters(const GptConfig& config, int tp);

// Logits (B, T, vocab) of integer tokens (B, T), T <= config.block; `params` as
// gpt_parameters() lists them.
Array gpt_logits(const GptConfig& config, const std::vector<Array>& params, const Array& tokens);

// The mean cross-entropy of `targets` (B, T) under gpt_logits.
Array gpt_loss(const GptConfig& config, const std::vector<Array>& params, const Array& tokens,
               const Array& targets);

// The model split over the ranks of `tp` (nn/tensor_parallel.hpp): `params` are this rank's
// shards, as gpt_parameters(config, tp->size()) lists them. Attention and the MLP each take a
// column-parallel product and a row-parallel one: two all-reduces per block in the forward
// pass, two in the backward. The token embedding is split by vocabulary rows (padded to a
// multiple of tp): the embedding sums each rank's rows, gpt_logits gives this rank's columns
// of the logits, and gpt_loss their cross-entropy over every rank's columns without gathering
// them (vocab_parallel_cross_entropy). Every rank computes the same loss.
Array gpt_logits(const GptConfig& config, const std::vector<Array>& params, const Array& tokens,
                 const std::shared_ptr<CollectiveGroup>& tp);
Array gpt_loss(const GptConfig& config, const std::vector<Array>& params, const Array& tokens,
               const Array& targets, const std::shared_ptr<CollectiveGroup>& tp);
// Pipeline parallelism: the model cut by layers into `stages` (which must divide the layers).
// Stage 0 holds the embeddings and its blocks; the last stage its blocks, the final norm and
// the output head, which reads a copy of the token embedding: the two copies' gradients are
// summed before every update (PipelineOptions::tied), so they stay equal.
// The indices into gpt_parameters() (or its tensor-parallel list) of stage `stage`'s
// parameters, in the order gpt_stage takes them (the last stage's wte first).
std::vector<std::size_t> gpt_stage_parameters(const GptConfig& config, int stage, int stages);
// Interleaved stages (distributed::PipelineOptions::chunks = v): pipeline rank `rank` of
// `ranks` runs the stages rank, rank + ranks, ..., rank + (v − 1)·ranks of ranks·v; their
// parameters concatenated in that order.
std::vector<std::size_t> gpt_pipeline_parameters(const GptConfig& config, int rank, int ranks,
                                                 int chunks = 1);
// Stage `stage`'s output: the activation (B, T, C) it passes on, or on the last stage the mean
// cross-entropy of `targets`. `received` is the previous stage's activation (none on stage
// 0), `tokens` are read on stage 0 and `targets` on the last; `tp` splits the blocks as
// gpt_loss does.
Array gpt_stage(const GptConfig& config, int stage, int stages, const std::vector<Array>& params,
                const Array& received, const Array& tokens, const Array& targets,
                const std::shared_ptr<CollectiveGroup>& tp = nullptr);
// Rank `rank`'s shards of whole parameters, and whole parameters from every rank's shards.
std::vector<HostArray> gpt_shard(const GptConfig& config, const std::vector<HostArray>& params,
                                 int tp, int rank);
std::vector<HostArray> gpt_unshard(const GptConfig& config,
                                   const std::vector<std::vector<HostArray>>& shards);
// The same for parameter `index` of gpt_parameters() alone (or an array of its shape, as its
// optimizer state).
HostArray gpt_shard_parameter(const GptConfig& config, std::size_t index, const HostArray& whole,
                              int tp, int rank);
HostArray gpt_unshard_parameter(const GptConfig& config, std::size_t index,
                                const std::vector<HostArray>& shards);

// nanoGPT's initialization drawn from hedra's generator (N(0, 0.02) for matrices and
// embeddings, N(0, 0.02 / sqrt(2 layers)) for the blocks' output projections, zero biases,
// unit layer-norm weights); the replay loads PyTorch's exported weights instead.
std::vector<HostArray> gpt_init(const GptConfig& config, std::uint64_t seed);

} // namespace hedra::nn

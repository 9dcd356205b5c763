// nanoGPT's model from the nn layers (see gpt.hpp).
#include "nn/gpt.hpp"

#include <cmath>
#include <cstring>
#include <random>

#include "core/error.hpp"
#include "core/library.hpp"
#include "core/primitives.hpp"
#include "nn/layers.hpp"
#include "nn/tensor_parallel.hpp"
#include "nn/transformer.hpp"

namespace hedra::nn {
namespace {

void check_config(const GptConfig& c) {
    if (c.vocab < 1 || c.block < 1 || c.layers < 1 || c.heads < 1 || c.embd < 1 ||
        c.embd % c.heads != 0)
        throw Error("gpt: the configuration needs positive sizes and a width divisible by the "
                    "heads, got vocab " +
                    std::to_string(c.vocab) + ", block " + std::to_string(c.block) + ", layers " +
                    std::to_string(c.layers) + ", heads " + std::to_string(c.heads) + ", width " +
                    std::to_string(c.embd));
}

// The parameters of one block, after its prefix "transformer.h.<l>.".
struct BlockParams {
    Array ln1_w, ln1_b, attn_w, attn_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, mproj_w, mproj_b;
};

// The next block's parameters from `next(is_bias)` (an empty Array for an absent bias).
template <class Next>
BlockParams block_params(Next& next) {
    BlockParams p;
    p.ln1_w = next(false), p.ln1_b = next(true), p.attn_w = next(false), p.attn_b = next(true),
    p.proj_w = next(false), p.proj_b = next(true);
    p.ln2_w = next(false), p.ln2_b = next(true), p.fc_w = next(false), p.fc_b = next(true),
    p.mproj_w = next(false), p.mproj_b = next(true);
    return p;
}

// One pre-norm block on x (B, T, C), whole or split over the ranks of `tp`.
Array gpt_block(const GptConfig& c, const BlockParams& p, const Array& x_in,
                const std::shared_ptr<CollectiveGroup>& tp) {
    const int ranks = tp ? tp->size() : 1;
    Array x = x_in;
    if (ranks == 1) {
        x = x + causal_self_attention(layer_norm(x, p.ln1_w, p.ln1_b), p.attn_w, p.attn_b, p.proj_w,
                                      p.proj_b, c.heads);
        return x + linear(gelu(linear(layer_norm(x, p.ln2_w, p.ln2_b), p.fc_w, p.fc_b)), p.mproj_w,
                          p.mproj_b);
    }
    // This rank's heads and hidden features; each half ends in one all-reduce, the bias added
    // once after it.
    Array heads = attention_heads(copy_to_group(layer_norm(x, p.ln1_w, p.ln1_b), tp), p.attn_w,
                                  p.attn_b, c.heads / ranks);
    Array attn = all_reduce(merge_heads(heads, p.proj_w, Array()), tp);
    x = x + (p.proj_b.valid() ? attn + p.proj_b : attn);
    Array hidden =
        gelu(column_parallel_linear(layer_norm(x, p.ln2_w, p.ln2_b), p.fc_w, p.fc_b, tp));
    return x + row_parallel_linear(hidden, p.mproj_w, p.mproj_b, tp);
}

// The token embedding's rows on one of `tp` ranks (the vocabulary padded to a multiple of tp)
// and the first of them on this rank.
std::int64_t vocab_rows(const GptConfig& c, int tp) {
    return (c.vocab + tp - 1) / tp;
}
std::int64_t vocab_offset(const GptConfig& c, const std::shared_ptr<CollectiveGroup>& tp) {
    return tp ? tp->rank() * vocab_rows(c, tp->size()) : 0;
}

// The token embeddings of `tokens`: whole, or this rank's rows summed over tp.
Array token_embedding(const GptConfig& c, const Array& tokens, const Array& wte,
                      const std::shared_ptr<CollectiveGroup>& tp) {
    if (!tp || tp->size() == 1) return embedding(tokens, wte);
    return vocab_parallel_embedding(tokens, wte, vocab_offset(c, tp), tp);
}

// The logits of the final hidden state h (B, T, C): whole, or this rank's vocabulary columns.
Array head_logits(const Array& h, const Array& wte, const std::shared_ptr<CollectiveGroup>& tp) {
    return linear(tp && tp->size() > 1 ? copy_to_group(h, tp) : h, wte);
}

// The mean cross-entropy of the logits head_logits gives.
Array head_loss(const GptConfig& c, const Array& logits, const Array& targets,
                const std::shared_ptr<CollectiveGroup>& tp) {
    if (!tp || tp->size() == 1) return cross_entropy(logits, targets);
    return vocab_parallel_cross_entropy(logits, targets, vocab_offset(c, tp), c.vocab, tp);
}

// The parameters before the blocks (wte, wpe), per block, and after them (ln_f).
std::size_t params_per_block(const GptConfig& c) {
    return c.bias ? 12 : 8;
}

} // namespace

std::vector<GptParameter> gpt_parameters(const GptConfig& c) {
    return gpt_parameters(c, 1);
}

std::vector<GptParameter> gpt_parameters(const GptConfig& c, int tp) {
    check_config(c);
    if (tp < 1 || c.heads % tp != 0)
        throw Error("gpt_parameters: " + std::to_string(tp) + " tensor-parallel ranks must " +
                    "divide the " + std::to_string(c.heads) + " heads");
    const std::int64_t C = c.embd, t = tp;
    std::vector<GptParameter> out;
    auto add = [&](std::string name, std::vector<std::int64_t> shape, bool is_bias,
                   int split_axis = -1, int blocks = 1) {
        if (is_bias && !c.bias) return;
        bool decay = shape.size() >= 2;
        out.push_back({std::move(name), std::move(shape), decay, tp > 1 ? split_axis : -1, blocks});
    };
    // Vocabulary parallel: each rank holds V/tp rows, the vocabulary padded to a multiple of tp.
    add("transformer.wte.weight", {(c.vocab + t - 1) / t, C}, false, 0);
    add("transformer.wpe.weight", {c.block, C}, false);
    for (std::int64_t l = 0; l < c.layers; ++l) {
        std::string h = "transformer.h." + std::to_string(l) + ".";
        add(h + "ln_1.weight", {C}, false);
        add(h + "ln_1.bias", {C}, true);
        add(h + "attn.c_attn.weight", {3 * C / t, C}, false, 0, 3);
        add(h + "attn.c_attn.bias", {3 * C / t}, true, 0, 3);
        add(h + "attn.c_proj.weight", {C, C / t}, false, 1);
        add(h + "attn.c_proj.bias", {C}, true);
        add(h + "ln_2.weight", {C}, false);
        add(h + "ln_2.bias", {C}, true);
        add(h + "mlp.c_fc.weight", {4 * C / t, C}, false, 0);
        add(h + "mlp.c_fc.bias", {4 * C / t}, true, 0);
        add(h + "mlp.c_proj.weight", {C, 4 * C / t}, false, 1);
        add(h + "mlp.c_proj.bias", {C}, true);
    }
    add("transformer.ln_f.weight", {C}, false);
    add("transformer.ln_f.bias", {C}, true);
    return out;
}

Array gpt_logits(const GptConfig& c, const std::vector<Array>& params, const Array& tokens) {
    return gpt_logits(c, params, tokens, nullptr);
}

Array gpt_logits(const GptConfig& c, const std::vector<Array>& params, const Array& tokens,
                 const std::shared_ptr<CollectiveGroup>& tp) {
    const int ranks = tp ? tp->size() : 1;
    std::vector<GptParameter> spec = gpt_parameters(c, ranks);
    if (params.size() != spec.size())
        throw Error("gpt_logits: expected " + std::to_string(spec.size()) +
                    " parameters (gpt_parameters), got " + std::to_string(params.size()));
    for (std::size_t i = 0; i < spec.size(); ++i)
        if (params[i].shape().sizes() != spec[i].shape)
            throw Error("gpt_logits: parameter " + spec[i].name + " must have shape " +
                        Shape::of(spec[i].shape).to_string() +
                        (ranks > 1 ? " on each of " + std::to_string(ranks) + " ranks" : "") +
                        ", got " + params[i].describe());
    if (tokens.rank() != 2 || !is_integer(tokens.dtype()) || tokens.shape()[1].size > c.block)
        throw Error("gpt_logits: tokens must be integers (batch, T) with T <= block " +
                    std::to_string(c.block) + ", got " + tokens.describe());
    std::size_t at = 0;
    auto next = [&](bool is_bias) { return is_bias && !c.bias ? Array() : params[at++]; };
    Array wte = next(false), wpe = next(false);
    const std::int64_t T = tokens.shape()[1].size;
    Array positions = reshape(wpe, Shape{range(T), range(c.embd)}); // the first T rows
    Array x = token_embedding(c, tokens, wte, tp) + positions;
    for (std::int64_t l = 0; l < c.layers; ++l)
        x = gpt_block(c, block_params(next), x, tp);
    Array lnf_w = next(false), lnf_b = next(true);
    return head_logits(layer_norm(x, lnf_w, lnf_b), wte, tp); // tied to the token embedding
}

Array gpt_loss(const GptConfig& c, const std::vector<Array>& params, const Array& tokens,
               const Array& targets) {
    return cross_entropy(gpt_logits(c, params, tokens), targets);
}

Array gpt_loss(const GptConfig& c, const std::vector<Array>& params, const Array& tokens,
               const Array& targets, const std::shared_ptr<CollectiveGroup>& tp) {
    return head_loss(c, gpt_logits(c, params, tokens, tp), targets, tp);
}

std::vector<std::size_t> gpt_stage_parameters(const GptConfig& c, int stage, int stages) {
    check_config(c);
    if (stages < 1 || stage < 0 || stage >= stages || c.layers % stages != 0)
        throw Error("gpt_stage_parameters: stage " + std::to_string(stage) + " of " +
                    std::to_string(stages) + " for " + std::to_string(c.layers) +
                    " layers; the stages must divide the layers");
    const std::size_t per = params_per_block(c), per_stage = per * std::size_t(c.layers / stages);
    const std::size_t total = 2 + per * std::size_t(c.layers) + (c.bias ? 2 : 1);
    std::vector<std::size_t> out;
    if (stage == 0)
        out = {0, 1}; // wte, wpe
    else if (stage == stages - 1)
        out.push_back(0); // the head's copy of wte
    for (std::size_t i = 0; i < per_stage; ++i)
        out.push_back(2 + std::size_t(stage) * per_stage + i);
    if (stage == stages - 1)
        for (std::size_t i = 2 + per * std::size_t(c.layers); i < total; ++i)
            out.push_back(i); // ln_f
    return out;
}

std::vector<std::size_t> gpt_pipeline_parameters(const GptConfig& c, int rank, int ranks,
                                                 int chunks) {
    if (ranks < 1 || chunks < 1 || rank < 0 || rank >= ranks)
        throw Error("gpt_pipeline_parameters: rank " + std::to_string(rank) + " of " +
                    std::to_string(ranks) + " with " + std::to_string(chunks) +
                    " chunks each; give 0 <= rank < ranks and chunks >= 1");
    std::vector<std::size_t> out;
    for (int j = 0; j < chunks; ++j) {
        const std::vector<std::size_t> part =
            gpt_stage_parameters(c, j * ranks + rank, ranks * chunks);
        out.insert(out.end(), part.begin(), part.end());
    }
    return out;
}

Array gpt_stage(const GptConfig& c, int stage, int stages, const std::vector<Array>& params,
                const Array& received, const Array& tokens, const Array& targets,
                const std::shared_ptr<CollectiveGroup>& tp) {
    const std::vector<std::size_t> mine = gpt_stage_parameters(c, stage, stages);
    if (params.size() != mine.size())
        throw Error("gpt_stage: stage " + std::to_string(stage) + " of " + std::to_string(stages) +
                    " takes " + std::to_string(mine.size()) +
                    " parameters (gpt_stage_parameters), got " + std::to_string(params.size()));
    std::size_t at = 0;
    auto next = [&](bool is_bias) { return is_bias && !c.bias ? Array() : params[at++]; };
    Array x, wte;
    if (stage == 0) {
        if (!tokens.valid() || tokens.rank() != 2 || !is_integer(tokens.dtype()) ||
            tokens.shape()[1].size > c.block)
            throw Error("gpt_stage: stage 0 takes integer tokens (batch, T) with T <= block " +
                        std::to_string(c.block) + ", got " +
                        (tokens.valid() ? tokens.describe() : std::string("none")));
        wte = next(false);
        Array wpe = next(false);
        const std::int64_t T = tokens.shape()[1].size;
        x = token_embedding(c, tokens, wte, tp) + reshape(wpe, Shape{range(T), range(c.embd)});
    } else {
        if (!received.valid() || received.rank() != 3 || received.shape()[2].size != c.embd)
            throw Error("gpt_stage: stage " + std::to_string(stage) +
                        " takes the previous stage's activation (batch, T, " +
                        std::to_string(c.embd) + "), got " +
                        (received.valid() ? received.describe() : std::string("none")));
        x = received;
        if (stage == stages - 1) wte = next(false);
    }
    for (std::int64_t l = 0; l < c.layers / stages; ++l)
        x = gpt_block(c, block_params(next), x, tp);
    if (stage < stages - 1) return x;
    Array lnf_w = next(false), lnf_b = next(true);
    return head_loss(c, head_logits(layer_norm(x, lnf_w, lnf_b), wte, tp), targets, tp);
}

HostArray gpt_shard_parameter(const GptConfig& c, std::size_t index, const HostArray& whole, int tp,
                              int rank) {
    const std::vector<GptParameter> all = gpt_parameters(c), spec = gpt_parameters(c, tp);
    if (index >= spec.size())
        throw Error("gpt_shard: parameter " + std::to_string(index) + " of " +
                    std::to_string(spec.size()));
    if (rank < 0 || rank >= tp)
        throw Error("gpt_shard: rank " + std::to_string(rank) + " is not one of " +
                    std::to_string(tp) + " tensor-parallel ranks");
    if (whole.sizes() != all[index].shape)
        throw Error("gpt_shard: parameter " + all[index].name + " must have shape " +
                    Shape::of(all[index].shape).to_string() + ", got " +
                    Shape::of(whole.sizes()).to_string());
    const GptParameter& p = spec[index];
    if (p.split_axis < 0) return whole;
    if (index == 0) { // the token embedding: zero rows pad the vocabulary to tp · rows
        HostArray padded({p.shape[0] * tp, c.embd}, whole.dtype());
        std::memcpy(padded.raw_mutable(), whole.raw(), whole.bytes());
        return shard_rows(padded, 0, tp, rank);
    }
    // Each block (q, k, v) cut alike, this rank's parts stacked again.
    std::vector<HostArray> parts;
    for (int b = 0; b < p.blocks; ++b)
        parts.push_back(
            shard_rows(shard_rows(whole, p.split_axis, p.blocks, b), p.split_axis, tp, rank));
    return p.blocks == 1 ? parts[0] : unshard_rows(parts, p.split_axis);
}

HostArray gpt_unshard_parameter(const GptConfig& c, std::size_t index,
                                const std::vector<HostArray>& shards) {
    const int tp = static_cast<int>(shards.size());
    if (tp < 1) throw Error("gpt_unshard: no shards given");
    const std::vector<GptParameter> spec = gpt_parameters(c, tp);
    if (index >= spec.size())
        throw Error("gpt_unshard: parameter " + std::to_string(index) + " of " +
                    std::to_string(spec.size()));
    const GptParameter& p = spec[index];
    for (const HostArray& s : shards)
        if (s.sizes() != p.shape)
            throw Error("gpt_unshard: a shard of " + p.name + " has shape " +
                        Shape::of(s.sizes()).to_string() + ", not " +
                        Shape::of(p.shape).to_string() + " (one of " + std::to_string(tp) +
                        " ranks)");
    if (p.split_axis < 0) return shards[0];
    std::vector<HostArray> blocks;
    for (int b = 0; b < p.blocks; ++b) {
        std::vector<HostArray> ranks;
        for (const HostArray& mine : shards)
            ranks.push_back(p.blocks == 1 ? mine : shard_rows(mine, p.split_axis, p.blocks, b));
        blocks.push_back(unshard_rows(ranks, p.split_axis));
    }
    HostArray out = p.blocks == 1 ? blocks[0] : unshard_rows(blocks, p.split_axis);
    if (index == 0) { // the padding rows of the token embedding dropped
        HostArray whole({c.vocab, c.embd}, out.dtype());
        std::memcpy(whole.raw_mutable(), out.raw(), whole.bytes());
        return whole;
    }
    return out;
}

std::vector<HostArray> gpt_shard(const GptConfig& c, const std::vector<HostArray>& params, int tp,
                                 int rank) {
    const std::size_t n = gpt_parameters(c).size();
    if (params.size() != n)
        throw Error("gpt_shard: expected " + std::to_string(n) +
                    " parameters (gpt_parameters), got " + std::to_string(params.size()));
    std::vector<HostArray> out;
    for (std::size_t i = 0; i < n; ++i)
        out.push_back(gpt_shard_parameter(c, i, params[i], tp, rank));
    return out;
}

std::vector<HostArray> gpt_unshard(const GptConfig& c,
                                   const std::vector<std::vector<HostArray>>& shards) {
    if (shards.empty()) throw Error("gpt_unshard: no shards given");
    const std::size_t n = gpt_parameters(c).size();
    for (const auto& s : shards)
        if (s.size() != n)
            throw Error("gpt_unshard: every rank must give " + std::to_string(n) +
                        " shards, one gives " + std::to_string(s.size()));
    std::vector<HostArray> out;
    for (std::size_t i = 0; i < n; ++i) {
        std::vector<HostArray> per_rank;
        for (const auto& s : shards)
            per_rank.push_back(s[i]);
        out.push_back(gpt_unshard_parameter(c, i, per_rank));
    }
    return out;
}

std::vector<HostArray> gpt_init(const GptConfig& c, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<HostArray> out;
    for (const GptParameter& p : gpt_parameters(c)) {
        std::int64_t n = 1;
        for (std::int64_t s : p.shape)
            n *= s;
        std::vector<float> v(static_cast<std::size_t>(n), 0.0f);
        bool is_bias = p.name.size() >= 4 && p.name.compare(p.name.size() - 4, 4, "bias") == 0;
        bool is_norm = p.name.find("ln_") != std::string::npos;
        if (is_norm && !is_bias) {
            std::fill(v.begin(), v.end(), 1.0f);
        } else if (!is_bias) {
            bool residual = p.name.find("c_proj.weight") != std::string::npos;
            double std = residual ? 0.02 / std::sqrt(2.0 * double(c.layers)) : 0.02;
            for (float& f : v)
                f = static_cast<float>(std * normal(engine));
        }
        out.push_back(HostArray::from(v, p.shape));
    }
    return out;
}

} // namespace hedra::nn

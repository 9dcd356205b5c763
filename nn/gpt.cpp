// nanoGPT's model from the nn layers (see gpt.hpp).
#include "nn/gpt.hpp"

#include <cmath>
#include <random>

#include "core/error.hpp"
#include "core/library.hpp"
#include "nn/layers.hpp"
#include "nn/transformer.hpp"

namespace hedra::nn {
namespace {

void check_config(const GptConfig& c) {
    if (c.vocab < 1 || c.block < 1 || c.layers < 1 || c.heads < 1 || c.embd < 1 ||
        c.embd % c.heads != 0)
        throw Error("gpt: the configuration needs positive sizes and a width divisible by the "
                    "heads, got vocab " +
                    std::to_string(c.vocab) + ", block " + std::to_string(c.block) +
                    ", layers " + std::to_string(c.layers) + ", heads " +
                    std::to_string(c.heads) + ", width " + std::to_string(c.embd));
}

// The parameters of one block, after its prefix "transformer.h.<l>.".
struct BlockParams {
    Array ln1_w, ln1_b, attn_w, attn_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, mproj_w,
        mproj_b;
};

} // namespace

std::vector<GptParameter> gpt_parameters(const GptConfig& c) {
    check_config(c);
    const std::int64_t C = c.embd;
    std::vector<GptParameter> out;
    auto add = [&](std::string name, std::vector<std::int64_t> shape, bool is_bias) {
        if (is_bias && !c.bias) return;
        bool decay = shape.size() >= 2;
        out.push_back({std::move(name), std::move(shape), decay});
    };
    add("transformer.wte.weight", {c.vocab, C}, false);
    add("transformer.wpe.weight", {c.block, C}, false);
    for (std::int64_t l = 0; l < c.layers; ++l) {
        std::string h = "transformer.h." + std::to_string(l) + ".";
        add(h + "ln_1.weight", {C}, false);
        add(h + "ln_1.bias", {C}, true);
        add(h + "attn.c_attn.weight", {3 * C, C}, false);
        add(h + "attn.c_attn.bias", {3 * C}, true);
        add(h + "attn.c_proj.weight", {C, C}, false);
        add(h + "attn.c_proj.bias", {C}, true);
        add(h + "ln_2.weight", {C}, false);
        add(h + "ln_2.bias", {C}, true);
        add(h + "mlp.c_fc.weight", {4 * C, C}, false);
        add(h + "mlp.c_fc.bias", {4 * C}, true);
        add(h + "mlp.c_proj.weight", {C, 4 * C}, false);
        add(h + "mlp.c_proj.bias", {C}, true);
    }
    add("transformer.ln_f.weight", {C}, false);
    add("transformer.ln_f.bias", {C}, true);
    return out;
}

Array gpt_logits(const GptConfig& c, const std::vector<Array>& params, const Array& tokens) {
    std::vector<GptParameter> spec = gpt_parameters(c);
    if (params.size() != spec.size())
        throw Error("gpt_logits: expected " + std::to_string(spec.size()) +
                    " parameters (gpt_parameters), got " + std::to_string(params.size()));
    for (std::size_t i = 0; i < spec.size(); ++i)
        if (params[i].shape().sizes() != spec[i].shape)
            throw Error("gpt_logits: parameter " + spec[i].name + " must have shape " +
                        Shape::of(spec[i].shape).to_string() + ", got " +
                        params[i].describe());
    if (tokens.rank() != 2 || !is_integer(tokens.dtype()) ||
        tokens.shape()[1].size > c.block)
        throw Error("gpt_logits: tokens must be integers (batch, T) with T <= block " +
                    std::to_string(c.block) + ", got " + tokens.describe());
    std::size_t at = 0;
    auto next = [&](bool is_bias) { return is_bias && !c.bias ? Array() : params[at++]; };
    Array wte = next(false), wpe = next(false);
    const std::int64_t T = tokens.shape()[1].size;
    Array positions = reshape(wpe, Shape{range(T), range(c.embd)}); // the first T rows
    Array x = embedding(tokens, wte) + positions;
    for (std::int64_t l = 0; l < c.layers; ++l) {
        BlockParams p;
        p.ln1_w = next(false), p.ln1_b = next(true), p.attn_w = next(false),
        p.attn_b = next(true), p.proj_w = next(false), p.proj_b = next(true);
        p.ln2_w = next(false), p.ln2_b = next(true), p.fc_w = next(false), p.fc_b = next(true),
        p.mproj_w = next(false), p.mproj_b = next(true);
        x = x + causal_self_attention(layer_norm(x, p.ln1_w, p.ln1_b), p.attn_w, p.attn_b,
                                      p.proj_w, p.proj_b, c.heads);
        x = x + linear(gelu(linear(layer_norm(x, p.ln2_w, p.ln2_b), p.fc_w, p.fc_b)), p.mproj_w,
                       p.mproj_b);
    }
    Array lnf_w = next(false), lnf_b = next(true);
    return linear(layer_norm(x, lnf_w, lnf_b), wte); // the head tied to the token embedding
}

Array gpt_loss(const GptConfig& c, const std::vector<Array>& params, const Array& tokens,
               const Array& targets) {
    return cross_entropy(gpt_logits(c, params, tokens), targets);
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

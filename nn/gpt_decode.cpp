// The GPT's decoding step with a key-value cache (see gpt_decode.hpp).
#include "nn/gpt_decode.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/library.hpp"
#include "core/primitives.hpp"
#include "core/transform.hpp"
#include "nn/index_space.hpp"
#include "nn/layers.hpp"
#include "nn/transformer.hpp"

namespace hedra::nn {
namespace {

using detail::as_column;

// Columns [offset, offset + heads·D) of qkv (B, 3C) as (B, heads, D): head h is D columns.
Array heads_of(const Array& qkv, std::int64_t offset, std::int64_t heads, std::int64_t d) {
    const std::int64_t b = qkv.shape()[0].size;
    return view(qkv, Shape::of({b, heads, d}), AffineMap(3, 2, {1, 0, 0, 0, d, 1}, {0, offset}));
}

// Softmax attention of one query per (batch, head) over the cached keys and its own key.
Array attend(const Array& q, const Array& k, const Array& v, const Array& cache_k,
             const Array& cache_v, double scale) {
    Array self = sum(q * k, {2}) * scale;         // (B, H)
    if (!cache_k.valid()) return v;               // softmax over one score: its value
    Array cached = sum(q * cache_k, {3}) * scale; // (L, B, H): q broadcast along the cache
    Array top = maximum(max(cached, {0}), self);
    Array e_cached = exp(cached - top), e_self = exp(self - top);
    Array denominator = sum(e_cached, {0}) + e_self;
    Array numerator = sum(as_column(e_cached) * cache_v, {0}) + as_column(e_self) * v;
    return numerator / as_column(denominator);
}

} // namespace

GptDecodeStep gpt_decode_step(const GptConfig& c, const std::vector<Array>& params,
                              const Array& tokens, const Array& position,
                              const std::vector<Array>& cache_keys,
                              const std::vector<Array>& cache_values) {
    const char* op = "gpt_decode_step";
    std::vector<GptParameter> spec = gpt_parameters(c);
    if (params.size() != spec.size())
        throw Error(std::string(op) + ": expected " + std::to_string(spec.size()) +
                    " parameters (gpt_parameters), got " + std::to_string(params.size()));
    if (tokens.rank() != 1 || !is_integer(tokens.dtype()))
        throw Error(std::string(op) + ": tokens must be integers (batch), got " +
                    tokens.describe());
    if (position.rank() != 0 || !is_integer(position.dtype()))
        throw Error(std::string(op) + ": position must be a rank-0 integer array, got " +
                    position.describe());
    const std::int64_t batch = tokens.shape()[0].size, heads = c.heads, d = c.embd / c.heads;
    const bool cached = !cache_keys.empty();
    if (cache_keys.size() != cache_values.size() ||
        (cached && cache_keys.size() != static_cast<std::size_t>(c.layers)))
        throw Error(std::string(op) + ": the cache needs keys and values for each of the " +
                    std::to_string(c.layers) + " layers (or none at position 0), got " +
                    std::to_string(cache_keys.size()) + " and " +
                    std::to_string(cache_values.size()));
    for (std::size_t l = 0; l < cache_keys.size(); ++l)
        for (const Array* a : {&cache_keys[l], &cache_values[l]})
            if (a->rank() != 4 || a->shape()[1].size != batch || a->shape()[2].size != heads ||
                a->shape()[3].size != d)
                throw Error(std::string(op) + ": layer " + std::to_string(l) +
                            "'s cache must be (length, " + std::to_string(batch) + ", " +
                            std::to_string(heads) + ", " + std::to_string(d) + "), got " +
                            a->describe());
    std::size_t at = 0;
    auto next = [&](bool is_bias) { return is_bias && !c.bias ? Array() : params[at++]; };
    Array wte = next(false), wpe = next(false);
    Array x = embedding(tokens, wte) + take(wpe, position); // (B, C)
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    GptDecodeStep out;
    for (std::int64_t l = 0; l < c.layers; ++l) {
        Array ln1_w = next(false), ln1_b = next(true), attn_w = next(false), attn_b = next(true),
              proj_w = next(false), proj_b = next(true);
        Array ln2_w = next(false), ln2_b = next(true), fc_w = next(false), fc_b = next(true),
              mproj_w = next(false), mproj_b = next(true);
        Array qkv = linear(layer_norm(x, ln1_w, ln1_b), attn_w, attn_b); // (B, 3C)
        Array q = heads_of(qkv, 0, heads, d), k = heads_of(qkv, c.embd, heads, d),
              v = heads_of(qkv, 2 * c.embd, heads, d);
        const auto li = static_cast<std::size_t>(l);
        Array a = attend(q, k, v, cached ? cache_keys[li] : Array(),
                         cached ? cache_values[li] : Array(), scale);
        // The output projection reads w_proj (C, C) as (C, heads, D): no concatenation.
        Array w = view(proj_w, Shape::of({c.embd, heads, d}),
                       AffineMap(3, 2, {1, 0, 0, 0, d, 1}, {0, 0}));
        x = x + linear(a, w, proj_b);
        x = x + linear(gelu(linear(layer_norm(x, ln2_w, ln2_b), fc_w, fc_b)), mproj_w, mproj_b);
        out.keys.push_back(k);
        out.values.push_back(v);
    }
    Array lnf_w = next(false), lnf_b = next(true);
    out.logits = linear(layer_norm(x, lnf_w, lnf_b), wte);
    return out;
}

} // namespace hedra::nn

// clip_grad_norm (clip_grad.hpp).
#include "nn/clip_grad.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/library.hpp"

namespace hedra::nn {

ClippedGradients clip_grad_norm(const std::vector<Array>& grads, double max_norm) {
    return clip_grad_norm(grads, max_norm, GradientShards{});
}

ClippedGradients clip_grad_norm(const std::vector<Array>& grads, double max_norm,
                                const GradientShards& shards) {
    for (const auto* flags : {&shards.sharded, &shards.uncounted})
        if (!flags->empty() && flags->size() != grads.size())
            throw Error("clip_grad_norm: " + std::to_string(flags->size()) +
                        " sharded (or uncounted) flags for " + std::to_string(grads.size()) +
                        " gradients; give one per gradient");
    if (!(max_norm > 0.0) || !std::isfinite(max_norm))
        throw Error("clip_grad_norm: max_norm must be positive and finite, got " +
                    std::to_string(max_norm));
    if (grads.empty()) throw Error("clip_grad_norm: no gradients given");
    Array squares, shard_squares;
    for (std::size_t i = 0; i < grads.size(); ++i) {
        if (!is_float(grads[i].dtype()))
            throw Error("clip_grad_norm: gradient " + std::to_string(i) + " " +
                        grads[i].describe() + " is not a float array");
        if (!shards.uncounted.empty() && shards.uncounted[i]) continue;
        Array norm = sqrt(sum(grads[i] * grads[i]));
        Array& into =
            shards.group && !shards.sharded.empty() && shards.sharded[i] ? shard_squares : squares;
        into = into.valid() ? into + norm * norm : norm * norm;
    }
    if (shard_squares.valid()) {
        Array all = all_reduce(shard_squares, shards.group);
        squares = squares.valid() ? squares + all : all;
    }
    if (!squares.valid()) squares = sum(grads[0] * 0.0f); // every gradient counted elsewhere
    if (shards.stages) squares = all_reduce(squares, shards.stages);
    ClippedGradients out;
    out.total_norm = sqrt(squares);
    Array scale = minimum(max_norm / (out.total_norm + 1e-6), 1.0);
    for (const Array& g : grads)
        out.grads.push_back(g * (g.dtype() == scale.dtype() ? scale : cast(scale, g.dtype())));
    return out;
}

} // namespace hedra::nn

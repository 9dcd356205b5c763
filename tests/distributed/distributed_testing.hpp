// The model and data of the data-parallel tests (in-process and under mpirun): a two-layer
// classifier on 5 features, batches from a fixed rule, AdamW.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hedra.hpp"
#include "nn/layers.hpp"
#include "nn/trainer.hpp"

namespace hedra::distributed::test {

inline constexpr int kIn = 5, kHidden = 7, kClasses = 3;

inline HostArray values(std::vector<std::int64_t> sizes, unsigned seed, double scale = 1.0) {
    HostArray a(std::move(sizes), DType::F32);
    std::uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
    for (std::int64_t i = 0; i < a.size(); ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        a.set_flat(i, scale * (static_cast<double>(x % 2001) / 1000.0 - 1.0));
    }
    return a;
}

inline std::vector<HostArray> batch(int b, unsigned seed) {
    HostArray x = values({b, kIn}, seed);
    HostArray y({b}, DType::I64);
    for (int i = 0; i < b; ++i)
        y.set_flat(i,
                   (x.flat(i * kIn) + 2 * x.flat(i * kIn + 1) > 0.2) + (x.flat(i * kIn + 2) > 0.5));
    return {x, y};
}

// With clip_norm > 0, global-norm clipping; the loss also returns the count of correct rows
// (i64) and the batch's mean squared logit (f32) as extra outputs.
// decay_mask: AdamW's per-parameter flags (empty: its default). precision: TrainerOptions'.
// backend: where the programs run.
inline nn::Trainer make_trainer(unsigned seed, double clip_norm = 0.0,
                                std::vector<bool> decay_mask = {}, DType precision = DType::F32,
                                const std::string& backend = "openmp") {
    std::vector<HostArray> params{
        values({kHidden, kIn}, seed, 0.5), values({kHidden}, seed + 1, 0.1),
        values({kClasses, kHidden}, seed + 2, 0.5), values({kClasses}, seed + 3, 0.1)};
    nn::TrainerOptions o;
    o.compute.backend = backend;
    o.compute.num_threads = 1;
    o.clip_norm = clip_norm;
    o.precision = precision;
    auto loss = [](const std::vector<Array>& p, const std::vector<Array>& in) {
        Array h = tanh(nn::linear(in[0], p[0], p[1]));
        Array logits = nn::linear(h, p[2], p[3]);
        return nn::LossOutputs{
            nn::cross_entropy(logits, in[1]),
            {nn::count_correct(logits, in[1]), mean(lazy([](auto v) { return v * v; }, logits))}};
    };
    return nn::Trainer(
        nn::LossOutputsFunction(loss),
        {{{nn::kAnyExtent, kIn}, DType::F32, "x"}, {{nn::kAnyExtent}, DType::I64, "y"}},
        std::move(params),
        std::make_shared<nn::AdamW>(
            nn::AdamWOptions{0.05, 0.9, 0.99, 1e-8, 0.01, std::move(decay_mask)}),
        o);
}

inline std::vector<float> flat(const std::vector<HostArray>& arrays) {
    std::vector<float> out;
    for (const HostArray& a : arrays)
        for (std::int64_t i = 0; i < a.size(); ++i)
            out.push_back(static_cast<const float*>(a.raw())[i]);
    return out;
}

} // namespace hedra::distributed::test

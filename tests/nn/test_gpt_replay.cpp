// Replay of PyTorch training a tiny GPT (bench/peers/gpt_model.py's model, init, AdamW,
// clipping and schedule at 1 layer, 2 heads, width 16, context 16, batch 2): tests/data/w7_tiny
// holds PyTorch's initial weights, the batch of each of 10 steps, their learning rates, losses and
// gradient norms (tests/data/w7_tiny/make_export.py wrote them). nn::Trainer with nn::gpt_loss
// starts from those weights and must see every loss and gradient norm to 1e-4 relative; with
// TrainerOptions::precision bf16, PyTorch's bf16 autocast run (losses_bf16.npy,
// grad_norms_bf16.npy: make_export.py --autocast bf16) to 5e-3.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "nn/gpt.hpp"
#include "nn/io/npy_reader.hpp"
#include "nn/optim.hpp"
#include "nn/trainer.hpp"
#include "nn_training_testing.hpp"

using namespace hedra;
using namespace hedra::nn;

namespace {

std::filesystem::path tiny_export() {
    return std::filesystem::path(HEDRA_TEST_DATA_DIR) / "w7_tiny";
}

HostArray load(const std::string& name) {
    return read_npy((tiny_export() / (name + ".npy")).string());
}

// Row `i` of an int64 (steps, batch, block) array.
HostArray step_slice(const HostArray& a, std::int64_t i) {
    const std::int64_t rows = a.sizes()[1], cols = a.sizes()[2];
    auto v = a.values<std::int64_t>();
    std::vector<std::int64_t> out(v.begin() + i * rows * cols, v.begin() + (i + 1) * rows * cols);
    return HostArray::from(out, {rows, cols});
}

double relative(double a, double b) {
    return std::abs(a - b) / std::abs(b);
}

struct ReplayDifference {
    double loss = 0, norm = 0; // the largest relative differences over the steps
};

// nn::Trainer from PyTorch's initial weights over its 10 batches and learning rates, compared
// with `losses` and `norms` step by step (each within `bound` relative).
ReplayDifference replay(DType precision, const std::string& losses_file,
                        const std::string& norms_file, double bound) {
    const GptConfig cfg{.vocab = load("transformer.wte.weight").sizes()[0],
                        .block = 16,
                        .layers = 1,
                        .heads = 2,
                        .embd = 16,
                        .bias = true};
    const std::vector<GptParameter> specs = gpt_parameters(cfg);
    std::vector<HostArray> init;
    TrainerOptions options;
    AdamWOptions adamw{1e-2, 0.9, 0.99, 1e-8, 0.1};
    for (const GptParameter& p : specs) {
        init.push_back(load(p.name));
        REQUIRE(init.back().sizes() == p.shape);
        options.param_names.push_back(p.name);
        adamw.decay_mask.push_back(p.decay);
    }
    options.clip_norm = 1.0;
    options.compute = test::training_backend();
    options.precision = precision;
    const HostArray tokens = load("tokens"), targets = load("targets");
    const std::vector<double> lrs = load("lr").to_doubles(),
                              losses = load(losses_file).to_doubles(),
                              norms = load(norms_file).to_doubles();
    const std::int64_t steps = tokens.sizes()[0], batch = tokens.sizes()[1];
    REQUIRE(steps == 10);
    REQUIRE(std::int64_t(losses.size()) == steps);

    Trainer trainer(
        [cfg](const std::vector<Array>& params, const std::vector<Array>& in) {
            return gpt_loss(cfg, params, in[0], in[1]);
        },
        {{{batch, cfg.block}, DType::I64, "tokens"}, {{batch, cfg.block}, DType::I64, "targets"}},
        init, std::make_shared<AdamW>(adamw), options);
    ReplayDifference worst;
    for (std::int64_t i = 0; i < steps; ++i) {
        StepResult r = trainer.step_outputs({step_slice(tokens, i), step_slice(targets, i)},
                                            lrs[std::size_t(i)]);
        const double loss = r.loss.flat(0), norm = r.grad_norm.flat(0);
        CAPTURE(i);
        CHECK(relative(loss, losses[std::size_t(i)]) <= bound);
        CHECK(relative(norm, norms[std::size_t(i)]) <= bound);
        worst.loss = std::max(worst.loss, relative(loss, losses[std::size_t(i)]));
        worst.norm = std::max(worst.norm, relative(norm, norms[std::size_t(i)]));
    }
    CHECK(trainer.programs_compiled() == 1); // the schedule never recompiles
    return worst;
}

} // namespace

TEST_CASE("gpt replay: 10 AdamW steps with clipping and a schedule match PyTorch's losses") {
    const ReplayDifference d = replay(DType::F32, "losses", "grad_norms", 1e-4);
    MESSAGE("max relative difference to PyTorch over 10 steps: loss "
            << d.loss << ", gradient norm " << d.norm);
}

// PyTorch under torch.autocast (bf16 on the CPU) against TrainerOptions::precision = bf16. Its
// fused CPU attention keeps scores and probabilities in f32 where hedra rounds them to bf16 for
// the products, so the bound is bf16's: 5e-3 relative (measured: losses 5.1e-5, gradient norms
// 7.1e-4).
TEST_CASE("gpt replay: the same 10 steps in bf16 match PyTorch's bf16 autocast") {
    const ReplayDifference d = replay(DType::BF16, "losses_bf16", "grad_norms_bf16", 5e-3);
    MESSAGE("max relative difference to PyTorch's bf16 autocast over 10 steps: loss "
            << d.loss << ", gradient norm " << d.norm);
}

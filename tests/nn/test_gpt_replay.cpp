// Replay of PyTorch training a tiny GPT (bench/peers/gpt_model.py's model, init, AdamW,
// clipping and schedule at 1 layer, 2 heads, width 16, context 16, batch 2): tests/data/w7_tiny
// holds PyTorch's initial weights, the batch of each of 10 steps, their learning rates, losses and
// gradient norms (tests/data/w7_tiny/make_export.py wrote them). nn::Trainer with nn::gpt_loss
// starts from those weights and must see every loss and gradient norm to 1e-4 relative.
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

} // namespace

TEST_CASE("gpt replay: 10 AdamW steps with clipping and a schedule match PyTorch's losses") {
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
    const HostArray tokens = load("tokens"), targets = load("targets");
    const std::vector<double> lrs = load("lr").to_doubles(), losses = load("losses").to_doubles(),
                              norms = load("grad_norms").to_doubles();
    const std::int64_t steps = tokens.sizes()[0], batch = tokens.sizes()[1];
    REQUIRE(steps == 10);
    REQUIRE(std::int64_t(losses.size()) == steps);

    Trainer trainer(
        [cfg](const std::vector<Array>& params, const std::vector<Array>& in) {
            return gpt_loss(cfg, params, in[0], in[1]);
        },
        {{{batch, cfg.block}, DType::I64, "tokens"}, {{batch, cfg.block}, DType::I64, "targets"}},
        init, std::make_shared<AdamW>(adamw), options);
    double worst_loss = 0, worst_norm = 0;
    for (std::int64_t i = 0; i < steps; ++i) {
        StepResult r = trainer.step_outputs({step_slice(tokens, i), step_slice(targets, i)},
                                            lrs[std::size_t(i)]);
        const double loss = r.loss.flat(0), norm = r.grad_norm.flat(0);
        CAPTURE(i);
        CHECK(relative(loss, losses[std::size_t(i)]) <= 1e-4);
        CHECK(relative(norm, norms[std::size_t(i)]) <= 1e-4);
        worst_loss = std::max(worst_loss, relative(loss, losses[std::size_t(i)]));
        worst_norm = std::max(worst_norm, relative(norm, norms[std::size_t(i)]));
    }
    MESSAGE("max relative difference to PyTorch over 10 steps: loss "
            << worst_loss << ", gradient norm " << worst_norm);
    CHECK(trainer.programs_compiled() == 1); // the schedule never recompiles
}

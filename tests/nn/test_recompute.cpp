// Activation recomputation (ad/recompute.hpp, TrainerOptions::recompute): the gradients with
// the forward's maps computed again equal the stored ones; the rewritten graph holds distinct
// copies of the maps it reads; a tiny GPT trains the same with it over AdamW steps on openmp
// and the reference, and its step's arena is smaller.
#include <cmath>
#include <cstring>

#include "ad/grad.hpp"
#include "ad/recompute.hpp"
#include "core/node.hpp"
#include "hedra.hpp"
#include "nn/gpt.hpp"
#include "nn/trainer.hpp"
#include "nn_layer_testing.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

std::size_t map_count(const std::vector<Array>& arrays) {
    std::vector<NodePtr> nodes;
    for (const Array& a : arrays)
        nodes.push_back(a.node());
    std::size_t n = 0;
    for (const NodePtr& node : topological_order(nodes))
        n += node->kind == NodeKind::Map;
    return n;
}

double max_relative(const HostArray& a, const HostArray& b) {
    double worst = 0;
    for (std::int64_t i = 0; i < a.size(); ++i) {
        const double x = a.flat(i), y = b.flat(i);
        worst = std::max(worst, std::abs(x - y) / std::max(1e-6, std::abs(y)));
    }
    return worst;
}

std::vector<HostArray> tokens(std::int64_t batch, std::int64_t block, std::int64_t vocab,
                              std::uint64_t seed) {
    std::vector<double> r = random_values(static_cast<std::size_t>(2 * batch * block), seed, 0, 1);
    std::vector<std::int64_t> x, y;
    for (std::size_t i = 0; i < r.size(); ++i)
        (i % 2 ? y : x).push_back(static_cast<std::int64_t>(r[i] * double(vocab)) % vocab);
    return {HostArray::from(x, {batch, block}), HostArray::from(y, {batch, block})};
}

} // namespace

TEST_CASE("recompute: gradients through copies of the forward's maps are the same") {
    Array x = array(random_values(6 * 8, 3), Shape::of({6, 8}));
    Array w = array(random_values(8 * 5, 4), Shape::of({8, 5}));
    Array h = tanh(matmul(x, w));              // stored for the backward
    Array p = exp(h) / sum(exp(h), {1}, true); // softmax-like rows
    Array loss = sum(p * p * log(p));
    std::vector<Array> grads = grad(loss, {x, w});
    std::vector<Array> again = ad::recompute_maps({loss}, grads);
    CHECK(map_count(again) > map_count(grads)); // the copies are nodes of their own
    std::vector<HostArray> a = compute(grads[0], grads[1]);
    std::vector<HostArray> b = compute(again[0], again[1]);
    for (std::size_t i = 0; i < a.size(); ++i)
        CHECK(max_relative(b[i], a[i]) < 1e-5);
}

TEST_CASE("recompute: a tiny GPT trains the same and its step's arena is smaller") {
    const GptConfig config{.vocab = 11, .block = 16, .layers = 2, .heads = 2, .embd = 32};
    const std::int64_t batch = 4;
    for (const std::string backend : {"openmp", "reference"}) {
        INFO(backend);
        std::vector<std::unique_ptr<Trainer>> trainers;
        for (bool recompute : {false, true}) {
            TrainerOptions o;
            o.clip_norm = 1.0;
            o.compute.backend = backend;
            o.recompute = recompute;
            trainers.push_back(std::make_unique<Trainer>(
                [config](const std::vector<Array>& ps, const std::vector<Array>& in) {
                    return gpt_loss(config, ps, in[0], in[1]);
                },
                std::vector<InputSpec>{{{batch, config.block}, DType::I64, "tokens"},
                                       {{batch, config.block}, DType::I64, "targets"}},
                gpt_init(config, 5),
                std::make_shared<AdamW>(AdamWOptions{1e-2, 0.9, 0.99, 1e-8, 0.1}), o));
        }
        for (int step = 0; step < 3; ++step) {
            const auto data = tokens(batch, config.block, config.vocab, 50 + step);
            const double stored = trainers[0]->step(data, 1e-2);
            const double recomputed = trainers[1]->step(data, 1e-2);
            CHECK(std::abs(recomputed - stored) <= 1e-6 * std::abs(stored));
        }
        for (std::size_t i = 0; i < trainers[0]->params().size(); ++i)
            CHECK(max_relative(trainers[1]->params()[i], trainers[0]->params()[i]) < 1e-4);
        if (backend == "openmp") {
            const auto data = tokens(batch, config.block, config.vocab, 60);
            CHECK(trainers[1]->step_memory(data)->arena < trainers[0]->step_memory(data)->arena);
        }
    }
}

// Training on real data (Fashion-MNIST, skipped when not installed): the examples' MLP trained
// for 256 steps on the first 2000 training images must bring its loss under a fixed bound, and
// small MLPs trained with SGD + momentum and with Adam must too.
#include "nn/model.hpp"
#include "nn/train_step.hpp"
#include "nn_training_testing.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

constexpr std::int64_t kSubset = 2000, kBatch = 64;

MnistSplit first_examples(const MnistSplit& split, std::int64_t n) {
    auto rows = sequential_indices(n);
    return {gather_rows(split.images, rows), gather_rows(split.labels, rows)};
}

// Mean loss of each epoch.
std::vector<double> train(TrainStep& step, const MnistSplit& train, int epochs) {
    std::vector<double> means;
    const std::int64_t steps = batch_count(train.size(), kBatch, false);
    for (int e = 0; e < epochs; ++e) {
        auto order = shuffled_indices(train.size(), 0, static_cast<std::uint64_t>(e));
        double total = 0.0;
        for (std::int64_t s = 0; s < steps; ++s) {
            auto batch = mnist_batch(train, order, s, kBatch, step.example_shape());
            total += step.step(batch.images, batch.labels);
        }
        means.push_back(total / static_cast<double>(steps));
        MESSAGE("epoch " << e + 1 << " mean loss " << means.back());
    }
    return means;
}

double accuracy(TrainStep& step, const MnistSplit& test) {
    auto order = sequential_indices(test.size());
    auto batch = mnist_batch(test, order, 0, test.size(), step.example_shape());
    return static_cast<double>(step.count_correct(batch.images, batch.labels)) /
           static_cast<double>(test.size());
}

} // namespace

TEST_CASE("nn training: the 784-300-100-10 mlp's loss falls below a bound on a subset") {
    const MnistDataset* data = fashion_mnist();
    if (!data) return;
    MnistSplit subset = first_examples(data->train, kSubset);
    TrainStep step(mlp({784, 300, 100, 10}, 0), std::make_shared<Sgd>(SgdOptions{0.1}),
                   training_backend());
    auto losses = train(step, subset, 8); // 8 × 32 = 256 steps
    CHECK(losses.front() > 1.5);          // chance level is ln 10 = 2.3
    CHECK(losses.back() < 0.85);          // about 0.64 when written
    const double acc = accuracy(step, first_examples(data->test, 2000));
    MESSAGE("test accuracy on 2000 test images: " << acc);
    CHECK(acc > 0.6);
}

TEST_CASE("nn training: sgd with momentum and adam train a small mlp") {
    const MnistDataset* data = fashion_mnist();
    if (!data) return;
    MnistSplit subset = first_examples(data->train, kSubset);
    std::vector<std::shared_ptr<const Optimizer>> optimizers{
        std::make_shared<Sgd>(SgdOptions{0.05, 0.9}), std::make_shared<Adam>(AdamOptions{1e-3})};
    for (const auto& opt : optimizers) {
        INFO("optimizer " << opt->name());
        TrainStep step(mlp({784, 64, 10}, 1), opt, training_backend());
        auto losses = train(step, subset, 3);
        CHECK(losses.back() < 0.9);
        CHECK(losses.back() < losses.front());
    }
}

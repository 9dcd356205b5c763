// Replay of PyTorch's training of the 784-300-100-10 MLP on Fashion-MNIST (batch 64, SGD lr
// 0.1): tests/data/w2a_replay/w2a_replay_seed0.npz holds PyTorch's seed-0 initial weights, its
// epoch-1 shuffle order and the loss of each of the first 50 steps. hedra starts from those
// weights and takes the batches in that order; it must see the same losses step by step
// (relative difference under 1e-4; about 2e-7 when written) and, after the whole epoch, PyTorch's
// test accuracy. The archive is written by tests/data/w2a_replay/make_replay.py. Skipped when
// Fashion-MNIST is missing.
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>

#include "nn/io/npy_reader.hpp"
#include "nn/model.hpp"
#include "nn/train_step.hpp"
#include "nn_training_testing.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

// PyTorch's test accuracy after this epoch (tests/data/w2a_replay/w2a_replay.txt, 1 thread;
// 0.8212 with 2 threads: summation order moves it by about 0.001).
constexpr double kPytorchEpochAccuracy = 0.8202;

std::filesystem::path replay_archive() {
    return std::filesystem::path(HEDRA_TEST_DATA_DIR) / "w2a_replay" / "w2a_replay_seed0.npz";
}

struct Replay {
    std::map<std::string, HostArray> arrays;
    const MnistDataset* data = nullptr;
    std::unique_ptr<TrainStep> step;
};

// The archive, the data, and a training step starting from PyTorch's weights; false (with a
// message) when something is missing.
bool start_replay(Replay& r) {
    r.data = fashion_mnist();
    if (!r.data) return false;
    r.arrays = read_npz(replay_archive().string());
    r.step = std::make_unique<TrainStep>(
        mlp({784, 300, 100, 10}, 0), std::make_shared<Sgd>(SgdOptions{0.1}), training_backend());
    // PyTorch's nn.Sequential(Linear, ReLU, Linear, ReLU, Linear) numbers its layers 0, 2, 4.
    std::vector<HostArray> params;
    for (const char* layer : {"init_0", "init_2", "init_4"})
        for (const char* kind : {".weight", ".bias"})
            params.push_back(r.arrays.at(std::string(layer) + kind));
    r.step->set_params(params);
    return true;
}

} // namespace

TEST_CASE("nn replay: pytorch's first 50 mlp losses, step by step") {
    Replay r;
    if (!start_replay(r)) return;
    const MnistDataset* data = r.data;
    TrainStep& step = *r.step;
    auto& arrays = r.arrays;
    const HostArray& perm = arrays.at("perm_epoch1");
    const HostArray& expect = arrays.at("first50_step_losses");
    REQUIRE(perm.size() == data->train.size());
    auto order = perm.values<std::int64_t>();
    double worst = 0.0;
    for (std::int64_t s = 0; s < expect.size(); ++s) {
        auto batch = mnist_batch(data->train, order, s, 64, {784});
        const double loss = step.step(batch.images, batch.labels);
        const double want = expect.flat(s), rel = std::abs(loss - want) / std::abs(want);
        worst = std::max(worst, rel);
        INFO("step " << s << ": hedra " << loss << ", pytorch " << want);
        CHECK(rel < 1e-4);
    }
    MESSAGE("largest relative difference from pytorch over 50 steps: " << worst);
}

TEST_CASE("nn replay: a whole epoch from pytorch's weights and order gives its test accuracy") {
    Replay r;
    if (!start_replay(r)) return;
    auto order = r.arrays.at("perm_epoch1").values<std::int64_t>();
    const std::int64_t steps = batch_count(r.data->train.size(), 64, false);
    for (std::int64_t s = 0; s < steps; ++s) {
        auto batch = mnist_batch(r.data->train, order, s, 64, {784});
        r.step->step(batch.images, batch.labels);
    }
    auto all = sequential_indices(r.data->test.size());
    auto test = mnist_batch(r.data->test, all, 0, r.data->test.size(), {784});
    const double accuracy = static_cast<double>(r.step->count_correct(test.images, test.labels)) /
                            static_cast<double>(r.data->test.size());
    MESSAGE("test accuracy after the replayed epoch: " << accuracy << " (pytorch "
                                                       << kPytorchEpochAccuracy << ")");
    CHECK(std::abs(accuracy - kPytorchEpochAccuracy) < 0.005);
}

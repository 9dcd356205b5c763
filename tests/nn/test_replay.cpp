// Replay of PyTorch's first 50 training steps of the 784-300-100-10 MLP on Fashion-MNIST
// (batch 64, SGD lr 0.1): shared/bench/results/w2a_replay_seed0.npz holds PyTorch's seed-0
// initial weights, its epoch-1 shuffle order and the loss of each of the first 50 steps. hedra
// starts from those weights, takes the batches in that order, and must see the same losses
// step by step (relative difference under 1e-4; about 2e-7 when written). Skipped when the archive
// or the data is missing.
#include <cmath>
#include <filesystem>

#include "nn/model.hpp"
#include "nn/npy_reader.hpp"
#include "nn/train_step.hpp"
#include "nn_training_testing.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

// ../shared/bench/results beside the repository (as CI checks it out), else /work/shared.
std::filesystem::path replay_archive() {
    std::filesystem::path repo =
        std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
    std::filesystem::path path = repo.parent_path() / "shared/bench/results/w2a_replay_seed0.npz";
    if (!std::filesystem::exists(path)) path = "/work/shared/bench/results/w2a_replay_seed0.npz";
    return path;
}

} // namespace

TEST_CASE("nn replay: pytorch's first 50 mlp losses, step by step") {
    const std::filesystem::path path = replay_archive();
    if (!std::filesystem::exists(path)) {
        MESSAGE("skipped: w2a_replay_seed0.npz is not present (looked in ../shared/bench/results)");
        return;
    }
    const MnistDataset* data = fashion_mnist();
    if (!data) return;
    auto arrays = read_npz(path.string());
    TrainStep step(mlp({784, 300, 100, 10}, 0), std::make_shared<Sgd>(SgdOptions{0.1}),
                   training_backend());
    // PyTorch's nn.Sequential(Linear, ReLU, Linear, ReLU, Linear) numbers its layers 0, 2, 4.
    std::vector<HostArray> params;
    for (const char* layer : {"init_0", "init_2", "init_4"})
        for (const char* kind : {".weight", ".bias"})
            params.push_back(arrays.at(std::string(layer) + kind));
    step.set_params(params);
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

// On a GPU: the MLP's gradients and a few compiled training steps (nn::TrainStep) of the MLP
// and the CNN on "cuda" equal the reference backend's within float tolerance. Without a device:
// "skipped: no CUDA device (...)".
#include "cuda/cuda_testing.hpp"
#include "nn/layers.hpp"
#include "nn/model.hpp"
#include "nn/optim.hpp"
#include "nn/train_step.hpp"

using namespace hedra;

TEST_CASE("cuda device: MLP gradients equal the reference") {
    if (test::skip_without_device()) return;
    nn::Model model = nn::mlp({64, 48, 10}, 7);
    test::Batch data = test::batch(32, 64, 1);
    std::vector<Array> params;
    for (const HostArray& p : model.params)
        params.push_back(array(p));
    Array loss = nn::softmax_cross_entropy(model.forward(params, array(data.x)), array(data.y));
    std::vector<Array> grads = grad(loss, params);
    std::vector<NodePtr> nodes{loss.node()};
    for (const Array& g : grads)
        nodes.push_back(g.node());
    std::vector<HostArray> want = get_backend("reference")->evaluate(nodes, {});
    std::vector<HostArray> got = get_backend("cuda")->evaluate(nodes, {});
    REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
        CAPTURE(k);
        test::check_same(got[k], want[k], false, 1e-4, 1e-6);
    }
}

TEST_CASE("cuda device: MLP training steps equal the reference") {
    if (test::skip_without_device()) return;
    auto sgd = std::make_shared<nn::Sgd>(nn::SgdOptions{0.1, 0.9});
    ComputeOptions on_cuda, on_reference;
    on_cuda.backend = "cuda";
    on_reference.backend = "reference";
    nn::TrainStep gpu(nn::mlp({64, 48, 10}, 7), sgd, on_cuda);
    nn::TrainStep ref(nn::mlp({64, 48, 10}, 7), sgd, on_reference);
    for (unsigned step = 0; step < 5; ++step) {
        CAPTURE(step);
        test::Batch data = test::batch(32, 64, step + 2);
        double lg = gpu.step(data.x, data.y), lr = ref.step(data.x, data.y);
        CHECK(lg == doctest::Approx(lr).epsilon(1e-4));
    }
    for (std::size_t k = 0; k < gpu.params().size(); ++k) {
        CAPTURE(k);
        test::check_same(gpu.params()[k], ref.params()[k], false, 1e-3, 1e-5);
    }
}

TEST_CASE("cuda device: CNN training steps equal the reference") {
    // nn::mnist_cnn with 4 and 8 channels: every template of the step (convolutions and their
    // gradients, pools and their scatter back, the loss's block reductions, the chained
    // momentum epilogues) against the reference interpreter.
    if (test::skip_without_device()) return;
    auto sgd = std::make_shared<nn::Sgd>(nn::SgdOptions{0.1, 0.9});
    ComputeOptions on_cuda, on_reference;
    on_cuda.backend = "cuda";
    on_reference.backend = "reference";
    nn::TrainStep gpu(nn::mnist_cnn(7, 4, 8), sgd, on_cuda);
    nn::TrainStep ref(nn::mnist_cnn(7, 4, 8), sgd, on_reference);
    for (unsigned step = 0; step < 3; ++step) {
        CAPTURE(step);
        test::Batch data = test::batch(8, 28 * 28, step + 2);
        std::span<const float> flat = data.x.values<float>();
        HostArray images =
            HostArray::from(std::vector<float>(flat.begin(), flat.end()), {8, 1, 28, 28});
        double lg = gpu.step(images, data.y), lr = ref.step(images, data.y);
        CHECK(lg == doctest::Approx(lr).epsilon(1e-4));
    }
    for (std::size_t k = 0; k < gpu.params().size(); ++k) {
        CAPTURE(k);
        test::check_same(gpu.params()[k], ref.params()[k], false, 1e-3, 1e-5);
    }
}

// On a GPU: the MLP's gradients and a few compiled training steps (nn::TrainStep) of the MLP
// and the CNN on "cuda" equal the reference backend's within float tolerance; steps replayed as
// CUDA graphs equal the same steps launch by launch. test_fake_driver.cpp runs them on the fake
// driver too, their kernels emulated. Without a device:
// "skipped: no CUDA device (...)".
#include "cuda/cuda_testing.hpp"
#include "cuda/fake_driver/fake_emulation.hpp"
#include "nn/layers.hpp"
#include "nn/model.hpp"
#include "nn/optim.hpp"
#include "nn/train_step.hpp"

using namespace hedra;

TEST_CASE("cuda device: MLP gradients equal the reference") {
    if (test::skip_without_device()) return;
    test::emulate_on_fake_driver();
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

namespace {

// `steps` SGD steps (momentum 0.9) of `model` on cuda and on the reference backend, on batches of
// `batch` examples of `example` shape: equal losses, then equal parameters.
void check_steps(const nn::Model& model, std::int64_t batch, std::vector<std::int64_t> example,
                 unsigned steps) {
    auto sgd = std::make_shared<nn::Sgd>(nn::SgdOptions{0.1, 0.9});
    ComputeOptions on_cuda, on_reference;
    on_cuda.backend = "cuda";
    on_reference.backend = "reference";
    nn::TrainStep gpu(model, sgd, on_cuda), ref(model, sgd, on_reference);
    std::int64_t features = 1;
    for (std::int64_t e : example)
        features *= e;
    example.insert(example.begin(), batch);
    for (unsigned step = 0; step < steps; ++step) {
        CAPTURE(step);
        test::Batch data = test::batch(batch, features, step + 2);
        std::span<const float> flat = data.x.values<float>();
        HostArray x = HostArray::from(std::vector<float>(flat.begin(), flat.end()), example);
        double lg = gpu.step(x, data.y), lr = ref.step(x, data.y);
        CHECK(lg == doctest::Approx(lr).epsilon(1e-4));
    }
    for (std::size_t k = 0; k < gpu.params().size(); ++k) {
        CAPTURE(k);
        test::check_same(gpu.params()[k], ref.params()[k], false, 1e-3, 1e-5);
    }
}

} // namespace

TEST_CASE("cuda device: MLP training steps equal the reference") {
    if (test::skip_without_device()) return;
    test::emulate_on_fake_driver();
    check_steps(nn::mlp({64, 48, 10}, 7), 32, {64}, 5);
}

TEST_CASE("cuda device: CNN training steps equal the reference") {
    // nn::mnist_cnn with 4 and 8 channels: every template of the step (convolutions and their
    // gradients, pools and their scatter back, the loss's block reductions, the chained
    // momentum epilogues) against the reference interpreter.
    if (test::skip_without_device()) return;
    test::emulate_on_fake_driver();
    check_steps(nn::mnist_cnn(7, 4, 8), 8, {1, 28, 28}, 3);
}

TEST_CASE("cuda device: MLP steps replayed as CUDA graphs equal the steps launch by launch") {
    // The real driver's capture and replay (tests/cuda/test_fake_driver.cpp checks the fake's):
    // the first step launch by launch, then two graphs captured and replayed; the batch passed
    // from the host (staged through pinned memory) and made on the device (bound in place).
    if (test::skip_without_device()) return;
    test::emulate_on_fake_driver();
    auto sgd = std::make_shared<nn::Sgd>(nn::SgdOptions{0.1, 0.9});
    ComputeOptions on_cuda;
    on_cuda.backend = "cuda";
    const nn::Model model = nn::mlp({64, 48, 10}, 7);
    nn::TrainStep graphed(model, sgd, on_cuda), plain(model, sgd, on_cuda);
    auto cuda = std::dynamic_pointer_cast<backend::CudaBackend>(get_backend("cuda"));
    const test::Batch resident = test::batch(32, 64, 9);
    const HostArray dx = compute(array(resident.x) + 0.0f, on_cuda),
                    dy = compute(array(resident.y) + 0, on_cuda);
    const backend::CudaStats before = cuda->stats();
    for (unsigned step = 0; step < 8; ++step) {
        CAPTURE(step);
        test::Batch data = test::batch(32, 64, step % 3);
        const bool on_device = step >= 5; // the last steps take a batch made on the device
        const HostArray x = on_device ? dx : data.x, y = on_device ? dy : data.y;
        const double lg = graphed.step(x, y);
        if (step == 0) setenv("HEDRA_CUDA_GRAPHS", "0", 1);
        const double lp = plain.step(x, y);
        unsetenv("HEDRA_CUDA_GRAPHS");
        CHECK(lg == lp);
    }
    // Steps 1-4 replayed; 5 runs launch by launch (the batch moved to the device), 6 and 7
    // replayed again.
    CHECK(cuda->stats().graph_launches - before.graph_launches == 6);
    for (std::size_t k = 0; k < graphed.params().size(); ++k) {
        CAPTURE(k);
        test::check_same(graphed.params()[k], plain.params()[k], true);
    }
}

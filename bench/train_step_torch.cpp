// The libtorch peer of bench/train_step: the models of the MNIST examples in PyTorch's C++ API,
// trained by torch::optim::SGD (lr 0.1) on one fixed batch. Only this file includes torch.
// Threads: at::set_num_threads for ATen's OpenMP pool, and OpenBLAS's own pool (which ATen's
// matmuls use) set to the same count through openblas_set_num_threads when it is loaded.
#include "bench/train_step_peer.hpp"

#include <dlfcn.h>

#include <torch/torch.h>

namespace hedra::bench {
namespace {

struct Mlp : torch::nn::Module {
    explicit Mlp(const std::vector<std::int64_t>& sizes) {
        for (std::size_t i = 0; i + 1 < sizes.size(); ++i)
            layers.push_back(register_module("fc" + std::to_string(i),
                                             torch::nn::Linear(sizes[i], sizes[i + 1])));
    }
    torch::Tensor forward(torch::Tensor x) {
        for (std::size_t i = 0; i < layers.size(); ++i) {
            x = layers[i]->forward(x);
            if (i + 1 < layers.size()) x = torch::relu(x);
        }
        return x;
    }
    std::vector<torch::nn::Linear> layers;
};

struct Cnn : torch::nn::Module {
    Cnn(std::int64_t c0, std::int64_t c1)
        : conv0(register_module("conv0",
                                torch::nn::Conv2d(torch::nn::Conv2dOptions(1, c0, 5).padding(2)))),
          conv1(register_module("conv1",
                                torch::nn::Conv2d(torch::nn::Conv2dOptions(c0, c1, 5).padding(2)))),
          fc(register_module("fc", torch::nn::Linear(c1 * 7 * 7, 10))) {}
    torch::Tensor forward(torch::Tensor x) {
        x = torch::max_pool2d(torch::relu(conv0->forward(x)), 2);
        x = torch::max_pool2d(torch::relu(conv1->forward(x)), 2);
        return fc->forward(x.flatten(1));
    }
    torch::nn::Conv2d conv0, conv1;
    torch::nn::Linear fc;
};

void set_blas_threads(int threads) {
    using SetThreads = void (*)(int);
    if (auto f = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
        f(threads);
}

template <class Model>
class TorchStep : public PeerStep {
public:
    TorchStep(std::shared_ptr<Model> model, torch::Tensor images, torch::Tensor labels, int threads,
              int blas_threads)
        : model_(std::move(model)), images_(std::move(images)), labels_(std::move(labels)),
          optimizer_(model_->parameters(), torch::optim::SGDOptions(0.1)), threads_(threads),
          blas_threads_(blas_threads) {}

    double step() override {
        at::set_num_threads(threads_);
        set_blas_threads(blas_threads_);
        optimizer_.zero_grad();
        torch::Tensor loss =
            torch::nn::functional::cross_entropy(model_->forward(images_), labels_);
        loss.backward();
        optimizer_.step();
        return loss.item<double>();
    }

private:
    std::shared_ptr<Model> model_;
    torch::Tensor images_, labels_;
    torch::optim::SGD optimizer_;
    int threads_, blas_threads_;
};

} // namespace

std::unique_ptr<PeerStep> make_torch_step(const PeerModel& model, std::int64_t batch,
                                          const float* images, const std::int64_t* labels,
                                          int threads, int blas_threads) {
    torch::manual_seed(0);
    at::set_num_threads(threads);
    torch::Tensor x = torch::from_blob(const_cast<float*>(images), {batch, 784}).clone();
    torch::Tensor y = torch::from_blob(const_cast<std::int64_t*>(labels), {batch},
                                       torch::TensorOptions().dtype(torch::kInt64))
                          .clone();
    if (!model.sizes.empty())
        return std::make_unique<TorchStep<Mlp>>(std::make_shared<Mlp>(model.sizes), x, y, threads,
                                                blas_threads);
    return std::make_unique<TorchStep<Cnn>>(std::make_shared<Cnn>(model.c0, model.c1),
                                            x.reshape({batch, 1, 28, 28}), y, threads,
                                            blas_threads);
}

std::string torch_description() {
    return std::string("libtorch ") + TORCH_VERSION;
}

} // namespace hedra::bench

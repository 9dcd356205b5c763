// mnist_mlp: a multilayer perceptron (784-300-100-10, ReLU, softmax cross-entropy) trained
// with SGD (batch 64, lr 0.1) on Fashion-MNIST, or any MNIST-format data with --data DIR.
// Each dense layer is hedra::nn::linear: a view of the input and of the weight over one
// (batch, out, in) index space, a product and a sum; no kernel is written by hand. The whole
// training step (forward, backward, update) is compiled once and run per batch.
//
//   mnist_mlp --epochs 5 --hidden 300,100 --batch 64 --lr 0.1 --threads 2
#include "mnist_training.hpp"

int main(int argc, char** argv) {
    return mnist_example::run(
        argc, argv, "mnist_mlp", true,
        [](const hedra::nn::MnistDataset& data, const mnist_example::Flags& flags) {
            const auto& s = data.train.images.sizes();
            std::vector<std::int64_t> sizes{s[1] * s[2]};
            sizes.insert(sizes.end(), flags.hidden.begin(), flags.hidden.end());
            sizes.push_back(10);
            return hedra::nn::mlp(sizes, flags.seed);
        });
}

// mnist_cnn: a small convolutional network trained with SGD (batch 64, lr 0.1) on
// Fashion-MNIST, or any MNIST-format data with --data DIR:
//   conv(1→16, 5×5, pad 2) ReLU maxpool 2 → conv(16→32, 5×5, pad 2) ReLU maxpool 2
//   → linear(32·7·7 → 10).
// A convolution is hedra::nn::conv2d: a window view x[n, c, oh + kh, ow + kw] of the padded
// input, a product with a view of the weight, and a sum over (c, kh, kw); pooling is a window
// view and a max; the last layer contracts over (c, h, w) directly instead of flattening.
//
//   mnist_cnn --epochs 1 --threads 2
#include "mnist_training.hpp"

int main(int argc, char** argv) {
    return mnist_example::run(
        argc, argv, "mnist_cnn", false,
        [](const hedra::nn::MnistDataset& data, const mnist_example::Flags& flags) {
            const auto& s = data.train.images.sizes();
            if (s[1] != 28 || s[2] != 28)
                throw hedra::Error("mnist_cnn: needs 28x28 images, got " + std::to_string(s[1]) +
                                   "x" + std::to_string(s[2]));
            return hedra::nn::mnist_cnn(flags.seed);
        });
}

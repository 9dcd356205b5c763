// mnist_rnn: an LSTM classifier trained with AdamW (batch 64, lr 1e-3, weight decay 0.01) on
// Fashion-MNIST, or any MNIST-format data with --data DIR. Each image is a sequence: 28 steps
// of one 28-pixel row, or with --pixels 784 steps of one pixel (a long recurrence):
//   LSTM(28 → 128) over the steps → linear(128 → 10) on the last hidden state.
// The LSTM is hedra::nn::recurrent (nn/recurrent.hpp): the input projection of every step is
// one contraction before the loop, and the loop over time is one scan whose step is the
// recurrent contraction and the gates. Forward, backward (a reverse scan) and the update are
// one compiled program, run per batch.
//
//   mnist_rnn --epochs 1 --threads 2
//   mnist_rnn --pixels --limit 2000
#include "mnist_training.hpp"
#include "nn/recurrent.hpp"

int main(int argc, char** argv) {
    bool pixels = false;
    std::int64_t hidden = 128;
    mnist_example::Flags defaults;
    defaults.optimizer = "adamw";
    defaults.lr = 1e-3;
    return mnist_example::run(
        argc, argv, "mnist_rnn", false,
        [&](const hedra::nn::MnistDataset& data, const mnist_example::Flags& flags) {
            const auto& s = data.train.images.sizes();
            if (pixels) return hedra::nn::lstm_classifier(s[1] * s[2], 1, hidden, 10, flags.seed);
            return hedra::nn::lstm_classifier(s[1], s[2], hidden, 10, flags.seed);
        },
        defaults,
        [&](CLI::App& app) {
            app.add_flag("--pixels", pixels,
                         "read each image one pixel at a time (rows x columns steps of 1 pixel) "
                         "instead of one row per step");
            app.add_option("--hidden", hidden, "LSTM units")
                ->check(mnist_example::positive_integer())
                ->capture_default_str();
        });
}

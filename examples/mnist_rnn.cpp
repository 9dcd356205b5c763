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
// --init DIR starts from a PyTorch state dict saved as <name>.npy per parameter, and
// --batch-order FILE takes the training examples in a given order: with
// bench/peers/lstm_epoch_torch.py's export, both train the same epoch
// (bench/lstm_epoch_side_by_side.sh compares the test accuracies).
#include "mnist_training.hpp"
#include "nn/io/npy_reader.hpp"
#include "nn/recurrent.hpp"

namespace {

std::string describe(const hedra::HostArray& a) {
    std::string out(hedra::dtype_name(a.dtype()));
    out += " (";
    for (std::size_t i = 0; i < a.sizes().size(); ++i)
        out += (i ? ", " : "") + std::to_string(a.sizes()[i]);
    return out + ")";
}

// Replaces every parameter by DIR/<its name>.npy, which must have its shape and dtype.
hedra::nn::Model load_init(hedra::nn::Model model, const std::string& dir) {
    for (std::size_t i = 0; i < model.names.size(); ++i) {
        const std::string path = dir + "/" + model.names[i] + ".npy";
        hedra::HostArray value = hedra::nn::read_npy(path);
        const hedra::HostArray& want = model.params[i];
        if (value.sizes() != want.sizes() || value.dtype() != want.dtype())
            throw hedra::Error("--init: " + path + " is " + describe(value) + "; " +
                               model.names[i] + " is " + describe(want));
        model.params[i] = std::move(value);
    }
    return model;
}

} // namespace

int main(int argc, char** argv) {
    bool pixels = false;
    std::int64_t hidden = 128;
    std::string init;
    mnist_example::Flags defaults;
    defaults.optimizer = "adamw";
    defaults.lr = 1e-3;
    return mnist_example::run(
        argc, argv, "mnist_rnn", false,
        [&](const hedra::nn::MnistDataset& data, const mnist_example::Flags& flags) {
            const auto& s = data.train.images.sizes();
            hedra::nn::Model model =
                pixels ? hedra::nn::lstm_classifier(s[1] * s[2], 1, hidden, 10, flags.seed)
                       : hedra::nn::lstm_classifier(s[1], s[2], hidden, 10, flags.seed);
            if (!init.empty()) {
                model = load_init(std::move(model), init);
                std::printf("initial weights from %s\n", init.c_str());
            }
            return model;
        },
        defaults,
        [&](CLI::App& app) {
            app.add_flag("--pixels", pixels,
                         "read each image one pixel at a time (rows x columns steps of 1 pixel) "
                         "instead of one row per step");
            app.add_option("--hidden", hidden, "LSTM units")
                ->check(mnist_example::positive_integer())
                ->capture_default_str();
            app.add_option("--init", init,
                           "folder of initial weights, one <name>.npy per parameter (a PyTorch "
                           "state dict: lstm.weight_ih_l0, ..., fc.bias)");
        });
}

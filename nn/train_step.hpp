// A classifier's training step: nn::Trainer (trainer.hpp) specialized to a Model, images
// (batch, example_shape...) f32 and integer class labels (batch), softmax cross-entropy (mean
// over the batch) as the loss and the optimizer's own constant learning rate. Each step's
// program also counts the correct predictions, which evaluation returns. A program is compiled
// per batch size and label dtype (a final partial batch gets its own), for training and for
// evaluation; trainer() gives checkpoints, schedules and everything else Trainer has.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/compute.hpp"
#include "nn/model.hpp"
#include "nn/optim.hpp"
#include "nn/trainer.hpp"

namespace hedra::nn {

class TrainStep {
public:
    TrainStep(Model model, std::shared_ptr<const Optimizer> optimizer, ComputeOptions options = {});

    // One step on images (b, example_shape...) (f32) and integer labels (b): updates the
    // parameters and the optimizer state and returns the loss before the update.
    double step(const HostArray& images, const HostArray& labels);
    // The same step, returning the loss as a one-element array without waiting for it: on a device
    // backend the step runs asynchronously and the loss is copied to the host when first read
    // (a loop that reads it every N steps lets the host run ahead, as in PyTorch).
    HostArray step_loss(const HostArray& images, const HostArray& labels);

    // The number of examples of the batch the current parameters classify correctly.
    std::int64_t count_correct(const HostArray& images, const HostArray& labels);

    // The model with its current parameters.
    Model model() const;
    // One example's shape (images are (batch, example_shape...)).
    const std::vector<std::int64_t>& example_shape() const { return model_.example_shape; }
    const std::vector<HostArray>& params() const { return trainer_.params(); }
    const std::vector<HostArray>& optimizer_state() const { return trainer_.optimizer_state(); }
    // Replaces the parameters (same shapes and dtypes) and resets the optimizer state.
    void set_params(std::vector<HostArray> params);

    Trainer& trainer() { return trainer_; }
    const Trainer& trainer() const { return trainer_; }

    // Seconds spent building and compiling programs so far, and how many were compiled.
    double compile_seconds() const { return trainer_.compile_seconds(); }
    int programs_compiled() const { return trainer_.programs_compiled(); }

private:
    void check_batch(const HostArray& images, const HostArray& labels) const;

    Model model_; // its params are the initial ones: the trainer holds the current
    Trainer trainer_;
    double lr_;
};

} // namespace hedra::nn

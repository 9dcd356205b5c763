// A training step compiled once and run per batch. The graph takes the parameters, the
// optimizer state, a batch of inputs and its labels as placeholders, and returns the loss (softmax
// cross-entropy, mean over the batch), the new parameters and the new state: forward, backward
// (ad/grad.hpp) and update in one program. Each call feeds the previous call's outputs back in.
// A program is compiled per batch size (a final partial batch gets its own), and likewise an
// evaluation program that counts correct predictions.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "core/compute.hpp"
#include "nn/model.hpp"
#include "nn/optim.hpp"

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

    const Model& model() const { return model_; }
    const std::vector<HostArray>& params() const { return model_.params; }
    const std::vector<HostArray>& optimizer_state() const { return state_; }
    // Replaces the parameters (same shapes and dtypes) and resets the optimizer state.
    void set_params(std::vector<HostArray> params);

    // Seconds spent building and compiling programs so far, and how many were compiled.
    double compile_seconds() const { return compile_seconds_; }
    int programs_compiled() const { return programs_compiled_; }

private:
    using Key = std::pair<std::int64_t, DType>; // batch size, label dtype
    const CompiledProgram& program(std::map<Key, CompiledProgram>& cache, const HostArray& images,
                                   const HostArray& labels, bool training);
    CompiledProgram build(std::int64_t batch, DType label_dtype, bool training) const;
    void check_batch(const HostArray& images, const HostArray& labels) const;

    Model model_;
    std::shared_ptr<const Optimizer> optimizer_;
    ComputeOptions options_;
    std::vector<HostArray> state_;
    std::map<Key, CompiledProgram> train_programs_, eval_programs_;
    double compile_seconds_ = 0.0;
    int programs_compiled_ = 0;
};

} // namespace hedra::nn

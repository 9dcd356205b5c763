// Optimizers as lazy graphs: given the parameters, their gradients and the optimizer state as
// arrays (placeholders in a compiled training step), an optimizer returns the new parameters
// and the new state as arrays. The whole step (forward, backward, update) is then one graph,
// compiled once; each call's outputs are the next call's inputs. The update rules are
// PyTorch's (torch.optim.SGD, torch.optim.Adam and torch.optim.AdamW, without dampening, amsgrad
// or maximize). The learning rate is either the options' constant or a rank-0 array: make it a
// placeholder and a compiled step takes a new one per call (a schedule) without recompiling.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/array.hpp"
#include "core/host_array.hpp"

namespace hedra::nn {

struct OptimizerUpdate {
    std::vector<Array> params; // one per parameter, same shapes and dtypes
    std::vector<Array> state;  // matches initial_state()
};

class Optimizer {
public:
    virtual ~Optimizer() = default;
    virtual std::string name() const = 0;
    // The state before the first step, for parameters shaped like `params`.
    virtual std::vector<HostArray> initial_state(const std::vector<HostArray>& params) const = 0;
    // The new parameters and state. `grads` match `params`; `state` matches initial_state().
    // The learning rate is the options' constant.
    virtual OptimizerUpdate update(const std::vector<Array>& params,
                                   const std::vector<Array>& grads,
                                   const std::vector<Array>& state) const = 0;
    // The same update with the learning rate `lr`, a rank-0 float array (a placeholder of a
    // compiled step), in place of the options' constant. The default throws hedra::Error: an
    // optimizer written before run-time learning rates overrides only the overload above.
    virtual OptimizerUpdate update(const std::vector<Array>& params,
                                   const std::vector<Array>& grads, const std::vector<Array>& state,
                                   const Array& lr) const;
    // The options' constant learning rate (what update() without `lr` applies). The default
    // throws hedra::Error: an optimizer without one is run with a schedule's rate.
    virtual double learning_rate() const;
    // A name per state array, for checkpoints ("exp_avg" and so on after PyTorch's state keys),
    // given a name per parameter. The default is empty: the caller numbers the arrays.
    virtual std::vector<std::string> state_names(const std::vector<std::string>& param_names) const;
    // The same optimizer for the parameters at `indices` only (a rank's part when the state is
    // sharded), or null when this one serves any subset as it is (the default). Optimizers
    // with per-parameter options override it.
    virtual std::shared_ptr<const Optimizer> subset(const std::vector<std::size_t>& indices) const;
};

struct SgdOptions {
    double lr = 0.01;
    double momentum = 0.0; // 0: plain SGD, no state
    double weight_decay = 0.0;
    bool nesterov = false;
};

// d = g + weight_decay·p; with momentum: buf = momentum·buf + d (buf starts at zero, which is
// PyTorch's first step), d = nesterov ? d + momentum·buf : buf; then p = p − lr·d.
// State: one momentum buffer per parameter when momentum != 0, none otherwise.
class Sgd : public Optimizer {
public:
    explicit Sgd(SgdOptions options);
    std::string name() const override { return "sgd"; }
    double learning_rate() const override { return options_.lr; }
    std::vector<HostArray> initial_state(const std::vector<HostArray>& params) const override;
    OptimizerUpdate update(const std::vector<Array>& params, const std::vector<Array>& grads,
                           const std::vector<Array>& state) const override;
    OptimizerUpdate update(const std::vector<Array>& params, const std::vector<Array>& grads,
                           const std::vector<Array>& state, const Array& lr) const override;
    // "<param>.momentum_buffer" per parameter, with momentum.
    std::vector<std::string>
    state_names(const std::vector<std::string>& param_names) const override;

private:
    OptimizerUpdate apply(const std::vector<Array>& params, const std::vector<Array>& grads,
                          const std::vector<Array>& state,
                          const Array& lr) const; // lr empty: options.lr
    SgdOptions options_;
};

struct AdamOptions {
    double lr = 1e-3;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    double weight_decay = 0.0; // L2 added to the gradient, as torch.optim.Adam does
};

// m = β1·m + (1−β1)·g, v = β2·v + (1−β2)·g², p = p − lr/(1−β1^t) · m / (sqrt(v)/sqrt(1−β2^t) + ε).
// State: β1^t and β2^t (rank 0, the first parameter's dtype), then m and v per parameter.
class Adam : public Optimizer {
public:
    explicit Adam(AdamOptions options);
    std::string name() const override { return "adam"; }
    double learning_rate() const override { return options_.lr; }
    std::vector<HostArray> initial_state(const std::vector<HostArray>& params) const override;
    OptimizerUpdate update(const std::vector<Array>& params, const std::vector<Array>& grads,
                           const std::vector<Array>& state) const override;
    OptimizerUpdate update(const std::vector<Array>& params, const std::vector<Array>& grads,
                           const std::vector<Array>& state, const Array& lr) const override;
    // "beta1_power", "beta2_power", then "<param>.exp_avg" and "<param>.exp_avg_sq".
    std::vector<std::string>
    state_names(const std::vector<std::string>& param_names) const override;

private:
    OptimizerUpdate apply(const std::vector<Array>& params, const std::vector<Array>& grads,
                          const std::vector<Array>& state,
                          const Array& lr) const; // lr empty: options.lr
    AdamOptions options_;
};

struct AdamWOptions {
    double lr = 1e-3;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    double weight_decay = 1e-2;
    // Which parameters decay, one flag per parameter; empty: those of rank >= 2 (matrices and
    // embeddings, not biases or layer-norm weights), as nanoGPT's parameter groups.
    std::vector<bool> decay_mask = {};
};

// torch.optim.AdamW: decoupled weight decay, then Adam's bias-corrected step:
// p = p·(1 − lr·weight_decay) (decaying parameters only), m = β1·m + (1−β1)·g,
// v = β2·v + (1−β2)·g², p = p − lr/(1−β1^t) · m / (sqrt(v)/sqrt(1−β2^t) + ε).
// Written in PyTorch's order of operations (m as a lerp towards g, v·β2 + (1−β2)·g·g,
// (step·m)/denominator), so that f32 results follow PyTorch's closely.
// State: β1^t and β2^t (rank 0, the first parameter's dtype), then m and v per parameter.
class AdamW : public Optimizer {
public:
    explicit AdamW(AdamWOptions options);
    std::string name() const override { return "adamw"; }
    double learning_rate() const override { return options_.lr; }
    std::vector<HostArray> initial_state(const std::vector<HostArray>& params) const override;
    OptimizerUpdate update(const std::vector<Array>& params, const std::vector<Array>& grads,
                           const std::vector<Array>& state) const override;
    OptimizerUpdate update(const std::vector<Array>& params, const std::vector<Array>& grads,
                           const std::vector<Array>& state, const Array& lr) const override;
    // As Adam's.
    std::vector<std::string>
    state_names(const std::vector<std::string>& param_names) const override;
    // With a decay mask, the mask's flags at `indices`.
    std::shared_ptr<const Optimizer> subset(const std::vector<std::size_t>& indices) const override;
    const AdamWOptions& options() const { return options_; }

private:
    OptimizerUpdate apply(const std::vector<Array>& params, const std::vector<Array>& grads,
                          const std::vector<Array>& state,
                          const Array& lr) const; // lr empty: options.lr
    AdamWOptions options_;
};

} // namespace hedra::nn

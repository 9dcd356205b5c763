// SGD, Adam and AdamW update graphs (optim.hpp). Every rule is a handful of elementwise maps,
// which the scheduler fuses with the gradient kernels that produce their inputs.
#include "nn/optim.hpp"

#include <cmath>
#include <utility>

#include "core/error.hpp"
#include "core/library.hpp"

namespace hedra::nn {

namespace {

void check_counts(const std::string& op, const std::vector<Array>& params,
                  const std::vector<Array>& grads, const std::vector<Array>& state,
                  std::size_t state_size) {
    if (grads.size() != params.size() || state.size() != state_size)
        throw Error(op + ": got " + std::to_string(params.size()) + " parameters, " +
                    std::to_string(grads.size()) + " gradients and " +
                    std::to_string(state.size()) + " state arrays; expected " +
                    std::to_string(params.size()) + " gradients and " + std::to_string(state_size) +
                    " state arrays");
    for (std::size_t i = 0; i < params.size(); ++i)
        if (grads[i].shape() != params[i].shape())
            throw Error(op + ": gradient " + std::to_string(i) + " " + grads[i].describe() +
                        " does not match its parameter " + params[i].describe());
}

void check_hyper(const std::string& op, const char* what, double value, bool ok) {
    if (!ok || !std::isfinite(value))
        throw Error(op + ": invalid " + what + " " + std::to_string(value));
}

// g + weight_decay·p (g itself without decay).
Array decayed(const Array& g, const Array& p, double weight_decay) {
    return weight_decay == 0.0 ? g : g + weight_decay * p;
}

void check_lr(const std::string& op, const Array& lr) {
    if (!lr.valid())
        throw Error(op + ": the learning rate is an empty array; pass a rank-0 float array, e.g. "
                         "placeholder(Shape(), DType::F32, \"lr\")");
    if (lr.rank() != 0 || !is_float(lr.dtype()))
        throw Error(op + ": the learning rate must be a rank-0 f32 or f64 array, got " +
                    lr.describe());
}

// `a` (a rank-0 scalar) in dtype t, so that a scalar never promotes a parameter's dtype.
Array in_dtype(const Array& a, DType t) {
    return a.dtype() == t ? a : cast(a, t);
}

// The learning rate for a parameter of dtype t: the run-time array, or the options' constant as
// a weak literal (the graph the constant gave before run-time learning rates existed).
Operand lr_operand(const Array& lr, double constant, DType t) {
    if (lr.valid()) return in_dtype(lr, t);
    return constant;
}

std::vector<std::string> moment_names(const std::vector<std::string>& param_names) {
    std::vector<std::string> names{"beta1_power", "beta2_power"};
    for (const std::string& p : param_names) {
        names.push_back(p + ".exp_avg");
        names.push_back(p + ".exp_avg_sq");
    }
    return names;
}

std::vector<HostArray> moment_state(const std::vector<HostArray>& params) {
    const DType t = params.empty() ? DType::F32 : params[0].dtype();
    std::vector<HostArray> state;
    for (int k = 0; k < 2; ++k) {
        HostArray power({}, t);
        power.set_flat(0, 1.0);
        state.push_back(power);
    }
    for (const HostArray& p : params) {
        state.emplace_back(p.sizes(), p.dtype());
        state.emplace_back(p.sizes(), p.dtype());
    }
    return state;
}

} // namespace

OptimizerUpdate Optimizer::update(const std::vector<Array>&, const std::vector<Array>&,
                                  const std::vector<Array>&, const Array&) const {
    throw Error(name() + ": this optimizer takes no run-time learning rate; override "
                         "update(params, grads, state, lr) or use its constant learning rate");
}

double Optimizer::learning_rate() const {
    throw Error(name() + ": this optimizer has no constant learning rate; pass one per step "
                         "(nn::Trainer::step(inputs, lr))");
}

std::vector<std::string> Optimizer::state_names(const std::vector<std::string>&) const {
    return {};
}

Sgd::Sgd(SgdOptions options) : options_(options) {
    check_hyper("sgd", "learning rate", options.lr, options.lr >= 0);
    check_hyper("sgd", "momentum", options.momentum, options.momentum >= 0);
    check_hyper("sgd", "weight decay", options.weight_decay, options.weight_decay >= 0);
    if (options.nesterov && options.momentum == 0.0)
        throw Error("sgd: nesterov momentum needs momentum > 0");
}

std::vector<HostArray> Sgd::initial_state(const std::vector<HostArray>& params) const {
    std::vector<HostArray> state;
    if (options_.momentum != 0.0)
        for (const HostArray& p : params)
            state.emplace_back(p.sizes(), p.dtype());
    return state;
}

OptimizerUpdate Sgd::update(const std::vector<Array>& params, const std::vector<Array>& grads,
                            const std::vector<Array>& state) const {
    return apply(params, grads, state, Array());
}

OptimizerUpdate Sgd::update(const std::vector<Array>& params, const std::vector<Array>& grads,
                            const std::vector<Array>& state, const Array& lr) const {
    check_lr("sgd", lr);
    return apply(params, grads, state, lr);
}

std::vector<std::string> Sgd::state_names(const std::vector<std::string>& param_names) const {
    std::vector<std::string> names;
    if (options_.momentum != 0.0)
        for (const std::string& p : param_names)
            names.push_back(p + ".momentum_buffer");
    return names;
}

OptimizerUpdate Sgd::apply(const std::vector<Array>& params, const std::vector<Array>& grads,
                           const std::vector<Array>& state, const Array& lr) const {
    const bool momentum = options_.momentum != 0.0;
    check_counts("sgd", params, grads, state, momentum ? params.size() : 0);
    OptimizerUpdate out;
    for (std::size_t i = 0; i < params.size(); ++i) {
        Array d = decayed(grads[i], params[i], options_.weight_decay);
        if (momentum) {
            Array buf = options_.momentum * state[i] + d;
            out.state.push_back(buf);
            d = options_.nesterov ? d + options_.momentum * buf : buf;
        }
        out.params.push_back(params[i] - lr_operand(lr, options_.lr, params[i].dtype()) * d);
    }
    return out;
}

namespace {

// Adam's and AdamW's hyperparameters, checked alike.
template <class Options>
void check_adam_options(const char* op, const Options& o) {
    check_hyper(op, "learning rate", o.lr, o.lr >= 0);
    check_hyper(op, "beta1", o.beta1, o.beta1 >= 0 && o.beta1 < 1);
    check_hyper(op, "beta2", o.beta2, o.beta2 >= 0 && o.beta2 < 1);
    check_hyper(op, "eps", o.eps, o.eps >= 0);
    check_hyper(op, "weight decay", o.weight_decay, o.weight_decay >= 0);
}

} // namespace

Adam::Adam(AdamOptions options) : options_(options) {
    check_adam_options("adam", options_);
}

std::vector<HostArray> Adam::initial_state(const std::vector<HostArray>& params) const {
    return moment_state(params);
}

std::vector<std::string> Adam::state_names(const std::vector<std::string>& param_names) const {
    return moment_names(param_names);
}

OptimizerUpdate Adam::update(const std::vector<Array>& params, const std::vector<Array>& grads,
                             const std::vector<Array>& state) const {
    return apply(params, grads, state, Array());
}

OptimizerUpdate Adam::update(const std::vector<Array>& params, const std::vector<Array>& grads,
                             const std::vector<Array>& state, const Array& lr) const {
    check_lr("adam", lr);
    return apply(params, grads, state, lr);
}

OptimizerUpdate Adam::apply(const std::vector<Array>& params, const std::vector<Array>& grads,
                            const std::vector<Array>& state, const Array& lr) const {
    check_counts("adam", params, grads, state, 2 + 2 * params.size());
    const AdamOptions& o = options_;
    OptimizerUpdate out;
    Array beta1_power = state[0] * o.beta1, beta2_power = state[1] * o.beta2;
    out.state = {beta1_power, beta2_power};
    Array step_size = lr_operand(lr, o.lr, beta1_power.dtype()) / (1.0 - beta1_power);
    Array correction2_sqrt = sqrt(1.0 - beta2_power);
    for (std::size_t i = 0; i < params.size(); ++i) {
        Array g = decayed(grads[i], params[i], o.weight_decay);
        Array m = o.beta1 * state[2 + 2 * i] + (1.0 - o.beta1) * g;
        Array v = o.beta2 * state[3 + 2 * i] + (1.0 - o.beta2) * (g * g);
        Array denom = sqrt(v) / correction2_sqrt + o.eps;
        out.params.push_back(params[i] - step_size * (m / denom));
        out.state.push_back(m);
        out.state.push_back(v);
    }
    return out;
}

std::shared_ptr<const Optimizer> Optimizer::subset(const std::vector<std::size_t>&) const {
    return nullptr;
}

std::shared_ptr<const Optimizer> AdamW::subset(const std::vector<std::size_t>& indices) const {
    if (options_.decay_mask.empty()) return nullptr;
    AdamWOptions o = options_;
    o.decay_mask.clear();
    for (std::size_t i : indices) {
        if (i >= options_.decay_mask.size())
            throw Error("adamw: a subset names parameter " + std::to_string(i) + " of " +
                        std::to_string(options_.decay_mask.size()));
        o.decay_mask.push_back(options_.decay_mask[i]);
    }
    return std::make_shared<AdamW>(std::move(o));
}

AdamW::AdamW(AdamWOptions options) : options_(std::move(options)) {
    check_adam_options("adamw", options_);
}

std::vector<HostArray> AdamW::initial_state(const std::vector<HostArray>& params) const {
    return moment_state(params);
}

std::vector<std::string> AdamW::state_names(const std::vector<std::string>& param_names) const {
    return moment_names(param_names);
}

OptimizerUpdate AdamW::update(const std::vector<Array>& params, const std::vector<Array>& grads,
                              const std::vector<Array>& state) const {
    return apply(params, grads, state, Array());
}

OptimizerUpdate AdamW::update(const std::vector<Array>& params, const std::vector<Array>& grads,
                              const std::vector<Array>& state, const Array& lr) const {
    check_lr("adamw", lr);
    return apply(params, grads, state, lr);
}

OptimizerUpdate AdamW::apply(const std::vector<Array>& params, const std::vector<Array>& grads,
                             const std::vector<Array>& state, const Array& lr) const {
    check_counts("adamw", params, grads, state, 2 + 2 * params.size());
    const AdamWOptions& o = options_;
    if (!o.decay_mask.empty() && o.decay_mask.size() != params.size())
        throw Error(
            "adamw: the decay mask has " + std::to_string(o.decay_mask.size()) + " flags for " +
            std::to_string(params.size()) +
            " parameters; give one flag per parameter, or none to decay those of rank >= 2");
    OptimizerUpdate out;
    Array beta1_power = state[0] * o.beta1, beta2_power = state[1] * o.beta2;
    out.state = {beta1_power, beta2_power};
    Array step_size = lr_operand(lr, o.lr, beta1_power.dtype()) / (1.0 - beta1_power);
    Array correction2_sqrt = sqrt(1.0 - beta2_power);
    for (std::size_t i = 0; i < params.size(); ++i) {
        const DType t = params[i].dtype();
        const bool decays = o.decay_mask.empty() ? params[i].rank() >= 2 : o.decay_mask[i];
        Array p = params[i], g = grads[i];
        if (decays && o.weight_decay != 0.0)
            p = lr.valid() ? p * (1.0 - in_dtype(lr, t) * o.weight_decay)
                           : p * (1.0 - o.lr * o.weight_decay);
        Array m = state[2 + 2 * i], v = state[3 + 2 * i];
        m = 1.0 - o.beta1 < 0.5 ? m + (1.0 - o.beta1) * (g - m) // torch.lerp's two forms
                                : g - (g - m) * (1.0 - (1.0 - o.beta1));
        v = v * o.beta2 + (1.0 - o.beta2) * g * g;
        Array denom = sqrt(v) / in_dtype(correction2_sqrt, t) + o.eps;
        out.params.push_back(p - in_dtype(step_size, t) * m / denom);
        out.state.push_back(m);
        out.state.push_back(v);
    }
    return out;
}

} // namespace hedra::nn

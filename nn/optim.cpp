// SGD and Adam update graphs (optim.hpp). Every rule is a handful of elementwise maps, which
// the scheduler fuses with the gradient kernels that produce their inputs.
#include "nn/optim.hpp"

#include <cmath>

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

} // namespace

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
        out.params.push_back(params[i] - options_.lr * d);
    }
    return out;
}

Adam::Adam(AdamOptions options) : options_(options) {
    check_hyper("adam", "learning rate", options.lr, options.lr >= 0);
    check_hyper("adam", "beta1", options.beta1, options.beta1 >= 0 && options.beta1 < 1);
    check_hyper("adam", "beta2", options.beta2, options.beta2 >= 0 && options.beta2 < 1);
    check_hyper("adam", "eps", options.eps, options.eps >= 0);
    check_hyper("adam", "weight decay", options.weight_decay, options.weight_decay >= 0);
}

std::vector<HostArray> Adam::initial_state(const std::vector<HostArray>& params) const {
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

OptimizerUpdate Adam::update(const std::vector<Array>& params, const std::vector<Array>& grads,
                             const std::vector<Array>& state) const {
    check_counts("adam", params, grads, state, 2 + 2 * params.size());
    const AdamOptions& o = options_;
    OptimizerUpdate out;
    Array beta1_power = state[0] * o.beta1, beta2_power = state[1] * o.beta2;
    out.state = {beta1_power, beta2_power};
    Array step_size = o.lr / (1.0 - beta1_power);
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

} // namespace hedra::nn

// Optimizers (nn/optim.hpp): several steps of each update graph, evaluated on the reference
// backend with the outputs fed back as inputs, against the update rules written out in double.
#include "nn/optim.hpp"

#include "core/error.hpp"
#include "nn_layer_testing.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

constexpr int kSteps = 4;

// The gradient used at step t for parameter value p: any fixed function will do.
double gradient_at(double p, int t, std::size_t i) {
    return 0.5 * p + 0.1 * static_cast<double>(t) - 0.05 * static_cast<double>(i);
}

// Runs kSteps updates of `opt` on one f64 parameter of 5 values, feeding outputs back, with
// gradients from gradient_at computed on the host.
std::vector<double> run_optimizer(const Optimizer& opt, std::vector<double> p) {
    std::vector<HostArray> params{HostArray::from(p, {5})};
    std::vector<HostArray> state = opt.initial_state(params);
    for (int t = 1; t <= kSteps; ++t) {
        std::vector<double> g(p.size());
        for (std::size_t i = 0; i < p.size(); ++i)
            g[i] = gradient_at(params[0].flat(static_cast<std::int64_t>(i)), t, i);
        std::vector<Array> state_arrays;
        for (const HostArray& s : state)
            state_arrays.push_back(array(s));
        OptimizerUpdate u =
            opt.update({array(params[0])}, {array(HostArray::from(g, {5}))}, state_arrays);
        REQUIRE(u.state.size() == state.size());
        std::vector<Array> outputs{u.params[0]};
        outputs.insert(outputs.end(), u.state.begin(), u.state.end());
        std::vector<HostArray> values = compute(outputs, reference_backend());
        params[0] = values[0];
        for (std::size_t k = 0; k < state.size(); ++k)
            state[k] = values[1 + k];
    }
    return params[0].to_doubles();
}

std::vector<double> start() {
    return {1.0, -2.0, 0.5, 3.0, -0.25};
}

} // namespace

TEST_CASE("nn sgd: plain, with momentum, nesterov and weight decay") {
    struct Case {
        double momentum, weight_decay;
        bool nesterov;
    };
    for (Case c : {Case{0.0, 0.0, false}, Case{0.9, 0.0, false}, Case{0.9, 0.0, true},
                   Case{0.5, 0.01, false}}) {
        INFO("momentum " << c.momentum << " nesterov " << c.nesterov << " decay "
                         << c.weight_decay);
        const double lr = 0.1;
        Sgd sgd(SgdOptions{lr, c.momentum, c.weight_decay, c.nesterov});
        std::vector<double> p = start(), buf(p.size(), 0.0);
        for (int t = 1; t <= kSteps; ++t)
            for (std::size_t i = 0; i < p.size(); ++i) {
                double d = gradient_at(p[i], t, i) + c.weight_decay * p[i];
                if (c.momentum != 0.0) {
                    buf[i] = t == 1 ? d : c.momentum * buf[i] + d; // PyTorch's first step
                    d = c.nesterov ? d + c.momentum * buf[i] : buf[i];
                }
                p[i] -= lr * d;
            }
        CHECK(sgd.initial_state({HostArray({5}, DType::F64)}).size() ==
              (c.momentum != 0.0 ? 1u : 0u));
        check_close(run_optimizer(sgd, start()), p, 1e-12);
    }
}

TEST_CASE("nn adam: bias-corrected moments, with and without weight decay") {
    for (double decay : {0.0, 0.1}) {
        INFO("weight decay " << decay);
        const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8;
        Adam adam(AdamOptions{lr, b1, b2, eps, decay});
        std::vector<double> p = start(), m(p.size(), 0.0), v(p.size(), 0.0);
        for (int t = 1; t <= kSteps; ++t)
            for (std::size_t i = 0; i < p.size(); ++i) {
                double g = gradient_at(p[i], t, i) + decay * p[i];
                m[i] = b1 * m[i] + (1 - b1) * g;
                v[i] = b2 * v[i] + (1 - b2) * g * g;
                double mhat = m[i] / (1 - std::pow(b1, t)), vhat = v[i] / (1 - std::pow(b2, t));
                p[i] -= lr * mhat / (std::sqrt(vhat) + eps);
            }
        check_close(run_optimizer(adam, start()), p, 1e-9);
    }
}

TEST_CASE("nn optimizers: bad hyperparameters and mismatched arrays throw") {
    CHECK_THROWS_AS(Sgd(SgdOptions{-0.1}), Error);
    CHECK_THROWS_AS(Sgd(SgdOptions{0.1, 0.0, 0.0, true}), Error);
    CHECK_THROWS_AS(Adam(AdamOptions{0.1, 1.0}), Error);
    Sgd sgd(SgdOptions{0.1, 0.9});
    Array p = zeros(Shape::of({3})), g = zeros(Shape::of({4}));
    CHECK_THROWS_WITH_AS(sgd.update({p}, {p}, {}), doctest::Contains("sgd: got 1 parameters"),
                         Error);
    CHECK_THROWS_WITH_AS(sgd.update({p}, {g}, {p}),
                         doctest::Contains("does not match its parameter"), Error);
}

// AdamW and run-time learning rates (nn/optim.hpp), through a Trainer on a quadratic whose
// gradient is known: three steps with a changing learning rate against torch.optim.AdamW's
// formulas written out in double, in one compiled program; Sgd and Adam with the learning rate
// as an array give what their constant gives.
#include <array>

#include "core/error.hpp"
#include "nn/model.hpp"
#include "nn/optim.hpp"
#include "nn/train_step.hpp"
#include "nn/trainer.hpp"
#include "nn_layer_testing.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

const std::vector<double> kLrs = {0.1, 0.03, 0.07};
constexpr double kBiasWeight = 1.5;

// Parameters W (2, 3) and b (3); loss ½Σ(W − tW)² + ½·1.5·Σ(b − tb)², so the gradients are
// W − tW and 1.5·(b − tb). The targets are the trainer's inputs.
struct Quadratic {
    std::vector<double> w = random_values(6, 11, -1, 1), b = random_values(3, 12, -1, 1);
    std::vector<double> tw = random_values(6, 13, -1, 1), tb = random_values(3, 14, -1, 1);
};

HostArray host(const std::vector<double>& v, std::vector<std::int64_t> sizes, DType t) {
    HostArray a(std::move(sizes), t);
    for (std::size_t i = 0; i < v.size(); ++i)
        a.set_flat(static_cast<std::int64_t>(i), v[i]);
    return a;
}

Trainer quadratic_trainer(const Quadratic& q, std::shared_ptr<const Optimizer> opt, DType t) {
    auto loss = [](const std::vector<Array>& p, const std::vector<Array>& x) {
        Array dw = p[0] - x[0], db = p[1] - x[1];
        return 0.5 * sum(dw * dw) + (0.5 * kBiasWeight) * sum(db * db);
    };
    TrainerOptions o;
    o.param_names = {"w", "b"};
    o.compute = reference_backend();
    return Trainer(loss, {{{2, 3}, t, "tw"}, {{3}, t, "tb"}},
                   {host(q.w, {2, 3}, t), host(q.b, {3}, t)}, std::move(opt), o);
}

// Runs kLrs.size() steps; returns W then b.
std::vector<double> run(Trainer& trainer, const Quadratic& q, DType t) {
    std::vector<HostArray> inputs{host(q.tw, {2, 3}, t), host(q.tb, {3}, t)};
    for (double lr : kLrs)
        trainer.step(inputs, lr);
    CHECK(trainer.programs_compiled() == 1);
    CHECK(trainer.step_count() == static_cast<std::int64_t>(kLrs.size()));
    std::vector<double> out = trainer.params()[0].to_doubles();
    for (double v : trainer.params()[1].to_doubles())
        out.push_back(v);
    return out;
}

// torch.optim.AdamW's step in double, over W's 6 values then b's 3 (decay[0] for W, decay[1]
// for b).
std::vector<double> adamw_loop(const Quadratic& q, const AdamWOptions& o,
                               std::array<bool, 2> decay) {
    std::vector<double> p = q.w, target = q.tw, scale(6, 1.0);
    p.insert(p.end(), q.b.begin(), q.b.end());
    target.insert(target.end(), q.tb.begin(), q.tb.end());
    scale.insert(scale.end(), 3, kBiasWeight);
    std::vector<double> m(p.size(), 0.0), v(p.size(), 0.0);
    for (std::size_t t = 1; t <= kLrs.size(); ++t) {
        const double lr = kLrs[t - 1];
        for (std::size_t i = 0; i < p.size(); ++i) {
            const double g = scale[i] * (p[i] - target[i]);
            if (decay[i < 6 ? 0 : 1]) p[i] *= 1 - lr * o.weight_decay;
            m[i] = o.beta1 * m[i] + (1 - o.beta1) * g;
            v[i] = o.beta2 * v[i] + (1 - o.beta2) * g * g;
            const double bc1 = 1 - std::pow(o.beta1, double(t)),
                         bc2 = 1 - std::pow(o.beta2, double(t));
            p[i] -= lr / bc1 * m[i] / (std::sqrt(v[i]) / std::sqrt(bc2) + o.eps);
        }
    }
    return p;
}

} // namespace

TEST_CASE("nn adamw: decoupled decay with a decay mask and a changing learning rate, one program") {
    struct Case {
        double decay;
        std::vector<bool> mask;
        std::array<bool, 2> decays; // W, b
    };
    const Quadratic q;
    for (DType t : {DType::F64, DType::F32})
        for (const Case& c : {Case{0.1, {}, {true, false}}, Case{0.1, {false, true}, {false, true}},
                              Case{0.0, {}, {true, false}}}) {
            INFO(dtype_name(t) << " weight decay " << c.decay << " mask " << c.mask.size());
            AdamWOptions o{1e-3, 0.9, 0.99, 1e-8, c.decay, c.mask};
            Trainer trainer = quadratic_trainer(q, std::make_shared<AdamW>(o), t);
            const bool f64 = t == DType::F64;
            check_close(run(trainer, q, t), adamw_loop(q, o, c.decays), f64 ? 1e-12 : 2e-6,
                        f64 ? 1e-14 : 1e-6);
            CHECK(trainer.optimizer_state()[0].flat(0) == doctest::Approx(std::pow(0.9, 3)));
        }
}

TEST_CASE("nn sgd with momentum: a changing learning rate through the trainer") {
    const Quadratic q;
    Trainer trainer = quadratic_trainer(q, std::make_shared<Sgd>(SgdOptions{1.0, 0.9}), DType::F64);
    std::vector<double> p = q.w, target = q.tw, scale(6, 1.0), buf(9, 0.0);
    p.insert(p.end(), q.b.begin(), q.b.end());
    target.insert(target.end(), q.tb.begin(), q.tb.end());
    scale.insert(scale.end(), 3, kBiasWeight);
    for (double lr : kLrs)
        for (std::size_t i = 0; i < p.size(); ++i) {
            buf[i] = 0.9 * buf[i] + scale[i] * (p[i] - target[i]);
            p[i] -= lr * buf[i];
        }
    check_close(run(trainer, q, DType::F64), p, 1e-12);
}

TEST_CASE("nn optimizers: a run-time learning rate gives what the constant gives") {
    const double lr = 0.05;
    std::vector<std::shared_ptr<const Optimizer>> optimizers{
        std::make_shared<Sgd>(SgdOptions{lr, 0.9}), std::make_shared<Adam>(AdamOptions{lr}),
        std::make_shared<AdamW>(AdamWOptions{lr, 0.9, 0.999, 1e-8, 0.1})};
    const HostArray p0 = HostArray::from(random_values(6, 5), {2, 3});
    const HostArray g0 = HostArray::from(random_values(6, 6), {2, 3});
    for (const auto& opt : optimizers) {
        INFO(opt->name());
        std::vector<Array> state;
        for (const HostArray& s : opt->initial_state({p0}))
            state.push_back(array(s));
        OptimizerUpdate fixed = opt->update({array(p0)}, {array(g0)}, state);
        OptimizerUpdate run_time =
            opt->update({array(p0)}, {array(g0)}, state, array(HostArray::from<double>({lr}, {})));
        std::vector<HostArray> r =
            compute({fixed.params[0], run_time.params[0]}, reference_backend());
        CHECK(r[0].to_doubles() == r[1].to_doubles());
        CHECK(opt->state_names({"w"}).size() == state.size());
    }
}

TEST_CASE("nn adamw: errors") {
    CHECK_THROWS_WITH_AS(AdamW(AdamWOptions{0.1, 1.0}), doctest::Contains("adamw: invalid beta1"),
                         Error);
    CHECK_THROWS_AS(AdamW(AdamWOptions{0.1, 0.9, 0.99, 1e-8, -1.0}), Error);
    AdamW adamw(AdamWOptions{0.1, 0.9, 0.99, 1e-8, 0.1, {true, false}});
    Array p = zeros(Shape::of({3}));
    std::vector<Array> state{ones(Shape()), ones(Shape()), p, p};
    CHECK_THROWS_WITH_AS(adamw.update({p}, {p}, state),
                         doctest::Contains("decay mask has 2 flags for 1 parameters"), Error);
    AdamW plain(AdamWOptions{});
    CHECK_THROWS_WITH_AS(plain.update({p}, {p}, state, zeros(Shape::of({1}))),
                         doctest::Contains("learning rate must be a rank-0"), Error);
    CHECK_THROWS_WITH_AS(plain.update({p}, {p}, state, zeros(Shape(), DType::I64)),
                         doctest::Contains("learning rate must be a rank-0"), Error);
}

namespace {

// An optimizer written before run-time learning rates: only the constant-rate update.
class ConstantRateSgd : public Optimizer {
public:
    std::string name() const override { return "constant_sgd"; }
    std::vector<HostArray> initial_state(const std::vector<HostArray>&) const override {
        return {};
    }
    using Optimizer::update;
    OptimizerUpdate update(const std::vector<Array>& params, const std::vector<Array>& grads,
                           const std::vector<Array>&) const override {
        return {{params[0] - 0.1 * grads[0]}, {}};
    }
};

} // namespace

TEST_CASE("nn trainer: an optimizer without a run-time learning rate says so") {
    auto loss = [](const std::vector<Array>& p, const std::vector<Array>&) {
        return sum(p[0] * p[0]);
    };
    TrainerOptions o;
    o.compute = reference_backend();
    Trainer trainer(loss, {}, {HostArray::from<double>({1.0, 2.0}, {2})},
                    std::make_shared<ConstantRateSgd>(), o);
    CHECK_THROWS_WITH_AS(
        trainer.step({}, 0.1),
        doctest::Contains("constant_sgd: this optimizer takes no run-time learning rate"), Error);
}

TEST_CASE("nn optimizers: the constant learning rate a TrainStep applies") {
    CHECK(Sgd(SgdOptions{0.25}).learning_rate() == 0.25);
    CHECK(Adam(AdamOptions{0.002}).learning_rate() == 0.002);
    CHECK(AdamW(AdamWOptions{0.003}).learning_rate() == 0.003);
    // One without a constant rate says so, and that the trainer takes one per step.
    CHECK_THROWS_WITH_AS(ConstantRateSgd().learning_rate(),
                         doctest::Contains("constant_sgd: this optimizer has no constant "
                                           "learning rate"),
                         Error);
    CHECK_THROWS_AS(TrainStep(mlp({4, 3}, 1), std::make_shared<ConstantRateSgd>()), Error);
}

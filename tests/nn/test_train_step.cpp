// TrainStep (nn/train_step.hpp) on the reference backend: a softmax-regression model trained
// for a few steps against the gradient written out by hand, a partial batch getting its own
// program, evaluation, and the errors for malformed batches and parameters.
#include "nn/train_step.hpp"

#include "core/error.hpp"
#include "nn/layers.hpp"
#include "nn_layer_testing.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

constexpr int kIn = 3, kClasses = 4;

Model softmax_regression() {
    Model m;
    m.names = {"w", "b"};
    m.params = {HostArray::from(random_values(kClasses * kIn, 1, -0.5, 0.5), {kClasses, kIn}),
                HostArray::from(random_values(kClasses, 2, -0.5, 0.5), {kClasses})};
    for (HostArray& p : m.params) { // f32, as a model's parameters usually are
        HostArray f(p.sizes(), DType::F32);
        for (std::int64_t i = 0; i < p.size(); ++i)
            f.set_flat(i, p.flat(i));
        p = f;
    }
    m.forward = [](const std::vector<Array>& p, const Array& x) { return linear(x, p[0], p[1]); };
    m.example_shape = {kIn};
    return m;
}

struct Batch {
    HostArray x, y;
};

Batch make_batch(int b, std::uint64_t seed) {
    auto xv = random_values(static_cast<std::size_t>(b * kIn), seed);
    std::vector<float> xf(xv.begin(), xv.end());
    std::vector<std::int32_t> y;
    for (int i = 0; i < b; ++i)
        y.push_back(static_cast<std::int32_t>((i * 7 + seed) % kClasses));
    return {HostArray::from(xf, {b, kIn}), HostArray::from(y, {b})};
}

// One SGD step of softmax regression in double; returns the loss before the update.
double naive_step(std::vector<double>& w, std::vector<double>& bias, const Batch& batch,
                  double lr) {
    const int b = static_cast<int>(batch.y.size());
    auto x = batch.x.to_doubles();
    std::vector<double> dw(w.size(), 0.0), db(bias.size(), 0.0);
    double loss = 0.0;
    for (int i = 0; i < b; ++i) {
        std::vector<double> z(kClasses);
        double m = -INFINITY, s = 0.0;
        for (int k = 0; k < kClasses; ++k) {
            z[k] = bias[k];
            for (int j = 0; j < kIn; ++j)
                z[k] += w[k * kIn + j] * x[i * kIn + j];
            m = std::max(m, z[k]);
        }
        for (int k = 0; k < kClasses; ++k)
            s += std::exp(z[k] - m);
        const int label = static_cast<int>(batch.y.flat(i));
        loss -= (z[label] - m - std::log(s)) / b;
        for (int k = 0; k < kClasses; ++k) {
            const double dz = (std::exp(z[k] - m) / s - (k == label ? 1.0 : 0.0)) / b;
            db[k] += dz;
            for (int j = 0; j < kIn; ++j)
                dw[k * kIn + j] += dz * x[i * kIn + j];
        }
    }
    for (std::size_t i = 0; i < w.size(); ++i)
        w[i] -= lr * dw[i];
    for (std::size_t i = 0; i < bias.size(); ++i)
        bias[i] -= lr * db[i];
    return loss;
}

} // namespace

TEST_CASE("nn train step: sgd steps of softmax regression match the hand-written gradient") {
    const double lr = 0.5;
    TrainStep step(softmax_regression(), std::make_shared<Sgd>(SgdOptions{lr}),
                   reference_backend());
    std::vector<double> w = step.params()[0].to_doubles(), b = step.params()[1].to_doubles();
    // Full batches of 6, then a final partial batch of 2: the same program (a symbolic batch).
    for (auto [size, seed] : {std::pair{6, 10}, std::pair{6, 11}, std::pair{2, 12}}) {
        Batch batch = make_batch(size, static_cast<std::uint64_t>(seed));
        const double expect = naive_step(w, b, batch, lr);
        // step_loss: the same step, the loss returned as an array (read here at once).
        const double loss =
            seed == 11 ? step.step_loss(batch.x, batch.y).flat(0) : step.step(batch.x, batch.y);
        CHECK(loss == doctest::Approx(expect).epsilon(1e-5));
        check_close(step.params()[0].to_doubles(), w, 1e-5, 1e-6);
        check_close(step.params()[1].to_doubles(), b, 1e-5, 1e-6);
    }
    CHECK(step.programs_compiled() == 1);
    CHECK(step.params()[0].dtype() == DType::F32);
    // model(): the names and forward of the model given, the parameters as trained.
    Model now = step.model();
    CHECK(now.names == std::vector<std::string>{"w", "b"});
    CHECK(now.params[0].to_doubles() == step.params()[0].to_doubles());
    CHECK(step.example_shape() == std::vector<std::int64_t>{kIn});
}

TEST_CASE("nn train step: count_correct, adam state, and set_params") {
    TrainStep step(softmax_regression(), std::make_shared<Adam>(AdamOptions{0.01}),
                   reference_backend());
    CHECK(step.optimizer_state().size() == 6); // two powers, then m and v per parameter
    Batch batch = make_batch(6, 3);
    auto w = step.params()[0].to_doubles(), b = step.params()[1].to_doubles();
    std::int64_t correct = 0;
    auto x = batch.x.to_doubles();
    for (int i = 0; i < 6; ++i) {
        int best = 0;
        std::vector<double> z(kClasses);
        for (int k = 0; k < kClasses; ++k) {
            z[k] = b[k];
            for (int j = 0; j < kIn; ++j)
                z[k] += w[k * kIn + j] * x[i * kIn + j];
            if (z[k] > z[best]) best = k;
        }
        correct += best == batch.y.flat(i);
    }
    CHECK(step.count_correct(batch.x, batch.y) == correct);
    step.step(batch.x, batch.y);
    CHECK(step.optimizer_state()[0].flat(0) == doctest::Approx(0.9));
    CHECK(step.optimizer_state()[1].flat(0) == doctest::Approx(0.999));
    CHECK(step.params()[0].to_doubles() != w);
    step.set_params(softmax_regression().params);
    CHECK(step.params()[0].to_doubles() == w);
    CHECK(step.optimizer_state()[0].flat(0) == 1.0);
    CHECK_THROWS_WITH_AS(step.set_params({step.params()[1], step.params()[1]}),
                         doctest::Contains("parameter 'w' is f32 (4,3), got f32 (4)"), Error);
}

TEST_CASE("nn train step: malformed batches throw hedra::Error") {
    TrainStep step(softmax_regression(), std::make_shared<Sgd>(SgdOptions{0.1}),
                   reference_backend());
    Batch batch = make_batch(4, 1);
    CHECK_THROWS_WITH_AS(step.step(HostArray({4, 5}, DType::F32), batch.y),
                         doctest::Contains("images must be f32 (batch,3), got f32 (4,5)"), Error);
    CHECK_THROWS_WITH_AS(step.step(batch.x, HostArray({3}, DType::I32)),
                         doctest::Contains("labels must be integers of shape (4)"), Error);
    CHECK_THROWS_WITH_AS(step.step(batch.x, HostArray({4}, DType::F32)),
                         doctest::Contains("labels must be integers"), Error);
    CHECK_THROWS_AS(TrainStep(Model{}, std::make_shared<Sgd>(SgdOptions{0.1})), Error);
}

TEST_CASE("nn train step: i32 and i64 labels give the same step, a program each") {
    const double lr = 0.5;
    auto sgd = std::make_shared<Sgd>(SgdOptions{lr});
    TrainStep narrow(softmax_regression(), sgd, reference_backend());
    TrainStep wide(softmax_regression(), sgd, reference_backend());
    Batch batch = make_batch(6, 3);
    HostArray y64({6}, DType::I64);
    for (std::int64_t i = 0; i < 6; ++i)
        y64.set_flat(i, batch.y.flat(i));
    std::vector<double> w = narrow.params()[0].to_doubles(), b = narrow.params()[1].to_doubles();
    const double expect = naive_step(w, b, batch, lr);
    CHECK(narrow.step(batch.x, batch.y) == doctest::Approx(expect).epsilon(1e-5));
    CHECK(wide.step(batch.x, y64) == doctest::Approx(expect).epsilon(1e-5));
    check_close(wide.params()[0].to_doubles(), w, 1e-5, 1e-6);
    CHECK(wide.step(batch.x, batch.y) > 0.0); // the same trainer, now i32: its own program
    CHECK(wide.programs_compiled() == 2);
    // The step applies the optimizer's constant learning rate.
    CHECK(sgd->learning_rate() == lr);
}

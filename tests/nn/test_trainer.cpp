// Trainer (nn/trainer.hpp) on a softmax regression (nn::linear and nn::cross_entropy): it learns
// over 20 AdamW steps with the same losses and parameters on the reference and openmp backends;
// extra outputs and evaluation; a program per input shape; clipping bounds the update; gradient
// accumulation over two half batches gives the full batch's step; bad inputs throw.
#include "nn/trainer.hpp"

#include "core/error.hpp"
#include "nn/layers.hpp"
#include "nn/lr_schedule.hpp"
#include "nn_layer_testing.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

constexpr int kIn = 4, kClasses = 3, kBatch = 16;

HostArray f32(const std::vector<double>& v, std::vector<std::int64_t> sizes) {
    HostArray a(std::move(sizes), DType::F32);
    for (std::size_t i = 0; i < v.size(); ++i)
        a.set_flat(static_cast<std::int64_t>(i), v[i]);
    return a;
}

// x (b, 4) and labels from a fixed linear rule, so that the classes are learnable.
std::vector<HostArray> batch(int b, std::uint64_t seed) {
    std::vector<double> x = random_values(static_cast<std::size_t>(b * kIn), seed);
    std::vector<std::int64_t> y;
    for (int i = 0; i < b; ++i) {
        const double* r = &x[static_cast<std::size_t>(i * kIn)];
        const double s = r[0] - r[1] + 0.5 * r[2];
        y.push_back(s < -0.3 ? 0 : s < 0.3 ? 1 : 2);
    }
    return {f32(x, {b, kIn}), HostArray::from(y, {b})};
}

std::vector<HostArray> initial_params() {
    return {f32(random_values(kClasses * kIn, 31, -0.3, 0.3), {kClasses, kIn}),
            f32(random_values(kClasses, 32, -0.3, 0.3), {kClasses})};
}

LossOutputs softmax_regression(const std::vector<Array>& p, const std::vector<Array>& in) {
    Array logits = linear(in[0], p[0], p[1]);
    return {cross_entropy(logits, in[1]), {count_correct(logits, in[1])}};
}

const std::vector<InputSpec> kSpecs = {{{kAnyExtent, kIn}, DType::F32, "x"},
                                       {{kAnyExtent}, DType::I64, "labels"}};

Trainer make_trainer(std::shared_ptr<const Optimizer> opt, const std::string& backend,
                     double clip = 0.0) {
    TrainerOptions o;
    o.param_names = {"weight", "bias"};
    o.clip_norm = clip;
    o.compute.backend = backend;
    return Trainer(LossOutputsFunction(softmax_regression), kSpecs, initial_params(),
                   std::move(opt), o);
}

std::vector<double> flat_params(const Trainer& t) {
    std::vector<double> out;
    for (const HostArray& p : t.params())
        for (double v : p.to_doubles())
            out.push_back(v);
    return out;
}

} // namespace

TEST_CASE("nn trainer: a softmax regression learns, the same on reference and openmp") {
    const std::vector<HostArray> data = batch(kBatch, 41);
    const WarmupCosine schedule{0.1, 0.01, 3, 20};
    std::vector<std::vector<double>> losses(2), params(2);
    const std::vector<std::string> backends{"reference", "openmp"};
    for (std::size_t k = 0; k < backends.size(); ++k) {
        INFO(backends[k]);
        Trainer trainer = make_trainer(
            std::make_shared<AdamW>(AdamWOptions{0.1, 0.9, 0.99, 1e-8, 0.1}), backends[k], 1.0);
        for (int i = 0; i < 20; ++i)
            losses[k].push_back(trainer.step(data, schedule.at(trainer.step_count())));
        CHECK(trainer.programs_compiled() == 1);
        CHECK(losses[k].back() < 0.6 * losses[k].front());
        StepResult eval = trainer.evaluate(data);
        CHECK(eval.outputs.size() == 1);
        CHECK(eval.outputs[0].flat(0) >= 12); // of 16
        params[k] = flat_params(trainer);
    }
    check_close(losses[1], losses[0], 1e-5, 1e-6);
    check_close(params[1], params[0], 1e-5, 1e-6);
}

TEST_CASE("nn trainer: extra outputs, a program per batch size, evaluation without an update") {
    Trainer trainer = make_trainer(std::make_shared<Sgd>(SgdOptions{0.1}), "reference");
    const std::vector<HostArray> full = batch(kBatch, 1), half = batch(kBatch / 2, 2);
    StepResult r = trainer.step_outputs(full, 0.5);
    CHECK(r.loss.rank() == 0);
    CHECK(r.grad_norm.address() == nullptr); // no clipping, no norm
    REQUIRE(r.outputs.size() == 1);
    CHECK(r.outputs[0].dtype() == DType::I64);
    trainer.step(half, 0.5);
    trainer.step(full, 0.5);
    CHECK(trainer.programs_compiled() == 1); // the symbolic batch: one program for both sizes
    const std::vector<double> before = flat_params(trainer);
    const double loss = trainer.evaluate(full).loss.flat(0);
    CHECK(trainer.evaluate(full).loss.flat(0) == loss);
    CHECK(flat_params(trainer) == before);
    CHECK(trainer.step_count() == 3);
    CHECK(trainer.programs_compiled() == 2);
}

TEST_CASE("nn trainer: a symbolic batch takes the steps of a program per batch size") {
    std::vector<std::vector<double>> losses(2), params(2);
    std::vector<int> programs(2);
    for (int symbolic = 0; symbolic < 2; ++symbolic) {
        TrainerOptions o;
        o.compute.backend = "openmp";
        o.symbolic_batch = symbolic == 1;
        Trainer trainer(LossOutputsFunction(softmax_regression), kSpecs, initial_params(),
                        std::make_shared<AdamW>(AdamWOptions{0.05, 0.9, 0.99, 1e-8, 0.1}), o);
        int seed = 0;
        for (int b : {16, 8, 5, 16, 3, 1, 32, 16, 7}) {
            StepResult r = trainer.step_outputs(batch(b, std::uint64_t(++seed)), 0.1);
            losses[symbolic].push_back(r.loss.flat(0));
            losses[symbolic].push_back(r.outputs.at(0).flat(0)); // correct count
        }
        losses[symbolic].push_back(trainer.evaluate(batch(12, 99)).loss.flat(0));
        params[symbolic] = flat_params(trainer);
        programs[symbolic] = trainer.programs_compiled();
    }
    check_close(losses[1], losses[0], 1e-5, 1e-6);
    check_close(params[1], params[0], 1e-5, 1e-6);
    CHECK(programs[0] == 8); // 16, 8, 5, 3, 1, 32, 7 and the evaluation
    CHECK(programs[1] == 3); // up to 16, up to 32 (a larger batch came), evaluation
}

TEST_CASE("nn trainer: clipping bounds the update and reports the norm") {
    const double clip = 0.01;
    Trainer trainer = make_trainer(std::make_shared<Sgd>(SgdOptions{1.0}), "reference", clip);
    const std::vector<double> before = flat_params(trainer);
    StepResult r = trainer.step_outputs(batch(kBatch, 3), 1.0);
    REQUIRE(r.grad_norm.address() != nullptr);
    const double norm = r.grad_norm.flat(0);
    CHECK(norm > clip);
    const std::vector<double> after = flat_params(trainer);
    double moved = 0;
    for (std::size_t i = 0; i < after.size(); ++i)
        moved += (after[i] - before[i]) * (after[i] - before[i]);
    CHECK(std::sqrt(moved) == doctest::Approx(clip * norm / (norm + 1e-6)).epsilon(1e-4));
}

TEST_CASE("nn trainer: two accumulated half batches make the full batch's step") {
    const std::vector<HostArray> full = batch(kBatch, 4);
    std::vector<std::vector<HostArray>> halves(2);
    for (int h = 0; h < 2; ++h) {
        HostArray x({kBatch / 2, kIn}, DType::F32), y({kBatch / 2}, DType::I64);
        for (std::int64_t i = 0; i < kBatch / 2; ++i) {
            for (std::int64_t j = 0; j < kIn; ++j)
                x.set_flat(i * kIn + j, full[0].flat((h * kBatch / 2 + i) * kIn + j));
            y.set_flat(i, full[1].flat(h * kBatch / 2 + i));
        }
        halves[h] = {x, y};
    }
    auto adam = std::make_shared<Adam>(AdamOptions{0.01});
    Trainer whole = make_trainer(adam, "reference", 0.5),
            parts = make_trainer(adam, "reference", 0.5);
    for (int step = 0; step < 2; ++step) {
        const double a = whole.step(full, 0.01), b = parts.step_accumulated(halves, 0.01);
        CHECK(b == doctest::Approx(a).epsilon(1e-6));
    }
    check_close(flat_params(parts), flat_params(whole), 1e-5, 1e-7);
    CHECK(parts.programs_compiled() == 3); // the first micro-batch, the others, the update
    CHECK(parts.step_count() == 2);
}

TEST_CASE("nn trainer: errors name the input, its spec and what it got") {
    Trainer trainer = make_trainer(std::make_shared<Sgd>(SgdOptions{0.1}), "reference");
    std::vector<HostArray> bad = batch(4, 5);
    bad[1] = HostArray({4}, DType::F32);
    CHECK_THROWS_WITH_AS(trainer.step(bad, 0.1),
                         doctest::Contains("input 1 'labels' must be i64 (any,), got f32 (4,)"),
                         Error);
    CHECK_THROWS_WITH_AS(trainer.step({bad[0]}, 0.1),
                         doctest::Contains("got 1 inputs, the trainer's specs list 2"), Error);
    CHECK_THROWS_WITH_AS(trainer.step(batch(4, 5), -1.0), doctest::Contains("learning rate"),
                         Error);
    CHECK_THROWS_WITH_AS(trainer.step_accumulated({}, 0.1), doctest::Contains("no micro-batches"),
                         Error);
    auto scalar_loss = [](const std::vector<Array>& p, const std::vector<Array>&) { return p[0]; };
    Trainer not_scalar(scalar_loss, {}, initial_params(), std::make_shared<Sgd>(SgdOptions{0.1}));
    CHECK_THROWS_WITH_AS(not_scalar.step({}, 0.1),
                         doctest::Contains("loss function must return a rank-0 float array"),
                         Error);
    CHECK_THROWS_WITH_AS(Trainer(scalar_loss, {}, {HostArray({2}, DType::I64)},
                                 std::make_shared<Sgd>(SgdOptions{0.1})),
                         doctest::Contains("parameters must be f32 or f64"), Error);
}

TEST_CASE("nn trainer: a graph that slices the batch compiles per size, trying symbolic once") {
    int built = 0; // the loss function runs once per graph built
    auto loss = [&built](const std::vector<Array>& p, const std::vector<Array>& in) {
        ++built;
        // The first row alone: a slice of the batch axis, which a symbolic extent refuses.
        Array first = view(in[0], Shape{range(1), range(kIn)}, AffineMap::identity(2));
        Array logits = linear(in[0], p[0], p[1]);
        return LossOutputs{cross_entropy(logits, in[1]) + 0.0f * sum(first), {}};
    };
    TrainerOptions o;
    o.compute.backend = "reference";
    Trainer trainer(LossOutputsFunction(loss), kSpecs, initial_params(),
                    std::make_shared<Sgd>(SgdOptions{0.1}), o);
    TrainerOptions fixed_options = o;
    fixed_options.symbolic_batch = false;
    Trainer fixed(LossOutputsFunction(softmax_regression), kSpecs, initial_params(),
                  std::make_shared<Sgd>(SgdOptions{0.1}), fixed_options);
    for (int b : {8, 8, 5, 8}) {
        const std::vector<HostArray> data = batch(b, std::uint64_t(b));
        CHECK(trainer.step(data, 0.1) == doctest::Approx(fixed.step(data, 0.1)).epsilon(1e-6));
    }
    CHECK(trainer.programs_compiled() == 2); // 8 and 5
    CHECK(built == 3);                       // the symbolic attempt once, then one graph per size
}

TEST_CASE("nn trainer: the step's memory plan: the new parameters are written in place") {
    Trainer trainer = make_trainer(std::make_shared<Sgd>(SgdOptions{0.1}), "openmp");
    const std::vector<HostArray> data = batch(kBatch, 5);
    std::optional<ProgramMemory> m = trainer.step_memory(data);
    REQUIRE(m.has_value());
    // The new weight (3 x 4) and bias (3), f32, into the old ones' memory (the extra output's
    // kernel, which reads the bias, runs before the bias's update); the loss and the extra
    // output (rank 0) as results.
    CHECK(m->donated == (kClasses * kIn + kClasses) * 4u);
    CHECK(m->results >= 2 * 4u);
    CHECK(m->arena <= m->temporaries);
    CHECK(trainer.programs_compiled() == 1);
    trainer.step(data, 0.1); // the same program
    CHECK(trainer.programs_compiled() == 1);
    CHECK_FALSE(make_trainer(std::make_shared<Sgd>(SgdOptions{0.1}), "reference")
                    .step_memory(data)
                    .has_value());
    CHECK_THROWS_AS(trainer.step_memory({data[0]}), Error);
}

// Mixed precision (nn/autocast.hpp, nn/loss_scaling.hpp, TrainerOptions::precision): under
// autocast a dense layer and a convolution round their operands to bf16 and their result once,
// exactly as naive loops that round with core/half.hpp do, on the reference, openmp and c
// backends; a bf16 MLP and a bf16 GPT train within stated tolerances of their f32 runs, with f32
// parameters and optimizer state; f16 loss scaling skips a step whose gradients overflow and
// halves its scale, and grows it after clean steps; bad combinations of options throw naming
// what to do.
#include <cmath>
#include <memory>

#include "core/error.hpp"
#include "core/half.hpp"
#include "core/node.hpp"
#include "nn/autocast.hpp"
#include "nn/gpt.hpp"
#include "nn/layers.hpp"
#include "nn/trainer.hpp"
#include "nn/transformer.hpp"
#include "nn_layer_testing.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

const std::vector<std::string> kBackends{"reference", "openmp", "c"};

double bf16(double v) {
    return half_to_f32(DType::BF16, f32_to_half(DType::BF16, static_cast<float>(v)));
}

HostArray f32(const std::vector<double>& v, std::vector<std::int64_t> sizes) {
    HostArray a(std::move(sizes), DType::F32);
    for (std::size_t i = 0; i < v.size(); ++i)
        a.set_flat(static_cast<std::int64_t>(i), v[i]);
    return a;
}

// A two-layer MLP on (b, 6) inputs and 3 classes: linear, GELU, linear, cross-entropy.
constexpr int kIn = 6, kHidden = 16, kClasses = 3, kBatch = 32;

std::vector<HostArray> mlp_params() {
    return {f32(random_values(kHidden * kIn, 11, -0.5, 0.5), {kHidden, kIn}),
            f32(random_values(kHidden, 12, -0.1, 0.1), {kHidden}),
            f32(random_values(kClasses * kHidden, 13, -0.5, 0.5), {kClasses, kHidden}),
            f32(random_values(kClasses, 14, -0.1, 0.1), {kClasses})};
}

Array mlp_loss(const std::vector<Array>& p, const std::vector<Array>& in) {
    return cross_entropy(linear(gelu(linear(in[0], p[0], p[1])), p[2], p[3]), in[1]);
}

std::vector<HostArray> mlp_batch(std::uint64_t seed) {
    std::vector<double> x = random_values(kBatch * kIn, seed, -2.0, 2.0);
    std::vector<std::int64_t> y;
    for (int i = 0; i < kBatch; ++i)
        y.push_back(x[static_cast<std::size_t>(i * kIn)] > 0.5     ? 0
                    : x[static_cast<std::size_t>(i * kIn + 1)] > 0 ? 1
                                                                   : 2);
    return {f32(x, {kBatch, kIn}), HostArray::from(y, {kBatch})};
}

Trainer mlp_trainer(DType precision, const std::string& backend,
                    std::optional<LossScaling> scaling = std::nullopt) {
    TrainerOptions o;
    o.precision = precision;
    o.loss_scaling = scaling;
    o.clip_norm = 1.0;
    o.compute.backend = backend;
    return Trainer(
        mlp_loss, {{{kAnyExtent, kIn}, DType::F32, "x"}, {{kAnyExtent}, DType::I64, "labels"}},
        mlp_params(), std::make_shared<AdamW>(AdamWOptions{1e-2, 0.9, 0.99, 1e-8, 0.1}), o);
}

void check_all_f32(const Trainer& t) {
    for (const HostArray& p : t.params())
        CHECK(p.dtype() == DType::F32);
    for (const HostArray& s : t.optimizer_state())
        CHECK(s.dtype() == DType::F32);
}

std::vector<double> flat(const std::vector<HostArray>& arrays) {
    std::vector<double> out;
    for (const HostArray& a : arrays)
        for (double v : a.to_doubles())
            out.push_back(v);
    return out;
}

} // namespace

TEST_CASE("nn autocast: a bf16 linear layer is the naive loop over bf16-rounded operands") {
    constexpr int n = 6, f = 24, o = 5;
    const std::vector<double> x = random_values(n * f, 1), w = random_values(o * f, 2),
                              b = random_values(o, 3);
    // The oracle: operands and bias rounded to bf16, exact products summed in double, the result
    // rounded once; and the same without rounding the operands, which must differ.
    std::vector<double> rounded(n * o), unrounded(n * o);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < o; ++j) {
            double s = bf16(b[j]), u = bf16(b[j]);
            for (int k = 0; k < f; ++k) {
                s += bf16(x[i * f + k]) * bf16(w[j * f + k]);
                u += static_cast<float>(x[i * f + k]) * static_cast<float>(w[j * f + k]);
            }
            rounded[i * o + j] = bf16(s);
            unrounded[i * o + j] = bf16(u);
        }
    int operand_rounding_shows = 0;
    for (int k = 0; k < n * o; ++k)
        operand_rounding_shows += rounded[k] != unrounded[k];
    CHECK(operand_rounding_shows >= n * o / 4); // the check below can tell the two apart
    for (const std::string& backend : kBackends) {
        INFO(backend);
        Array y;
        {
            Autocast autocast(DType::BF16);
            y = linear(array(f32(x, {n, f})), array(f32(w, {o, f})), array(f32(b, {o})));
        }
        CHECK(y.dtype() == DType::BF16);
        ComputeOptions options;
        options.backend = backend;
        const std::vector<double> got = compute(y, options).to_doubles();
        int off = 0;
        for (int k = 0; k < n * o; ++k) {
            // The f32 sum's order may move a result across a rounding boundary: one bf16 ulp.
            const double ulp = std::ldexp(1.0, std::ilogb(rounded[k]) - 7);
            CHECK(std::abs(got[k] - rounded[k]) <= ulp);
            off += got[k] != rounded[k];
        }
        CHECK(off <= 1);
    }
}

TEST_CASE("nn autocast: a bf16 convolution is the naive one over bf16-rounded operands") {
    const ConvSizes s{
        .n = 2, .c = 3, .h = 6, .w = 6, .co = 4, .kh = 3, .kw = 3, .stride = 1, .pad = 1};
    std::vector<double> x = random_values(2 * 3 * 6 * 6, 21), w = random_values(4 * 3 * 3 * 3, 22),
                        b = random_values(4, 23);
    std::vector<double> xr = x, wr = w, br = b;
    for (std::vector<double>* v : {&xr, &wr, &br})
        for (double& e : *v)
            e = bf16(e);
    std::vector<double> want = naive_conv2d(xr, wr, br, s), unrounded = naive_conv2d(x, w, br, s);
    int operand_rounding_shows = 0;
    for (std::size_t k = 0; k < want.size(); ++k) {
        want[k] = bf16(want[k]);
        operand_rounding_shows += want[k] != bf16(unrounded[k]);
    }
    CHECK(operand_rounding_shows >= int(want.size()) / 4);
    for (const std::string& backend : kBackends) {
        INFO(backend);
        Array y;
        {
            Autocast autocast(DType::BF16);
            y = conv2d(array(f32(x, {2, 3, 6, 6})), array(f32(w, {4, 3, 3, 3})), array(f32(b, {4})),
                       1, 1);
        }
        CHECK(y.dtype() == DType::BF16);
        ComputeOptions options;
        options.backend = backend;
        const std::vector<double> got = compute(y, options).to_doubles();
        REQUIRE(got.size() == want.size());
        int off = 0;
        for (std::size_t k = 0; k < want.size(); ++k) {
            CHECK(std::abs(got[k] - want[k]) <= std::ldexp(1.0, std::ilogb(want[k]) - 7));
            off += got[k] != want[k];
        }
        CHECK(off <= 2);
    }
}

TEST_CASE("nn autocast: the operation lists; scopes nest and restore; a bad type throws") {
    const Array x = array(f32(random_values(2 * 4 * 8, 5), {2, 4, 8}));
    const Array w = array(f32(random_values(8 * 8, 6), {8, 8}));
    CHECK(autocast_dtype() == DType::F32);
    {
        Autocast outer(DType::BF16);
        CHECK(linear(x, w).dtype() == DType::BF16);
        CHECK(matmul(autocast_half(x), autocast_half(transpose(w))).dtype() == DType::BF16);
        const Array h = linear(x, w);
        CHECK(softmax(h).dtype() == DType::F32);
        CHECK(log_softmax(h).dtype() == DType::F32);
        CHECK(gelu(h).dtype() == DType::F32);
        CHECK(layer_norm(h, Array(), Array()).dtype() == DType::F32);
        CHECK((x + h).dtype() == DType::F32); // the residual stream stays f32
        CHECK(relu(h).dtype() == DType::BF16);
        // The products' map reads the rounded operands through views and converts them itself:
        // a cast node of the broadcast (b, t, o, f) shape would be materialized whole.
        NodePtr n = linear(x * 2.0, w, array(f32(random_values(8, 7), {8}))).node();
        while (n->kind != NodeKind::Reduce)
            n = n->inputs.at(0);
        const NodePtr& products = n->inputs.at(0);
        CHECK(products->kind == NodeKind::Map);
        for (const NodePtr& operand : products->inputs) {
            CHECK(operand->kind == NodeKind::View);
            CHECK(operand->dtype == DType::BF16);
        }
        {
            Autocast inner(DType::F32);
            CHECK(autocast_dtype() == DType::F32);
            CHECK(linear(x, w).dtype() == DType::F32);
        }
        CHECK(autocast_dtype() == DType::BF16);
    }
    CHECK(autocast_dtype() == DType::F32);
    CHECK(linear(x, w).dtype() == DType::F32);
    CHECK_THROWS_WITH_AS(Autocast(DType::I32), doctest::Contains("use DType::BF16 or DType::F16"),
                         Error);
}

// The losses of 8 AdamW steps in bf16 stay within 1% of the f32 run's (measured: 0.1%, 1.0e-3
// of about 1), the parameters within 0.02 of them (the rounding of the operands, 2^-9 relative,
// moves every step a little); the parameters and optimizer state stay f32. The same on every
// CPU backend.
TEST_CASE("nn mixed precision: a bf16 MLP step follows the f32 step on every backend") {
    Trainer reference = mlp_trainer(DType::F32, "openmp");
    std::vector<double> f32_losses;
    for (int s = 0; s < 8; ++s)
        f32_losses.push_back(reference.step(mlp_batch(100 + s % 2), 1e-2));
    CHECK(f32_losses.back() < f32_losses.front()); // it learns
    const std::vector<double> f32_params = flat(reference.params());
    for (const std::string& backend : kBackends) {
        INFO(backend);
        Trainer t = mlp_trainer(DType::BF16, backend);
        CHECK_FALSE(t.loss_scaling());
        double largest = 0.0;
        for (int s = 0; s < 8; ++s) {
            const double loss = t.step(mlp_batch(100 + s % 2), 1e-2);
            INFO("step " << s);
            CHECK(std::abs(loss - f32_losses[s]) <= 0.01 * f32_losses[s]);
            largest = std::max(largest, std::abs(loss - f32_losses[s]));
        }
        CHECK(largest > 1e-6);             // bf16 did change the computation
        CHECK(t.programs_compiled() == 1); // the whole step is one program
        check_all_f32(t);
        const std::vector<double> p = flat(t.params());
        for (std::size_t k = 0; k < p.size(); ++k)
            CHECK(std::abs(p[k] - f32_params[k]) <= 0.02);
        CHECK(std::abs(t.evaluate(mlp_batch(7)).loss.flat(0) -
                       reference.evaluate(mlp_batch(7)).loss.flat(0)) <= 0.01 * f32_losses[7]);
    }
}

// A tiny GPT (1 layer, 2 heads, width 16, context 8): 6 AdamW steps in bf16 stay within 0.2%
// of the f32 losses (about 2.4 at this vocabulary; measured: 0.01%, 2.0e-4).
TEST_CASE("nn mixed precision: a bf16 GPT step follows the f32 step") {
    GptConfig cfg;
    cfg.vocab = 11, cfg.block = 8, cfg.layers = 1, cfg.heads = 2, cfg.embd = 16;
    auto run = [&](DType precision, const std::string& backend, int steps) {
        TrainerOptions o;
        o.precision = precision;
        o.clip_norm = 1.0;
        o.compute.backend = backend;
        auto loss = [&](const std::vector<Array>& p, const std::vector<Array>& in) {
            return gpt_loss(cfg, p, in[0], in[1]);
        };
        Trainer t(loss, {{{2, 8}, DType::I64, "tokens"}, {{2, 8}, DType::I64, "targets"}},
                  gpt_init(cfg, 3),
                  std::make_shared<AdamW>(AdamWOptions{3e-3, 0.9, 0.99, 1e-8, 0.1}), o);
        std::vector<double> losses;
        for (int s = 0; s < steps; ++s) {
            std::vector<std::int64_t> tokens, targets;
            for (int i = 0; i < 16; ++i) {
                tokens.push_back((5 * i + s) % 11);
                targets.push_back((5 * i + s + 1) % 11);
            }
            losses.push_back(
                t.step({HostArray::from(tokens, {2, 8}), HostArray::from(targets, {2, 8})}, 3e-3));
        }
        check_all_f32(t);
        return losses;
    };
    const std::vector<double> f32_losses = run(DType::F32, "openmp", 6);
    const std::vector<double> bf16_losses = run(DType::BF16, "openmp", 6);
    double largest = 0.0;
    for (std::size_t s = 0; s < f32_losses.size(); ++s) {
        INFO("step " << s << ": f32 " << f32_losses[s] << ", bf16 " << bf16_losses[s]);
        CHECK(std::abs(bf16_losses[s] - f32_losses[s]) <= 0.002 * f32_losses[s]);
        largest = std::max(largest, std::abs(bf16_losses[s] - f32_losses[s]));
    }
    CHECK(largest > 1e-6);
    CHECK(bf16_losses.back() < bf16_losses.front());
    // The reference interpreter and the c backend give the openmp backend's bf16 losses (two
    // steps; only the f32 sums' order differs).
    for (const std::string backend : {"reference", "c"}) {
        INFO(backend);
        const std::vector<double> other = run(DType::BF16, backend, 2);
        for (std::size_t s = 0; s < other.size(); ++s)
            CHECK(std::abs(other[s] - bf16_losses[s]) <= 1e-4 * bf16_losses[s]);
    }
}

TEST_CASE("nn mixed precision: f16 loss scaling skips an overflowing step and halves the scale") {
    // A scale of 2^100 makes the f16 activation gradients overflow: nothing is updated.
    Trainer t = mlp_trainer(DType::F16, "openmp", LossScaling{.init_scale = 0x1p100});
    CHECK(t.loss_scaling());
    const std::vector<double> before = flat(t.params()), state = flat(t.optimizer_state());
    StepResult r = t.step_outputs(mlp_batch(100), 1e-2);
    CHECK(r.skipped.flat(0) == 1.0);
    CHECK(std::isfinite(r.loss.flat(0)));
    CHECK(flat(t.params()) == before);
    CHECK(flat(t.optimizer_state()) == state);
    CHECK(t.loss_scale() == 0x1p99);
    CHECK(t.step_count() == 1); // counted: a schedule moves on, as PyTorch's does
    check_all_f32(t);
    // Halving until the gradients fit, then updates.
    int skipped = 1;
    for (int s = 0; s < 120 && t.step_outputs(mlp_batch(100), 1e-2).skipped.flat(0) != 0.0; ++s)
        ++skipped;
    CHECK(skipped > 60);
    CHECK(t.loss_scale() < 0x1p40);
    CHECK(flat(t.params()) != before);
}

TEST_CASE("nn mixed precision: clean f16 steps grow the scale and follow the f32 run") {
    Trainer reference = mlp_trainer(DType::F32, "openmp");
    Trainer t =
        mlp_trainer(DType::F16, "openmp", LossScaling{.init_scale = 1024, .growth_interval = 3});
    CHECK(t.loss_scale() == 1024.0);
    for (int s = 0; s < 8; ++s) {
        const double want = reference.step(mlp_batch(100 + s % 2), 1e-2);
        StepResult r = t.step_outputs(mlp_batch(100 + s % 2), 1e-2);
        INFO("step " << s);
        CHECK(r.skipped.flat(0) == 0.0);
        // f16's 11-bit significand: closer than bf16's 8 (measured: 1e-4 relative).
        CHECK(std::abs(r.loss.flat(0) - want) <= 0.001 * want);
        CHECK(t.loss_scale_growth_tracker() == (s + 1) % 3);
    }
    CHECK(t.loss_scale() == 4096.0); // grown after steps 3 and 6
    CHECK(t.programs_compiled() == 1);
    check_all_f32(t);
    // The scale and its tracker travel with a checkpoint.
    TrainerCheckpoint c = t.checkpoint();
    CHECK(c.names[c.names.size() - 2] == "loss_scaler.scale");
    CHECK(c.names.back() == "loss_scaler.growth_tracker");
    Trainer resumed =
        mlp_trainer(DType::F16, "openmp", LossScaling{.init_scale = 1024, .growth_interval = 3});
    resumed.restore(c.names, c.arrays, c.metadata);
    CHECK(resumed.loss_scale() == 4096.0);
    CHECK(resumed.loss_scale_growth_tracker() == 2);
    CHECK(resumed.step(mlp_batch(3), 1e-2) == t.step(mlp_batch(3), 1e-2));
}

TEST_CASE("nn mixed precision: bad combinations of options say what to do") {
    auto make = [](DType precision, std::vector<HostArray> params,
                   std::optional<LossScaling> scaling = std::nullopt) {
        TrainerOptions o;
        o.precision = precision;
        o.loss_scaling = scaling;
        return Trainer(mlp_loss,
                       {{{kAnyExtent, kIn}, DType::F32, "x"}, {{kAnyExtent}, DType::I64, "y"}},
                       std::move(params), std::make_shared<Sgd>(SgdOptions{0.1}), o);
    };
    CHECK_THROWS_WITH_AS(make(DType::I32, mlp_params()),
                         doctest::Contains("use DType::F32, DType::BF16 or DType::F16"), Error);
    CHECK_THROWS_WITH_AS(make(DType::F64, mlp_params()),
                         doctest::Contains("precision f64 is not a training precision"), Error);
    std::vector<HostArray> f64 = mlp_params();
    f64[0] = HostArray(f64[0].sizes(), DType::F64);
    CHECK_THROWS_WITH_AS(make(DType::BF16, f64),
                         doctest::Contains("keeps f32 master weights, but parameter 'param0' is "
                                           "f64 (16,6); pass f32 parameters"),
                         Error);
    CHECK_THROWS_WITH_AS(make(DType::F32, mlp_params(), LossScaling{}),
                         doctest::Contains("needs precision f16"), Error);
    CHECK_THROWS_WITH_AS(make(DType::F16, mlp_params(), LossScaling{.growth_factor = 0.5}),
                         doctest::Contains("growth_factor 0.500000 must be finite and > 1"), Error);
    CHECK_THROWS_WITH_AS(make(DType::F16, mlp_params(), LossScaling{.backoff_factor = 1.0}),
                         doctest::Contains("backoff_factor"), Error);
    CHECK_THROWS_WITH_AS(make(DType::F16, mlp_params(), LossScaling{.init_scale = 0.0}),
                         doctest::Contains("init_scale"), Error);
    Trainer f16 = make(DType::F16, mlp_params());
    CHECK_THROWS_WITH_AS(f16.gradients(mlp_batch(1), 1.0),
                         doctest::Contains("is applied by step() only; call step()"), Error);
    CHECK_THROWS_WITH_AS(f16.step_accumulated({mlp_batch(1)}, 0.1),
                         doctest::Contains("is applied by step() only"), Error);
    // Without scaling, f16 takes the other paths too.
    Trainer unscaled = make(DType::F16, mlp_params(), LossScaling{.enabled = false});
    CHECK_FALSE(unscaled.loss_scaling());
    CHECK(std::isfinite(unscaled.step_accumulated({mlp_batch(1), mlp_batch(2)}, 0.1)));
}

// The recurrent layers (nn/recurrent.hpp) against naive host loops of PyTorch's equations in
// double: Elman RNN (tanh, relu), LSTM and GRU, one and two layers, bidirectional, batch-first,
// given initial states; the cells; the parameter names and init; gradients of a tiny LSTM and
// GRU against central differences; the openmp backend against the reference; bad inputs.
#include <algorithm>
#include <cmath>
#include <functional>

#include "ad/check.hpp"
#include "nn/recurrent.hpp"
#include "nn_layer_testing.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

using Vec = std::vector<double>;

double sigmoid_d(double v) {
    return 1.0 / (1.0 + std::exp(-v));
}

// One layer in one direction: x (T, B, I) flat, weights as PyTorch's; returns output (T, B, H)
// and sets h, c (B, H) to the final state.
Vec naive_layer(RecurrentMode mode, const Vec& x, std::int64_t T, std::int64_t B, std::int64_t I,
                std::int64_t H, const Vec& wih, const Vec& whh, const Vec& bih, const Vec& bhh,
                Vec& h, Vec& c, bool reverse) {
    const std::int64_t G = gate_count(mode);
    Vec out(static_cast<std::size_t>(T * B * H));
    for (std::int64_t s = 0; s < T; ++s) {
        const std::int64_t t = reverse ? T - 1 - s : s;
        Vec hn(h.size()), cn(c.size());
        for (std::int64_t b = 0; b < B; ++b) {
            Vec gx(static_cast<std::size_t>(G * H)), gh(gx.size());
            for (std::int64_t r = 0; r < G * H; ++r) {
                double a = bih.empty() ? 0.0 : bih[r], e = bhh.empty() ? 0.0 : bhh[r];
                for (std::int64_t k = 0; k < I; ++k)
                    a += wih[r * I + k] * x[(t * B + b) * I + k];
                for (std::int64_t k = 0; k < H; ++k)
                    e += whh[r * H + k] * h[b * H + k];
                gx[r] = a;
                gh[r] = e;
            }
            for (std::int64_t j = 0; j < H; ++j) {
                const std::size_t o = b * H + j;
                switch (mode) {
                case RecurrentMode::RnnTanh:
                    hn[o] = std::tanh(gx[j] + gh[j]);
                    break;
                case RecurrentMode::RnnRelu:
                    hn[o] = std::max(0.0, gx[j] + gh[j]);
                    break;
                case RecurrentMode::Lstm: {
                    auto g = [&](int k) { return gx[k * H + j] + gh[k * H + j]; };
                    double i = sigmoid_d(g(0)), f = sigmoid_d(g(1)), gg = std::tanh(g(2)),
                           og = sigmoid_d(g(3));
                    cn[o] = f * c[o] + i * gg;
                    hn[o] = og * std::tanh(cn[o]);
                    break;
                }
                case RecurrentMode::Gru: {
                    double r = sigmoid_d(gx[j] + gh[j]), z = sigmoid_d(gx[H + j] + gh[H + j]);
                    double n = std::tanh(gx[2 * H + j] + r * gh[2 * H + j]);
                    hn[o] = (1 - z) * n + z * h[o];
                    break;
                }
                }
                out[(t * B + b) * H + j] = hn[o];
            }
        }
        h = hn;
        if (mode == RecurrentMode::Lstm) c = cn;
    }
    return out;
}

struct NaiveResult {
    Vec output, h, c;
};

// The stack, time-major, h0/c0 (L·D, B, H) flat or empty.
NaiveResult naive_stack(const RecurrentConfig& cfg, const std::vector<Vec>& params, Vec x,
                        std::int64_t T, std::int64_t B, const Vec& h0, const Vec& c0) {
    const std::int64_t D = cfg.bidirectional ? 2 : 1, H = cfg.hidden_size;
    const std::size_t per = cfg.bias ? 4 : 2;
    std::int64_t I = cfg.input_size;
    NaiveResult res;
    for (std::int64_t l = 0; l < cfg.num_layers; ++l) {
        std::vector<Vec> outs;
        for (std::int64_t d = 0; d < D; ++d) {
            const std::int64_t k = l * D + d;
            const std::size_t p = k * per;
            Vec h(static_cast<std::size_t>(B * H), 0.0), c = h;
            if (!h0.empty()) std::copy_n(h0.begin() + k * B * H, B * H, h.begin());
            if (!c0.empty()) std::copy_n(c0.begin() + k * B * H, B * H, c.begin());
            outs.push_back(naive_layer(cfg.mode, x, T, B, I, H, params[p], params[p + 1],
                                       cfg.bias ? params[p + 2] : Vec(),
                                       cfg.bias ? params[p + 3] : Vec(), h, c, d == 1));
            res.h.insert(res.h.end(), h.begin(), h.end());
            res.c.insert(res.c.end(), c.begin(), c.end());
        }
        x.assign(static_cast<std::size_t>(T * B * D * H), 0.0);
        for (std::int64_t tb = 0; tb < T * B; ++tb)
            for (std::int64_t d = 0; d < D; ++d)
                for (std::int64_t j = 0; j < H; ++j)
                    x[(tb * D + d) * H + j] = outs[d][tb * H + j];
        I = D * H;
    }
    res.output = x;
    return res;
}

Array to_array(const Vec& v, const std::vector<std::int64_t>& sizes) {
    return array(v, Shape::of(sizes));
}

// (T, B, F) <-> (B, T, F) of flat data.
Vec swap01(const Vec& v, std::int64_t a, std::int64_t b, std::int64_t f) {
    Vec out(v.size());
    for (std::int64_t i = 0; i < a; ++i)
        for (std::int64_t j = 0; j < b; ++j)
            for (std::int64_t k = 0; k < f; ++k)
                out[(j * a + i) * f + k] = v[(i * b + j) * f + k];
    return out;
}

void check_stack(const RecurrentConfig& cfg, std::int64_t T, std::int64_t B, bool with_state,
                 std::uint64_t seed) {
    CAPTURE(static_cast<int>(cfg.mode));
    CAPTURE(cfg.num_layers);
    CAPTURE(cfg.bidirectional);
    CAPTURE(cfg.batch_first);
    CAPTURE(with_state);
    const std::int64_t D = cfg.bidirectional ? 2 : 1, H = cfg.hidden_size;
    std::vector<Vec> pv;
    std::vector<Array> params;
    std::uint64_t s = seed;
    for (const RecurrentParameter& p : recurrent_parameters(cfg)) {
        std::int64_t n = 1;
        for (auto e : p.shape)
            n *= e;
        pv.push_back(random_values(static_cast<std::size_t>(n), ++s, -0.6, 0.6));
        params.push_back(to_array(pv.back(), p.shape));
    }
    const Vec x = random_values(static_cast<std::size_t>(T * B * cfg.input_size), ++s);
    Vec h0, c0;
    if (with_state) {
        h0 = random_values(static_cast<std::size_t>(cfg.num_layers * D * B * H), ++s);
        c0 = random_values(h0.size(), ++s);
    }
    NaiveResult want = naive_stack(cfg, pv, x, T, B, h0, c0);
    const std::int64_t I = cfg.input_size;
    Array xa = cfg.batch_first ? to_array(swap01(x, T, B, I), {B, T, I}) : to_array(x, {T, B, I});
    const std::vector<std::int64_t> state{cfg.num_layers * D, B, H};
    RecurrentResult got = recurrent(cfg, params, xa, with_state ? to_array(h0, state) : Array(),
                                    with_state ? to_array(c0, state) : Array());
    const Vec out = evaluate(got.output);
    check_close(cfg.batch_first ? swap01(out, B, T, D * H) : out, want.output, 1e-9, 1e-12);
    check_close(evaluate(got.h), want.h, 1e-9, 1e-12);
    if (cfg.mode == RecurrentMode::Lstm)
        check_close(evaluate(got.c), want.c, 1e-9, 1e-12);
    else
        CHECK(!got.c.valid());
}

constexpr RecurrentMode kModes[] = {RecurrentMode::RnnTanh, RecurrentMode::RnnRelu,
                                    RecurrentMode::Lstm, RecurrentMode::Gru};

} // namespace

TEST_CASE("nn recurrent: one layer of each mode against a naive loop") {
    for (RecurrentMode mode : kModes) {
        RecurrentConfig cfg{.mode = mode, .input_size = 3, .hidden_size = 4};
        check_stack(cfg, 5, 2, false, 10);
        check_stack(cfg, 5, 2, true, 20);
    }
}

TEST_CASE("nn recurrent: two layers, bidirectional, batch-first, without bias") {
    for (RecurrentMode mode : {RecurrentMode::RnnTanh, RecurrentMode::Lstm, RecurrentMode::Gru}) {
        RecurrentConfig two{.mode = mode, .input_size = 3, .hidden_size = 4, .num_layers = 2};
        check_stack(two, 4, 3, true, 30);
        RecurrentConfig bi{.mode = mode, .input_size = 3, .hidden_size = 4, .bidirectional = true};
        check_stack(bi, 4, 2, false, 40);
        RecurrentConfig both{.mode = mode,
                             .input_size = 2,
                             .hidden_size = 3,
                             .num_layers = 2,
                             .batch_first = true,
                             .bidirectional = true};
        check_stack(both, 3, 2, true, 50);
        RecurrentConfig no_bias{.mode = mode, .input_size = 3, .hidden_size = 2, .bias = false};
        check_stack(no_bias, 3, 2, false, 60);
    }
}

TEST_CASE("nn recurrent: the cells are one step of the layer") {
    for (RecurrentMode mode : kModes) {
        CAPTURE(static_cast<int>(mode));
        const std::int64_t B = 2, I = 3, H = 4, G = gate_count(mode);
        Vec wih = random_values(G * H * I, 1), whh = random_values(G * H * H, 2),
            bih = random_values(G * H, 3), bhh = random_values(G * H, 4),
            x = random_values(B * I, 5), h = random_values(B * H, 6), c = random_values(B * H, 7);
        RecurrentWeights w{to_array(wih, {G * H, I}), to_array(whh, {G * H, H}),
                           to_array(bih, {G * H}), to_array(bhh, {G * H})};
        RecurrentResult got =
            recurrent_cell(mode, to_array(x, {B, I}), to_array(h, {B, H}),
                           mode == RecurrentMode::Lstm ? to_array(c, {B, H}) : Array(), w);
        RecurrentResult named =
            mode == RecurrentMode::Lstm
                ? lstm_cell(to_array(x, {B, I}), to_array(h, {B, H}), to_array(c, {B, H}), w)
            : mode == RecurrentMode::Gru ? gru_cell(to_array(x, {B, I}), to_array(h, {B, H}), w)
                                         : rnn_cell(to_array(x, {B, I}), to_array(h, {B, H}), w,
                                                    mode == RecurrentMode::RnnRelu);
        CHECK(evaluate(named.h) == evaluate(got.h));
        Vec hw = h, cw = c;
        naive_layer(mode, x, 1, B, I, H, wih, whh, bih, bhh, hw, cw, false);
        check_close(evaluate(got.h), hw);
        if (mode == RecurrentMode::Lstm) check_close(evaluate(got.c), cw);
    }
}

TEST_CASE("nn recurrent: PyTorch's parameter names, shapes and default init") {
    RecurrentConfig cfg{.mode = RecurrentMode::Lstm,
                        .input_size = 5,
                        .hidden_size = 4,
                        .num_layers = 2,
                        .bidirectional = true};
    auto spec = recurrent_parameters(cfg);
    REQUIRE(spec.size() == 16);
    CHECK(spec[0].name == "weight_ih_l0");
    CHECK(spec[0].shape == std::vector<std::int64_t>{16, 5});
    CHECK(spec[1].name == "weight_hh_l0");
    CHECK(spec[3].name == "bias_hh_l0");
    CHECK(spec[4].name == "weight_ih_l0_reverse");
    CHECK(spec[8].name == "weight_ih_l1");
    CHECK(spec[8].shape == std::vector<std::int64_t>{16, 8});
    CHECK(spec[15].name == "bias_hh_l1_reverse");
    auto values = recurrent_init(cfg, 7);
    REQUIRE(values.size() == spec.size());
    double lo = 1, hi = -1;
    for (const HostArray& v : values)
        for (double d : v.to_doubles()) {
            lo = std::min(lo, d);
            hi = std::max(hi, d);
        }
    CHECK(lo >= -0.5);
    CHECK(hi < 0.5);
    CHECK(hi - lo > 0.9);
    CHECK(recurrent_init(cfg, 7)[3].to_doubles() == values[3].to_doubles());
    CHECK(recurrent_parameters(
              {.mode = RecurrentMode::Gru, .input_size = 2, .hidden_size = 3, .bias = false})[1]
              .shape == std::vector<std::int64_t>{9, 3});
}

TEST_CASE("nn recurrent: gradients of a tiny LSTM and GRU against central differences") {
    for (RecurrentMode mode : {RecurrentMode::Lstm, RecurrentMode::Gru}) {
        CAPTURE(static_cast<int>(mode));
        RecurrentConfig cfg{.mode = mode, .input_size = 2, .hidden_size = 3};
        std::vector<Array> at{to_array(random_values(4 * 2 * 2, 1), {4, 2, 2})};
        std::uint64_t s = 2;
        for (const RecurrentParameter& p : recurrent_parameters(cfg)) {
            std::int64_t n = 1;
            for (auto e : p.shape)
                n *= e;
            at.push_back(
                to_array(random_values(static_cast<std::size_t>(n), ++s, -0.7, 0.7), p.shape));
        }
        at.push_back(to_array(random_values(2 * 3, 20), {1, 2, 3}));
        at.push_back(to_array(random_values(2 * 3, 21), {1, 2, 3}));
        GradientCheckOptions o;
        o.compute = reference_backend();
        o.rtol = 1e-6;
        // Every output: the sequence, the final h and (LSTM) c.
        auto r = check_gradient(
            [cfg](const std::vector<Array>& in) {
                std::vector<Array> ps(in.begin() + 1, in.begin() + 5);
                RecurrentResult y = recurrent(cfg, ps, in[0], in[5],
                                              cfg.mode == RecurrentMode::Lstm ? in[6] : Array());
                Array total = sum(y.output * y.output) + sum(y.h * 0.5);
                if (y.c.valid()) total = total + sum(sin(y.c));
                return total;
            },
            at, o);
        CHECK_MESSAGE(r.ok, r.to_string());
    }
}

TEST_CASE("nn recurrent: a bidirectional LSTM compiled on openmp matches the reference") {
    RecurrentConfig cfg{.mode = RecurrentMode::Lstm,
                        .input_size = 5,
                        .hidden_size = 6,
                        .num_layers = 2,
                        .batch_first = true,
                        .bidirectional = true};
    std::vector<Array> params;
    for (const HostArray& v : recurrent_init(cfg, 3))
        params.push_back(array(v));
    Array x = placeholder(Shape::of({3, 7, 5}), DType::F32, "x");
    RecurrentResult y = recurrent(cfg, params, x);
    Array loss = sum(y.output) + sum(y.h * y.c);
    std::vector<Array> outputs = grad(loss, params);
    outputs.insert(outputs.begin(), {y.output, y.h, y.c});
    ComputeOptions openmp;
    openmp.backend = "openmp";
    CompiledProgram on_openmp = compile(outputs, {x}, openmp);
    CompiledProgram on_reference = compile(outputs, {x}, reference_backend());
    HostArray in =
        compute(cast(array(random_values(3 * 7 * 5, 9), Shape::of({3, 7, 5})), DType::F32));
    auto got = on_openmp({in}), want = on_reference({in});
    REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
        CAPTURE(k);
        check_close(got[k].to_doubles(), want[k].to_doubles(), 1e-4, 1e-5);
    }
}

TEST_CASE("nn recurrent: bad inputs name the operation, the shapes and the fix") {
    RecurrentConfig cfg{.mode = RecurrentMode::Lstm, .input_size = 3, .hidden_size = 4};
    std::vector<Array> params;
    for (const HostArray& v : recurrent_init(cfg, 1))
        params.push_back(array(v));
    Array x = zeros(Shape::of({5, 2, 3}));
    CHECK_THROWS_WITH_AS(recurrent(cfg, params, zeros(Shape::of({5, 2, 4}))),
                         doctest::Contains("lstm: x has 4 features but input_size is 3"), Error);
    CHECK_THROWS_WITH_AS(recurrent(cfg, {params[0]}, x), doctest::Contains("expected 4 parameters"),
                         Error);
    CHECK_THROWS_WITH_AS(recurrent(cfg, params, x, zeros(Shape::of({1, 3, 4}))),
                         doctest::Contains("h0 must be (layers x directions 1, batch 2, hidden 4)"),
                         Error);
    RecurrentWeights w{params[1], params[1], Array(), Array()};
    CHECK_THROWS_WITH_AS(recurrent_layer(RecurrentMode::Lstm, x, w),
                         doctest::Contains("weight_ih must be a float array of shape (16, 3)"),
                         Error);
    CHECK_THROWS_WITH_AS(recurrent_layer(RecurrentMode::Gru, zeros(Shape::of({2, 3})), w),
                         doctest::Contains("gru: x must be a float array (time, batch, features)"),
                         Error);
}

TEST_CASE("nn recurrent: one program serves every batch up to a symbolic batch's maximum") {
    Model m = lstm_classifier(5, 3, 4, 10, 1);
    std::vector<Array> params;
    for (const HostArray& p : m.params)
        params.push_back(array(p));
    Array x = placeholder(Shape{dynamic("batch", 8), range(5), range(3)}, DType::F32, "x");
    Array logits = m.forward(params, x);
    Array g = grad(sum(logits * logits), std::vector<Array>{params[1]})[0];
    ComputeOptions openmp;
    openmp.backend = "openmp";
    CompiledProgram program = compile({logits, g}, {x}, openmp);
    for (std::int64_t b : {8, 3}) {
        CAPTURE(b);
        Vec xv = random_values(static_cast<std::size_t>(b * 15), 40 + b);
        Array fixed = cast(to_array(xv, {b, 5, 3}), DType::F32);
        Array want = m.forward(params, fixed);
        auto got = program({compute(fixed)});
        check_close(got[0].to_doubles(), evaluate(want), 1e-5, 1e-6);
        check_close(got[1].to_doubles(),
                    evaluate(grad(sum(want * want), std::vector<Array>{params[1]})[0]), 1e-4, 1e-5);
    }
}

// The transformer layers (nn/transformer.hpp) and cross_entropy and dropout (nn/layers.hpp):
// values against naive loops in double on the reference backend, gradients against float64
// central differences for every float input, one compile of all the forwards on the openmp
// backend against the reference, and the errors a user gets for mismatched operands.
#include "nn/transformer.hpp"

#include <cmath>
#include <numbers>
#include <string>

#include "ad/check.hpp"
#include "core/error.hpp"
#include "nn/layers.hpp"
#include "scheduler/partition.hpp"
#include "nn_layer_testing.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

using Values = std::vector<double>;

Array f64(const Values& v, const std::vector<std::int64_t>& sizes) {
    return array(v, Shape::of(sizes));
}

Array input(const std::vector<std::int64_t>& sizes, std::uint64_t seed, double lo = -1.0,
            double hi = 1.0) {
    std::int64_t n = 1;
    for (auto s : sizes)
        n *= s;
    return f64(random_values(static_cast<std::size_t>(n), seed, lo, hi), sizes);
}

void check_gradient_of(const ArrayFunction& f, const std::vector<Array>& at,
                       std::uint64_t seed = 1) {
    GradientCheckOptions o;
    o.compute = reference_backend();
    o.seed = seed;
    o.rtol = 1e-6;
    auto r = check_gradient(f, at, o);
    CHECK_MESSAGE(r.ok, r.to_string());
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "no error";
}

// Layer norm of each row of a (rows, f) matrix; w, b empty for none.
Values naive_layer_norm(const Values& x, const Values& w, const Values& b, int rows, int f,
                        double eps) {
    Values y(x.size());
    for (int r = 0; r < rows; ++r) {
        double m = 0.0, v = 0.0;
        for (int j = 0; j < f; ++j)
            m += x[r * f + j] / f;
        for (int j = 0; j < f; ++j)
            v += (x[r * f + j] - m) * (x[r * f + j] - m) / f;
        for (int j = 0; j < f; ++j)
            y[r * f + j] = (x[r * f + j] - m) / std::sqrt(v + eps) * (w.empty() ? 1.0 : w[j]) +
                           (b.empty() ? 0.0 : b[j]);
    }
    return y;
}

double naive_gelu(double v) {
    return 0.5 * v *
           (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (v + 0.044715 * v * v * v)));
}

// nanoGPT's attention on x (b, t, c) with `heads` heads; empty biases for none.
Values naive_attention(const Values& x, const Values& wqkv, const Values& bqkv, const Values& wp,
                       const Values& bp, int b, int t, int c, int heads) {
    const int d = c / heads;
    Values qkv = naive_linear(x, wqkv, bqkv, b * t, c, 3 * c);
    Values y(static_cast<std::size_t>(b * t * c), 0.0);
    auto at = [&](int n, int i, int channel) { return qkv[(n * t + i) * 3 * c + channel]; };
    for (int n = 0; n < b; ++n)
        for (int h = 0; h < heads; ++h)
            for (int i = 0; i < t; ++i) {
                Values p(static_cast<std::size_t>(i + 1));
                double m = -INFINITY, s = 0.0;
                for (int j = 0; j <= i; ++j) {
                    double dot = 0.0;
                    for (int e = 0; e < d; ++e)
                        dot += at(n, i, h * d + e) * at(n, j, c + h * d + e);
                    p[j] = dot / std::sqrt(static_cast<double>(d));
                    m = std::max(m, p[j]);
                }
                for (int j = 0; j <= i; ++j)
                    s += (p[j] = std::exp(p[j] - m));
                for (int e = 0; e < d; ++e)
                    for (int j = 0; j <= i; ++j)
                        y[(n * t + i) * c + h * d + e] += p[j] / s * at(n, j, 2 * c + h * d + e);
            }
    return naive_linear(y, wp, bp, b * t, c, c);
}

// Mean of −log_softmax(z)[label] over the rows of z (rows, k); labels outside [0, k) add 0.
double naive_cross_entropy(const Values& z, const std::vector<std::int64_t>& labels, int rows,
                           int k) {
    Values ls = naive_log_softmax(z, rows, k);
    double total = 0.0;
    for (int r = 0; r < rows; ++r)
        if (labels[r] >= 0 && labels[r] < k) total -= ls[r * k + labels[r]];
    return total / rows;
}

} // namespace

TEST_CASE("nn layer_norm: rows of a rank-3 input, with and without weight and bias") {
    auto xv = random_values(2 * 3 * 5, 1, -2, 3), wv = random_values(5, 2),
         bv = random_values(5, 3);
    Array x = f64(xv, {2, 3, 5}), w = f64(wv, {5}), b = f64(bv, {5});
    Array y = layer_norm(x, w, b);
    CHECK(y.shape() == Shape::of({2, 3, 5}));
    check_close(evaluate(y), naive_layer_norm(xv, wv, bv, 6, 5, 1e-5));
    check_close(evaluate(layer_norm(x, w, Array(), 0.1)), naive_layer_norm(xv, wv, {}, 6, 5, 0.1));
    check_close(evaluate(layer_norm(x, Array(), Array())),
                naive_layer_norm(xv, {}, {}, 6, 5, 1e-5));
    Array shifted = reshape(x, Transform::shift({1, 2, -3}));
    check_close(evaluate(layer_norm(shifted, w, b)), naive_layer_norm(xv, wv, bv, 6, 5, 1e-5));
}

TEST_CASE("nn layer_norm: gradients with respect to x, weight and bias") {
    check_gradient_of([](const auto& in) { return layer_norm(in[0], in[1], in[2]); },
                      {input({2, 3, 4}, 4, -2, 2), input({4}, 5), input({4}, 6)});
}

TEST_CASE("nn gelu: the tanh form, and its gradient") {
    auto xv = random_values(3 * 7, 7, -5, 5);
    Values expect;
    for (double v : xv)
        expect.push_back(naive_gelu(v));
    check_close(evaluate(gelu(f64(xv, {3, 7}))), expect);
    check_close(evaluate(gelu(f64({0.0, -30.0, 30.0}, {3}))), {0.0, 0.0, 30.0});
    check_gradient_of([](const auto& in) { return gelu(in[0]); }, {input({3, 7}, 8, -4, 4)});
}

TEST_CASE("nn embedding: rows by index of any rank; out-of-range indices give zero rows") {
    const int v = 5, d = 3;
    auto tv = random_values(v * d, 9);
    Array table = f64(tv, {v, d});
    std::vector<std::int32_t> idx{4, 0, 2, 2, -1, 5};
    Array y = embedding(array(idx, Shape::of({2, 3})), table);
    CHECK(y.shape() == Shape::of({2, 3, d}));
    Values expect;
    for (std::int32_t i : idx)
        for (int e = 0; e < d; ++e)
            expect.push_back(i >= 0 && i < v ? tv[i * d + e] : 0.0);
    check_close(evaluate(y), expect);
    Array one = embedding(array(std::vector<std::int64_t>{3}, Shape{}), table);
    CHECK(one.shape() == Shape::of({d}));
    check_close(evaluate(one), Values(tv.begin() + 3 * d, tv.begin() + 4 * d));
}

TEST_CASE("nn embedding: the table's gradient sums the cotangent rows per index") {
    Array idx = array(std::vector<std::int64_t>{1, 3, 1, 7, 0, 3, 3}, Shape::of({7}));
    check_gradient_of([](const auto& in) { return embedding(in[0], in[1]); },
                      {idx, input({4, 3}, 10)});
    // d/dtable of sum(embedding): the number of times each row is picked (7 is out of range).
    Array table = input({4, 3}, 11);
    check_close(evaluate(grad(sum(embedding(idx, table)), table)),
                {1, 1, 1, 2, 2, 2, 0, 0, 0, 3, 3, 3});
}

TEST_CASE("nn embedding: no work proportional to tokens x vocabulary x width") {
    // GPT-2's vocabulary: the forward and backward program's largest statement domain is the
    // gradient's vocab x dim (its zeros), never tokens x vocab x dim (the one-hot form's).
    const std::int64_t vocab = 50257, dim = 8, tokens = 64;
    Array table = placeholder(Shape::of({vocab, dim}), DType::F32, "table");
    Array ids = placeholder(Shape::of({tokens}), DType::I64, "ids");
    Array y = embedding(ids, table);
    Array g = grad(sum(y * y), table);
    poly::ProgramIR ir = sched::partition({y.node(), g.node()}, {table.node(), ids.node()});
    std::int64_t largest = 0;
    for (const poly::Kernel& k : ir.kernels)
        for (const poly::Statement& st : k.statements) {
            std::int64_t points = 1;
            for (std::int64_t e : st.extents)
                points *= e;
            largest = std::max(largest, points);
        }
    CHECK(largest == vocab * dim);
}

TEST_CASE("nn causal_self_attention: against a per-head loop, with and without biases") {
    const int b = 2, t = 4, c = 6, heads = 2;
    auto xv = random_values(b * t * c, 12, -2, 2), wq = random_values(3 * c * c, 13);
    auto bq = random_values(3 * c, 14), wp = random_values(c * c, 15), bp = random_values(c, 16);
    Array x = f64(xv, {b, t, c});
    Array y = causal_self_attention(x, f64(wq, {3 * c, c}), f64(bq, {3 * c}), f64(wp, {c, c}),
                                    f64(bp, {c}), heads);
    CHECK(y.shape() == Shape::of({b, t, c}));
    check_close(evaluate(y), naive_attention(xv, wq, bq, wp, bp, b, t, c, heads));
    Array y3 = causal_self_attention(x, f64(wq, {3 * c, c}), Array(), f64(wp, {c, c}), Array(), 3);
    check_close(evaluate(y3), naive_attention(xv, wq, {}, wp, {}, b, t, c, 3));
    Array y1 = causal_self_attention(x, f64(wq, {3 * c, c}), Array(), f64(wp, {c, c}), Array(), 1);
    check_close(evaluate(y1), naive_attention(xv, wq, {}, wp, {}, b, t, c, 1));
}

TEST_CASE("nn causal_self_attention: gradients with respect to x and every weight") {
    check_gradient_of(
        [](const auto& in) { return causal_self_attention(in[0], in[1], in[2], in[3], in[4], 2); },
        {input({2, 3, 4}, 17, -2, 2), input({12, 4}, 18), input({12}, 19), input({4, 4}, 20),
         input({4}, 21)});
}

TEST_CASE("nn cross_entropy: any leading axes, as F.cross_entropy on the flattened logits") {
    auto zv = random_values(2 * 3 * 5, 22, -3, 3);
    std::vector<std::int64_t> labels{4, 0, 2, 1, 1, 3};
    Array z = f64(zv, {2, 3, 5});
    Array loss = cross_entropy(z, array(labels, Shape::of({2, 3})));
    CHECK(loss.shape() == Shape{});
    check_close(evaluate(loss), {naive_cross_entropy(zv, labels, 6, 5)});
    // Rank 2: softmax_cross_entropy's value; rank 1 (one position, rank-0 label).
    Array flat = f64(zv, {6, 5});
    Array labels32 = array(std::vector<std::int32_t>{4, 0, 2, 1, 1, 3}, Shape::of({6}));
    check_close(evaluate(cross_entropy(flat, labels32)),
                evaluate(softmax_cross_entropy(flat, labels32)));
    check_close(evaluate(cross_entropy(f64(Values(zv.begin(), zv.begin() + 5), {5}),
                                       array(std::vector<std::int64_t>{4}, Shape{}))),
                {naive_cross_entropy(zv, {4}, 1, 5)});
    // A label outside [0, 5) adds 0 but counts in the mean.
    labels[2] = 7;
    check_close(evaluate(cross_entropy(z, array(labels, Shape::of({2, 3})))),
                {naive_cross_entropy(zv, labels, 6, 5)});
}

TEST_CASE("nn cross_entropy: gradient with respect to the logits") {
    Array labels = array(std::vector<std::int32_t>{2, 0, 4, 1}, Shape::of({2, 2}));
    check_gradient_of([](const auto& in) { return cross_entropy(in[0], in[1]); },
                      {input({2, 2, 5}, 23, -3, 3), labels});
}

namespace {

// One pre-LayerNorm block of nanoGPT (docs/nn.md's example): p holds ln_1 weight and bias,
// c_attn weight and bias, attn c_proj weight and bias, ln_2, c_fc, mlp c_proj.
Array gpt_block(const Array& x, const std::vector<Array>& p, std::int64_t heads) {
    Array h = x + causal_self_attention(layer_norm(x, p[0], p[1]), p[2], p[3], p[4], p[5], heads);
    return h + linear(gelu(linear(layer_norm(h, p[6], p[7]), p[8], p[9])), p[10], p[11]);
}

// A tiny GPT's loss: in = {tokens, targets, wte (V, C), wpe (T, C), ln_f weight, ln_f bias,
// then one block's 12 parameters}; the output head is tied to wte.
Array tiny_gpt_loss(const std::vector<Array>& in) {
    const Shape& tokens = in[0].shape();
    Array positions = index_components(Shape{tokens[1]}, 0);
    Array x = embedding(in[0], in[2]) + embedding(positions, in[3]);
    x = gpt_block(x, std::vector<Array>(in.begin() + 6, in.end()), 2);
    return cross_entropy(linear(layer_norm(x, in[4], in[5]), in[2]), in[1]);
}

} // namespace

TEST_CASE("nn transformer layers: a tiny GPT's loss and its gradient for every parameter") {
    const std::int64_t b = 2, t = 3, c = 4, v = 5;
    Array tokens = array(std::vector<std::int64_t>{0, 4, 2, 2, 1, 3}, Shape::of({b, t}));
    Array targets = array(std::vector<std::int64_t>{4, 2, 1, 1, 3, 0}, Shape::of({b, t}));
    std::vector<Array> in{
        tokens,        targets, input({v, c}, 40), input({t, c}, 41), input({c}, 42, 0.5, 1.5),
        input({c}, 43)};
    const std::vector<std::vector<std::int64_t>> block{
        {c}, {c}, {3 * c, c}, {3 * c}, {c, c}, {c}, {c}, {c}, {4 * c, c}, {4 * c}, {c, 4 * c}, {c}};
    for (std::size_t i = 0; i < block.size(); ++i)
        in.push_back(input(block[i], 44 + i, i == 0 || i == 6 ? 0.5 : -1.0, 1.5));
    const double loss = evaluate(tiny_gpt_loss(in))[0];
    CHECK(std::isfinite(loss));
    CHECK(loss > 0.0);
    check_gradient_of(tiny_gpt_loss, in);
}

TEST_CASE("nn transformer layers: the forwards compiled on openmp match the reference") {
    const int b = 2, t = 5, c = 8, v = 7;
    auto f32 = [](const std::vector<std::int64_t>& sizes, std::uint64_t seed) {
        return cast(input(sizes, seed), DType::F32);
    };
    Array x = f32({b, t, c}, 24),
          tokens =
              array(std::vector<std::int32_t>{0, 6, 3, 3, 1, 2, 5, 4, 0, 6}, Shape::of({b, t}));
    Array seed = placeholder(Shape{}, DType::I64, "seed");
    Array table = f32({v, c}, 25), logits = f32({b, t, v}, 26);
    std::vector<Array> outputs{
        layer_norm(x, f32({c}, 27), f32({c}, 28)),
        gelu(x),
        embedding(tokens, table),
        causal_self_attention(x, f32({3 * c, c}, 29), f32({3 * c}, 30), f32({c, c}, 31),
                              f32({c}, 32), 2),
        cross_entropy(logits, tokens),
        dropout(x, 0.25, seed),
    };
    ComputeOptions openmp;
    openmp.backend = "openmp";
    CompiledProgram on_openmp = compile(outputs, {seed}, openmp);
    CompiledProgram on_reference = compile(outputs, {seed}, reference_backend());
    for (std::int64_t s : {3, 4}) {
        std::vector<HostArray> in{HostArray::from(std::vector<std::int64_t>{s}, {})};
        auto got = on_openmp(in), expect = on_reference(in);
        REQUIRE(got.size() == outputs.size());
        for (std::size_t i = 0; i < outputs.size(); ++i) {
            INFO("output " << i << " seed " << s);
            check_close(got[i].to_doubles(), expect[i].to_doubles(), 1e-5, 1e-6);
        }
    }
}

TEST_CASE("nn transformer layers: mismatched operands throw hedra::Error naming the operation") {
    Array x = zeros(Shape::of({2, 3, 4})), w4 = zeros(Shape::of({4}));
    std::string m = message_of([&] { layer_norm(x, zeros(Shape::of({3})), w4); });
    CHECK(m.find("layer_norm: weight must be a float array of shape (4) or an empty Array") == 0);
    CHECK(m.find("test_transformer.cpp") != std::string::npos);
    m = message_of([&] { layer_norm(x, w4, zeros(Shape::of({4, 1}))); });
    CHECK(m.find("layer_norm: bias must be a float array of shape (4)") == 0);
    m = message_of([&] { layer_norm(zeros(Shape::of({4}), DType::I32), w4, w4); });
    CHECK(m.find("layer_norm: x must be a float array") == 0);
    m = message_of([&] { gelu(zeros(Shape::of({4}), DType::I64)); });
    CHECK(m.find("gelu: x must be a float array") == 0);
    m = message_of([&] { embedding(zeros(Shape::of({3})), zeros(Shape::of({5, 2}))); });
    CHECK(m.find("embedding: indices must be an integer array") == 0);
    m = message_of([&] { embedding(zeros(Shape::of({3}), DType::I32), zeros(Shape::of({5}))); });
    CHECK(m.find("embedding: table must be a float array (vocabulary, dim)") == 0);
    Array w12 = zeros(Shape::of({12, 4})), w44 = zeros(Shape::of({4, 4}));
    m = message_of([&] { causal_self_attention(x, w12, Array(), w44, Array(), 3); });
    CHECK(m.find("causal_self_attention: heads must divide the 4 channels") == 0);
    m = message_of([&] {
        causal_self_attention(zeros(Shape::of({3, 4})), w12, Array(), w44, Array(), 2);
    });
    CHECK(m.find("causal_self_attention: x must be a float array (batch, time, channels)") == 0);
    m = message_of([&] { causal_self_attention(x, w44, Array(), w44, Array(), 2); });
    CHECK(m.find("causal_self_attention: w_qkv must be a float array of shape (12, 4)") == 0);
    m = message_of([&] { causal_self_attention(x, w12, w4, w44, Array(), 2); });
    CHECK(m.find("causal_self_attention: b_qkv must be a float array of shape (12)") == 0);
    m = message_of([&] { causal_self_attention(x, w12, Array(), w12, Array(), 2); });
    CHECK(m.find("causal_self_attention: w_proj must be a float array of shape (4, 4)") == 0);
    m = message_of([&] { cross_entropy(x, zeros(Shape::of({2, 4}), DType::I64)); });
    CHECK(m.find("cross_entropy: labels must be integers of shape (2, 3) for logits") == 0);
    m = message_of([&] { cross_entropy(x, zeros(Shape::of({2, 3}))); });
    CHECK(m.find("cross_entropy: labels must be integers of shape (2, 3)") == 0);
    m = message_of([&] { cross_entropy(zeros(Shape::of({2, 3}), DType::I32), w4); });
    CHECK(m.find("cross_entropy: logits must be a float array (..., classes)") == 0);
}

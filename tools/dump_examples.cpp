// The built-in example programs (see dump_examples.hpp). Each is written as a user would write
// it, with the library's own functions (matmul, nn::conv2d, nn::softmax, grad).
#include "tools/dump_examples.hpp"

#include "hedra.hpp"
#include "nn/layers.hpp"

namespace hedra::tools {
namespace {

ExampleGraph matmul_example() {
    Array a = placeholder(Shape::of({64, 48}), DType::F32, "A");
    Array b = placeholder(Shape::of({48, 32}), DType::F32, "B");
    return {{matmul(a, b)}, {a, b}};
}

ExampleGraph conv2d_example() {
    Array x = placeholder(Shape::of({2, 3, 12, 12}), DType::F32, "x");
    Array w = placeholder(Shape::of({4, 3, 3, 3}), DType::F32, "w");
    Array b = placeholder(Shape::of({4}), DType::F32, "b");
    return {{relu(nn::conv2d(x, w, b, 1, 1))}, {x, w, b}};
}

ExampleGraph jacobi_example() {
    const std::int64_t n = 32;
    Array u = placeholder(Shape::of({n, n}), DType::F32, "u");
    auto neighbour = [&](std::int64_t di, std::int64_t dj) {
        Shape source{range(1 + di, n - 1 + di), range(1 + dj, n - 1 + dj)};
        return reshape(reshape(u, source), Transform::shift({-di, -dj}));
    };
    Array interior =
        (neighbour(-1, 0) + neighbour(1, 0) + neighbour(0, -1) + neighbour(0, 1)) * 0.25;
    return {{overwrite({u, interior})}, {u}};
}

ExampleGraph softmax_example() {
    Array x = placeholder(Shape::of({16, 10}), DType::F32, "x");
    return {{nn::softmax(x, -1)}, {x}};
}

// A bf16 matmul as autocast runs one: the products and their sum in f32, rounded to bf16 once
// (on the cuda target, mma.sync on tensor cores).
ExampleGraph matmul_bf16_example() {
    Array a = placeholder(Shape::of({64, 48}), DType::BF16, "A");
    Array b = placeholder(Shape::of({48, 32}), DType::BF16, "B");
    return {{matmul(a, b)}, {a, b}};
}

// One SGD step of a two-layer MLP: loss, and every parameter moved against its gradient.
ExampleGraph mlp_step_example() {
    Array x = placeholder(Shape::of({8, 20}), DType::F32, "x");
    Array labels = placeholder(Shape::of({8}), DType::I64, "labels");
    Array w1 = placeholder(Shape::of({16, 20}), DType::F32, "w1");
    Array b1 = placeholder(Shape::of({16}), DType::F32, "b1");
    Array w2 = placeholder(Shape::of({10, 16}), DType::F32, "w2");
    Array b2 = placeholder(Shape::of({10}), DType::F32, "b2");
    Array logits = nn::linear(relu(nn::linear(x, w1, b1)), w2, b2);
    Array loss = nn::softmax_cross_entropy(logits, labels);
    std::vector<Array> params{w1, b1, w2, b2};
    std::vector<Array> grads = grad(loss, params);
    std::vector<Array> outputs{loss};
    for (std::size_t i = 0; i < params.size(); ++i)
        outputs.push_back(params[i] - grads[i] * 0.1);
    return {outputs, {x, labels, w1, b1, w2, b2}};
}

// One SGD step of an Elman RNN, h = tanh(x W_ih^T + h W_hh^T + b), read over 6 steps: a scan
// (one sequential loop) forward and its adjoint (one loop back).
ExampleGraph rnn_step_example() {
    Array xs = placeholder(Shape::of({6, 4, 5}), DType::F32, "xs");
    Array w_ih = placeholder(Shape::of({8, 5}), DType::F32, "w_ih");
    Array w_hh = placeholder(Shape::of({8, 8}), DType::F32, "w_hh");
    Array b = placeholder(Shape::of({8}), DType::F32, "b");
    Array projected = nn::linear(xs, w_ih, b);
    auto [h, ys] = scan(
        [&](const Array& c, const Array& x) {
            Array next = tanh(x + nn::linear(c, w_hh));
            return std::pair{next, next};
        },
        zeros(Shape::of({4, 8})), projected);
    Array loss = sum(h * h) + sum(ys) * 0.1;
    std::vector<Array> params{w_ih, w_hh, b};
    std::vector<Array> grads = grad(loss, params);
    std::vector<Array> outputs{loss};
    for (std::size_t i = 0; i < params.size(); ++i)
        outputs.push_back(params[i] - grads[i] * 0.1);
    return {outputs, {xs, w_ih, w_hh, b}};
}

} // namespace

const std::vector<Example>& examples() {
    static const std::vector<Example> all{
        {"matmul", "C = A B, A (64,48), B (48,32), f32", matmul_example},
        {"conv2d", "relu(conv2d(x, w) + b), x (2,3,12,12), w (4,3,3,3), padding 1", conv2d_example},
        {"jacobi", "one 2-D Jacobi sweep on a 32x32 grid (overwrite of the interior)",
         jacobi_example},
        {"softmax", "softmax over the last axis of x (16,10)", softmax_example},
        {"mlp_step", "one SGD step of a 20-16-10 MLP with cross-entropy, batch 8",
         mlp_step_example},
        {"matmul_bf16", "C = A B, A (64,48), B (48,32), bf16 (products and sum in f32)",
         matmul_bf16_example},
        {"rnn_step", "one SGD step of an Elman RNN (width 8) over 6 steps of a batch of 4: a scan",
         rnn_step_example},
    };
    return all;
}

const Example* find_example(const std::string& name) {
    for (const Example& e : examples())
        if (name == e.name) return &e;
    return nullptr;
}

std::string example_names() {
    std::string s;
    for (const Example& e : examples())
        s += (s.empty() ? "" : ", ") + std::string(e.name);
    return s;
}

} // namespace hedra::tools

// Gradients of the nn layers against float64 central differences (ad/check.hpp) on the
// reference backend, for every input of every layer, and of a whole small CNN loss.
#include "ad/check.hpp"
#include "nn/layers.hpp"
#include "nn_layer_testing.hpp"

using namespace hedra;
using namespace hedra::nn;
using namespace hedra::nn::test;

namespace {

Array input(const std::vector<std::int64_t>& sizes, std::uint64_t seed, double lo = -1.0,
            double hi = 1.0) {
    std::int64_t n = 1;
    for (auto s : sizes)
        n *= s;
    return array(random_values(static_cast<std::size_t>(n), seed, lo, hi), Shape::of(sizes));
}

void check(const ArrayFunction& f, const std::vector<Array>& at, std::uint64_t seed = 1) {
    GradientCheckOptions o;
    o.compute = reference_backend();
    o.seed = seed;
    o.rtol = 1e-6;
    auto r = check_gradient(f, at, o);
    CHECK_MESSAGE(r.ok, r.to_string());
}

} // namespace

TEST_CASE("nn gradients: linear over one and several feature axes, and with batch axes") {
    check([](const auto& in) { return linear(in[0], in[1], in[2]); },
          {input({3, 4}, 1), input({5, 4}, 2), input({5}, 3)});
    check([](const auto& in) { return linear(in[0], in[1], in[2]); },
          {input({2, 3, 2, 2}, 4), input({4, 3, 2, 2}, 5), input({4}, 6)});
    check([](const auto& in) { return linear(in[0], in[1], in[2]); },
          {input({2, 3, 4}, 26), input({5, 4}, 27), input({5}, 28)});
}

TEST_CASE("nn gradients: conv2d with stride and padding") {
    check([](const auto& in) { return conv2d(in[0], in[1], in[2], 1, 2); },
          {input({2, 2, 6, 6}, 7), input({3, 2, 5, 5}, 8), input({3}, 9)});
    check([](const auto& in) { return conv2d(in[0], in[1], in[2], 2, 1); },
          {input({1, 2, 7, 6}, 10), input({2, 2, 3, 3}, 11), input({2}, 12)}, 2);
}

TEST_CASE("nn gradients: maxpool2d (distinct values, so no ties)") {
    check([](const auto& in) { return maxpool2d(in[0], 2); }, {input({2, 2, 4, 6}, 13)});
    check([](const auto& in) { return maxpool2d(in[0], 3, 2); }, {input({1, 2, 7, 7}, 14)});
}

TEST_CASE("nn gradients: activations, softmax and log_softmax") {
    check([](const auto& in) { return relu(in[0]); }, {input({3, 5}, 15)});
    check([](const auto& in) { return tanh(in[0]); }, {input({3, 5}, 16)});
    check([](const auto& in) { return sigmoid(in[0]); }, {input({3, 5}, 17)});
    check([](const auto& in) { return softmax(in[0]); }, {input({3, 5}, 18, -3, 3)});
    check([](const auto& in) { return log_softmax(in[0], 0); }, {input({3, 5}, 19, -3, 3)});
}

TEST_CASE("nn gradients: softmax cross-entropy with integer labels") {
    Array labels = array(std::vector<std::int32_t>{2, 0, 4}, Shape::of({3}));
    check([](const auto& in) { return softmax_cross_entropy(in[0], in[1]); },
          {input({3, 5}, 20, -3, 3), labels});
}

TEST_CASE("nn gradients: a small cnn loss with respect to every parameter") {
    Array labels = array(std::vector<std::int32_t>{1, 0}, Shape::of({2}));
    auto loss = [](const std::vector<Array>& in) {
        Array h = maxpool2d(tanh(conv2d(in[0], in[1], in[2], 1, 1)), 2);
        return softmax_cross_entropy(linear(h, in[3], in[4]), in[5]);
    };
    check(loss, {input({2, 1, 6, 6}, 21), input({3, 1, 3, 3}, 22), input({3}, 23),
                 input({2, 3, 3, 3}, 24), input({2}, 25), labels});
}

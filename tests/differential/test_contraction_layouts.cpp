// Differential: the contractions of training steps, scheduled by contraction_schedule.hpp and
// printed as register tiles whose vector loop is not the result's stride-1 axis (the result
// gathered and scattered, strided operands packed into panels over several reduction loops):
// matmul in every transposition, convolutions and both their gradients (nn::conv2d, padded
// and strided), pooling gradients moved piece by piece, at sizes with partial blocks.
#include <array>

#include "ad/grad.hpp"
#include "differential/differential.hpp"
#include "nn/layers.hpp"

using namespace hedra;
using test::check_differential;
using test::Compare;

namespace {

Array transpose2(const Array& a) {
    return transpose(a, {1, 0});
}

} // namespace

TEST_CASE("differential: matmul in every transposition, with partial register blocks") {
    for (auto [m, k, n] : {std::array<std::int64_t, 3>{37, 53, 29}, {64, 300, 10}, {9, 17, 70}}) {
        CAPTURE(m);
        CAPTURE(k);
        CAPTURE(n);
        Array a = test::random_array(Shape::of({m, k}), 31);
        Array b = test::random_array(Shape::of({k, n}), 32);
        Array at = test::random_array(Shape::of({k, m}), 33);
        Array bt = test::random_array(Shape::of({n, k}), 34);
        check_differential({matmul(a, b), matmul(a, transpose2(bt)), matmul(transpose2(at), b),
                            matmul(transpose2(at), transpose2(bt))},
                           Compare::Tolerance, {1e-4, 1e-4});
    }
}

TEST_CASE("differential: f64 contractions (4-lane vectors) through gathered results") {
    auto f64 = [](const Shape& shape, unsigned seed) {
        std::vector<float> v = test::random_values(static_cast<std::size_t>(shape.size()), seed);
        return array(std::vector<double>(v.begin(), v.end()), shape);
    };
    Array a = f64(Shape::of({45, 70}), 35);
    Array bt = f64(Shape::of({33, 70}), 36);
    Array x = f64(Shape::of({2, 3, 10, 10}), 37);
    Array w = f64(Shape::of({9, 3, 3, 3}), 38);
    check_differential({matmul(a, transpose2(bt)), nn::conv2d(x, w, Array(), 1, 1)},
                       Compare::Tolerance, {1e-10, 1e-10});
}

TEST_CASE("differential: convolutions and their gradients (padding, stride, channels)") {
    struct Case {
        std::int64_t n, c, h, co, k, stride, pad;
    };
    for (Case cs :
         {Case{3, 5, 11, 7, 3, 1, 1}, Case{2, 3, 12, 18, 5, 1, 2}, Case{2, 4, 9, 6, 3, 2, 0}}) {
        CAPTURE(cs.co);
        Array x = test::random_array(Shape::of({cs.n, cs.c, cs.h, cs.h}), 41);
        Array w = test::random_array(Shape::of({cs.co, cs.c, cs.k, cs.k}), 42);
        Array bias = test::random_array(Shape::of({cs.co}), 43);
        Array y = nn::conv2d(x, w, bias, cs.stride, cs.pad);
        Array g = test::random_array(y.shape(), 44);
        std::vector<Array> grads = grad(sum(y * g), {x, w, bias});
        check_differential({y, grads[0], grads[1], grads[2]}, Compare::Tolerance, {1e-4, 1e-4});
    }
}

TEST_CASE("differential: max pooling and its gradient, windows covering the image or not") {
    for (std::int64_t h : {12, 13}) {
        for (std::int64_t stride : {2, 3}) {
            CAPTURE(h);
            CAPTURE(stride);
            Array x = test::random_array(Shape::of({2, 3, h, h}), 51);
            Array y = nn::maxpool2d(relu(x), 2, stride);
            Array g = test::random_array(y.shape(), 52);
            Array dx = grad(sum(y * g), x);
            check_differential({y, dx}, Compare::Tolerance);
        }
    }
}

TEST_CASE("differential: a small training step of a convolutional network") {
    Array x = test::random_array(Shape::of({4, 1, 12, 12}), 61);
    Array w0 = test::random_array(Shape::of({6, 1, 3, 3}), 62);
    Array w1 = test::random_array(Shape::of({8, 6, 3, 3}), 63);
    Array fc = test::random_array(Shape::of({10, 8, 3, 3}), 64);
    Array labels = array(std::vector<std::int32_t>{1, 7, 3, 0}, Shape::of({4}));
    Array h = nn::maxpool2d(relu(nn::conv2d(x, w0, Array(), 1, 1)), 2);
    h = nn::maxpool2d(relu(nn::conv2d(h, w1, Array(), 1, 1)), 2);
    Array loss = nn::softmax_cross_entropy(nn::linear(h, fc, Array()), labels);
    std::vector<Array> grads = grad(loss, {w0, w1, fc});
    check_differential({loss, grads[0], grads[1], grads[2]}, Compare::Tolerance, {1e-4, 1e-5});
}

// Differential: contractions through broadcast views: matmul (square, non-square, batched,
// with a fused bias + relu epilogue) and conv2d written as a window view, a map and a reduce.
#include <array>

#include "differential/differential.hpp"

using namespace hedra;
using test::check_differential;
using test::Compare;

TEST_CASE("differential: matmul, non-square and odd sizes") {
    for (auto [m, k, n] : {std::array<std::int64_t, 3>{1, 1, 1},
                           {7, 33, 5},
                           {33, 7, 1000},
                           {64, 64, 64},
                           {1, 100, 3}}) {
        CAPTURE(m);
        CAPTURE(n);
        Array a = test::random_array(Shape::of({m, k}), 21);
        Array b = test::random_array(Shape::of({k, n}), 22);
        Array bias = test::random_array(Shape::of({n}), 23);
        check_differential({matmul(a, b), relu(matmul(a, b) + bias)}, Compare::Tolerance);
    }
}

TEST_CASE("differential: batched matmul and a contraction over two axes") {
    Array a = test::random_array(Shape::of({3, 5, 7}), 24);
    Array b = test::random_array(Shape::of({3, 7, 9}), 25);
    check_differential({matmul(a, b)}, Compare::Tolerance);
    // c[i] = sum_{j,k} x[i,j,k] * y[j,k]
    Array x = test::random_array(Shape::of({6, 4, 11}), 26);
    Array y = test::random_array(Shape::of({4, 11}), 27);
    check_differential({sum(x * y, {1, 2})}, Compare::Tolerance);
}

namespace {

Array conv2d(const Array& x, const Array& w, std::int64_t stride) {
    std::int64_t n = x.shape()[0].size, c = x.shape()[1].size, h = x.shape()[2].size,
                 wd = x.shape()[3].size;
    std::int64_t f = w.shape()[0].size, kh = w.shape()[2].size, kw = w.shape()[3].size;
    std::int64_t oh = (h - kh) / stride + 1, ow = (wd - kw) / stride + 1;
    Shape space = Shape::of({n, f, oh, ow, c, kh, kw});
    AffineMap window(7, 4, {1, 0, 0,      0,      0, 0, 0, //
                            0, 0, 0,      0,      1, 0, 0, //
                            0, 0, stride, 0,      0, 1, 0, //
                            0, 0, 0,      stride, 0, 0, 1},
                     {0, 0, 0, 0});
    AffineMap weights(7, 4, {0, 1, 0, 0, 0, 0, 0, //
                             0, 0, 0, 0, 1, 0, 0, //
                             0, 0, 0, 0, 0, 1, 0, //
                             0, 0, 0, 0, 0, 0, 1},
                      {0, 0, 0, 0});
    return sum(view(x, space, window) * view(w, space, weights), {4, 5, 6});
}

} // namespace

TEST_CASE("differential: conv2d as view + map + reduce, stride 1 and 2") {
    Array x = test::random_array(Shape::of({2, 3, 9, 8}), 28);
    Array w = test::random_array(Shape::of({4, 3, 3, 2}), 29);
    check_differential({conv2d(x, w, 1), conv2d(x, w, 2)}, Compare::Tolerance);
}

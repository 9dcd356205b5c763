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

TEST_CASE("differential: register-tiled contractions with partial blocks") {
    // Several tiles per axis with partial row and column blocks; f32 and f64.
    Array a = test::random_array(Shape::of({130, 70}), 40);
    Array b = test::random_array(Shape::of({70, 203}), 41);
    check_differential({matmul(a, b)}, Compare::Tolerance);
    check_differential({matmul(cast(a, DType::F64), cast(b, DType::F64))}, Compare::Tolerance,
                       {1e-12, 1e-12});
    // Per-row vector reads, per-row scalars and a packed panel in one update:
    // out[i,j] = sum_k x[i,k] * y[i,j] * z[k,j] - 0.5 * z[k,j]
    Array x = test::random_array(Shape::of({67, 90}), 42);
    Array y = test::random_array(Shape::of({67, 300}), 43);
    Array z = test::random_array(Shape::of({90, 300}), 44);
    Shape space = Shape::of({67, 300, 90});
    Array xv = view(x, space, AffineMap::projection(3, {0, 2}));
    Array yv = view(y, space, AffineMap::projection(3, {0, 1}));
    Array zv = view(z, space, AffineMap::projection(3, {2, 1}));
    check_differential({sum(xv * yv * zv - zv * 0.5f, {2})}, Compare::Tolerance, {1e-4, 1e-4});
    // Batched, large enough for several tiles.
    Array p = test::random_array(Shape::of({3, 100, 40}), 45);
    Array q = test::random_array(Shape::of({3, 40, 150}), 46);
    check_differential({matmul(p, q)}, Compare::Tolerance);
}

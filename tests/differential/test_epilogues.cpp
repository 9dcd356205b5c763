// Differential: epilogues (partition.hpp). A map that reads a sum's result element for element
// runs in the sum's kernel: on the register tile's accumulators when it can (vector operands
// along the columns, broadcast operands per row), else as its own loop over the stored result.
// Sizes leave remainder rows and columns, and each case runs at 1 and 2 threads and several tile
// settings against the reference interpreter.
#include <array>

#include "differential/differential.hpp"

using namespace hedra;
using test::check_differential;
using test::Compare;

namespace {

// An SGD step of a weight gradient, dW = x^T g over the batch: the shape of the training step's
// weight update (the result is read only by the update, so the tile never stores it).
Array sgd_update(const Array& w, const Array& x, const Array& g, float lr) {
    return w - lr * matmul(transpose(x), g);
}

} // namespace

TEST_CASE("differential: a weight update fused into its gradient's contraction") {
    for (auto [batch, in, out] : {std::array<std::int64_t, 3>{64, 67, 45},
                                  {37, 130, 29},
                                  {32, 96, 130},
                                  {40, 301, 260},
                                  {8, 16, 16}}) {
        CAPTURE(batch);
        CAPTURE(in);
        CAPTURE(out);
        Array x = test::random_array(Shape::of({batch, in}), 31);
        Array g = test::random_array(Shape::of({batch, out}), 32);
        Array w = test::random_array(Shape::of({in, out}), 33);
        check_differential({sgd_update(w, x, g, 0.1f)}, Compare::Tolerance);
    }
}

TEST_CASE("differential: epilogue operands along the columns, per row, and the result kept") {
    Array a = test::random_array(Shape::of({50, 70}), 34);
    Array b = test::random_array(Shape::of({70, 41}), 35);
    Array per_column = test::random_array(Shape::of({41}), 36);
    Array per_row = test::random_array(Shape::of({50, 1}), 37);
    Array full = test::random_array(Shape::of({50, 41}), 38);
    Array c = matmul(a, b);
    // Vector operands and a broadcast one; the sum is an output too, so it is stored as well.
    check_differential({c * 0.5f + per_column - per_row * full, c}, Compare::Tolerance);
    // max/select cannot be printed on the vector types: the epilogue's own loop runs instead.
    check_differential({relu(c + per_column)}, Compare::Tolerance);
}

TEST_CASE("differential: an epilogue after a reduction split into several K tiles") {
    // K = 3000 exceeds one panel: partial sums cross K tiles, so the epilogue follows the
    // contraction's nest instead of joining it.
    Array a = test::random_array(Shape::of({13, 3000}), 39);
    Array b = test::random_array(Shape::of({3000, 20}), 40);
    Array w = test::random_array(Shape::of({13, 20}), 41);
    check_differential({w - 0.01f * matmul(a, b)}, Compare::Tolerance, {1e-4, 1e-4});
}

TEST_CASE("differential: a convolution weight gradient with its update (columns gathered)") {
    // dW[o, c, r, s] = sum_{n, i, j} g[n, o, i, j] * x[n, c, i + r, j + s]; then w - lr dW.
    const std::int64_t n = 2, c = 3, o = 5, h = 9, k = 3, oh = h - k + 1;
    Array x = test::random_array(Shape::of({n, c, h, h}), 42);
    Array g = test::random_array(Shape::of({n, o, oh, oh}), 43);
    Array w = test::random_array(Shape::of({o, c, k, k}), 44);
    // Both operands viewed over (n, o, c, i, j, r, s): g[n, o, i, j] and x[n, c, i + r, j + s].
    Shape product = Shape::of({n, o, c, oh, oh, k, k});
    Array gv = view(g, product,
                    AffineMap(7, 4, {1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0,
                                     0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0},
                              {0, 0, 0, 0}));
    Array xv = view(x, product,
                    AffineMap(7, 4, {1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
                                     0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1},
                              {0, 0, 0, 0}));
    Array gx = gv * xv;
    Array dw = sum(gx, {0, 3, 4});
    check_differential({w - 0.05f * dw}, Compare::Tolerance);
}

TEST_CASE("differential: divisions in a register-tiled product and in its epilogue") {
    // Softmax probabilities times V (attention), the normalization folded into the product.
    Array e = exp(test::random_array(Shape::of({45, 70}), 42));
    Array p = e / sum(e, {1}, true);
    Array v = test::random_array(Shape::of({70, 37}), 43);
    Array c = test::random_array(Shape::of({45, 37}), 44);
    check_differential({matmul(p, v), matmul(e, v) / (c * c + 1.0f)}, Compare::Tolerance);
}

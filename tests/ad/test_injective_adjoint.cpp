// The adjoint of a view with non-overlapping windows (pooling with stride >= kernel) moves the
// cotangent into place piece by piece: the values agree with the reference, and no dilated,
// zero-padded temporary is built.
#include <doctest/doctest.h>

#include "ad/grad.hpp"
#include "hedra.hpp"
#include "nn/layers.hpp"
#include "scheduler/partition.hpp"

using namespace hedra;

namespace {

Array values(std::vector<std::int64_t> sizes, unsigned seed) {
    Shape shape = Shape::of(sizes);
    std::vector<double> v(static_cast<std::size_t>(shape.size()));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<double>((i * 7919u + seed * 104729u) % 1000u) / 1000.0 - 0.5;
    return array(v, shape);
}

// Elements of the largest temporary the gradient's partition allocates.
std::int64_t largest_temporary(const Array& out) {
    poly::ProgramIR ir = sched::partition({out.node()}, {});
    std::int64_t most = 0;
    for (const poly::Buffer& b : ir.buffers) {
        if (b.role != poly::BufferRole::Temporary) continue;
        std::int64_t n = 1;
        for (std::int64_t s : b.sizes)
            n *= s;
        most = std::max(most, n);
    }
    return most;
}

} // namespace

TEST_CASE("injective adjoint: 2x2 pooling with stride 2 moves ȳ, no dilated temporary") {
    Array x = values({2, 3, 8, 8}, 1);
    Array y = nn::maxpool2d(x, 2);
    Array g = values({2, 3, 4, 4}, 2);
    Array dx = grad(sum(y * g), x);
    HostArray got = compute(dx);
    // Each window's maximum receives g, the others 0 (the values are distinct per window).
    std::vector<double> xs = compute(x).to_doubles(), gs = compute(g).to_doubles();
    std::vector<double> d = got.to_doubles();
    for (int n = 0; n < 2; ++n)
        for (int c = 0; c < 3; ++c)
            for (int oh = 0; oh < 4; ++oh)
                for (int ow = 0; ow < 4; ++ow) {
                    int best = -1;
                    double top = -1e9;
                    for (int k = 0; k < 4; ++k) {
                        int h = 2 * oh + k / 2, w = 2 * ow + k % 2;
                        int i = ((n * 3 + c) * 8 + h) * 8 + w;
                        if (xs[i] > top) {
                            top = xs[i];
                            best = i;
                        }
                    }
                    for (int k = 0; k < 4; ++k) {
                        int h = 2 * oh + k / 2, w = 2 * ow + k % 2;
                        int i = ((n * 3 + c) * 8 + h) * 8 + w;
                        double want = i == best ? gs[((n * 3 + c) * 4 + oh) * 4 + ow] : 0.0;
                        CHECK(d[i] == doctest::Approx(want));
                    }
                }
    CHECK(largest_temporary(dx) <= 2 * 3 * 8 * 8);
}

TEST_CASE("injective adjoint: windows that skip input elements (stride 3, odd sizes) leave "
          "zeros there; the dot-product identity holds") {
    Array x = values({1, 2, 7, 8}, 3);
    Shape space = Shape::of({1, 2, 2, 3, 2, 2});
    AffineMap m(6, 4, {1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3, 0, 1, 0, 0, 0, 0, 3, 0, 1},
                {0, 0, 0, 0});
    Array v = view(x, space, m);
    Array w = values({1, 2, 2, 3, 2, 2}, 4);
    Array dx = grad(sum(v * w), x);
    std::vector<double> xs = compute(x).to_doubles(), ws = compute(w).to_doubles();
    std::vector<double> d = compute(dx).to_doubles();
    double lhs = 0, rhs = 0;
    std::vector<double> vs = compute(v).to_doubles();
    for (std::size_t i = 0; i < vs.size(); ++i)
        lhs += vs[i] * ws[i];
    for (std::size_t i = 0; i < xs.size(); ++i)
        rhs += xs[i] * d[i];
    CHECK(lhs == doctest::Approx(rhs));
    CHECK(d[2] == 0.0); // row 0, column 2: in no window
}

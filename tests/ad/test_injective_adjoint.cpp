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

// Elements of the largest buffer (of any role) of the gradient's partition.
std::int64_t largest_buffer(const Array& out) {
    poly::ProgramIR ir = sched::partition({out.node()}, {});
    std::int64_t most = 0;
    for (const poly::Buffer& b : ir.buffers) {
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
    // Measured before compute(dx), which memoizes dx (its partition is then one input).
    CHECK(largest_temporary(dx) <= 2 * 3 * 8 * 8);
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

TEST_CASE("injective adjoint: attention's head views of a matmul operand sum the broadcast axis, "
          "then move ȳ") {
    // q[b, h, t, d] = qkv[b, t, h·D + d] and kᵀ[b, h, d, t] = qkv[b, t, C + h·D + d], C = 8,
    // two heads of D = 4; scores = q·kᵀ, a matmul over views of views.
    const std::int64_t b = 2, t = 5, c = 8, heads = 2, d = 4;
    Array qkv = values({b, t, 2 * c}, 5);
    auto head = [&](std::int64_t part, bool transposed) {
        std::vector<std::int64_t> m(4 * 3, 0);
        m[0 * 4 + 0] = 1;                    // b
        m[1 * 4 + (transposed ? 3 : 2)] = 1; // t
        m[2 * 4 + 1] = d;                    // h·D
        m[2 * 4 + (transposed ? 2 : 3)] = 1; // + d
        Shape s = transposed ? Shape::of({b, heads, d, t}) : Shape::of({b, heads, t, d});
        return view(qkv, s, AffineMap(4, 3, m, {0, 0, part * c}));
    };
    Array scores = matmul(head(0, false), head(1, true));
    Array g = values({b, heads, t, t}, 6);
    Array dqkv = grad(sum(scores * g), qkv);
    // The general gather pads ȳ to (B, T, 2C + D, heads, T); the move's largest array is
    // qkv's gradient itself.
    CHECK(largest_buffer(dqkv) <= b * t * 2 * c);
    // ⟨scores, g⟩ is bilinear in qkv: ⟨dqkv, qkv⟩ = 2 ⟨scores, g⟩.
    std::vector<double> s = compute(scores).to_doubles(), gs = compute(g).to_doubles();
    std::vector<double> x = compute(qkv).to_doubles(), dx = compute(dqkv).to_doubles();
    double lhs = 0, rhs = 0;
    for (std::size_t i = 0; i < s.size(); ++i)
        lhs += 2 * s[i] * gs[i];
    for (std::size_t i = 0; i < x.size(); ++i)
        rhs += x[i] * dx[i];
    CHECK(lhs == doctest::Approx(rhs));
}

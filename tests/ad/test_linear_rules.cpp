// The dot-product identity ⟨L x, y⟩ = ⟨x, Lᵀ y⟩ for every linear primitive: views with random
// affine maps (strides, offsets, reversal, windows, diagonals), reshapes by Transform and by
// Shape on arrays whose ranges do not start at 0, reductions, fuse/overwrite/stack/pad, and
// linear maps. The adjoints are built by ad/, the identity is checked in f64 on random data.
#include "ad_test_util.hpp"

using namespace hedra;
using namespace hedra::test;

namespace {

Array only(const std::vector<Array>& x) {
    return x.at(0);
}

void check_linear_1(const Shape& in, const std::function<Array(const Array&)>& f,
                    std::uint64_t seed = 1) {
    INFO("input shape " << in.to_string());
    HEDRA_CHECK_GRADIENT(check_linear([&](const std::vector<Array>& x) { return f(only(x)); },
                                      {zeros(in, DType::F64)}, exact(seed)));
}

std::int64_t uniform(std::mt19937_64& g, std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(hi - lo + 1));
}

} // namespace

TEST_CASE("dot-product identity: permutations, strides, shifts, reversal (Transform)") {
    Shape s{range(1, 4), range(0, 10, 2), range(5)};
    check_linear_1(s, [](const Array& x) { return transpose(x, {2, 0, 1}); });
    check_linear_1(s, [](const Array& x) { return reshape(x, Transform::scaling({2, -1, 3})); });
    check_linear_1(s, [](const Array& x) { return reshape(x, Transform::shift({-1, 7, 2})); });
    // Drop a unit axis (pinned) and add one.
    Shape u{range(2, 3), range(4)};
    check_linear_1(u, [](const Array& x) {
        return reshape(x, Transform(2, {{1, -2, 1}, {-1, 1, 5}}, {std::int64_t{2}, std::nullopt}));
    });
}

TEST_CASE("dot-product identity: reshape by Shape (move, broadcast, select)") {
    check_linear_1(Shape{range(3), range(1)}, [](const Array& x) {
        return reshape(x, Shape{range(2), range(3), range(4)});
    });
    check_linear_1(Shape{range(1, 9), range(6)}, [](const Array& x) {
        return reshape(x, Shape{range(2, 9, 3), range(1, 6, 2)});
    });
    check_linear_1(Shape{range(4), range(-2, 3)}, [](const Array& x) {
        return reshape(x, Shape{range(10, 14), range(5)});
    });
    check_linear_1(Shape{range(5)}, [](const Array& x) {
        return broadcast_to(x, Shape{range(3), range(5)});
    });
}

TEST_CASE("dot-product identity: views with windows, strides, diagonals") {
    // Convolution windows, stride 2, with an offset: (o, k) -> 2o + k + 1.
    check_linear_1(Shape{range(12)}, [](const Array& x) {
        return view(x, Shape{range(5), range(3)}, AffineMap(2, 1, {2, 1}, {1}));
    });
    // A reversed window: (o, k) -> 9 - o + 2k.
    check_linear_1(Shape{range(14)}, [](const Array& x) {
        return view(x, Shape{range(6), range(3)}, AffineMap(2, 1, {-1, 2}, {9}));
    });
    // Both coefficients larger than 1: (o, k) -> 3o + 2k.
    check_linear_1(Shape{range(16)}, [](const Array& x) {
        return view(x, Shape{range(4), range(3)}, AffineMap(2, 1, {3, 2}, {0}));
    });
    // 2-D windows with a broadcast axis and non-0-based result ranges.
    check_linear_1(Shape{range(2), range(7), range(6)}, [](const Array& x) {
        return view(
            x, Shape{range(2), range(3), range(1, 4), range(2), range(2), range(2)},
            AffineMap(6, 3, {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0, 0, 0, 0, 2, 0, 1}, {0, -2, 0}));
    });
    // A diagonal: k -> (k, k), and a sheared diagonal (a, b) -> (a + b, a).
    check_linear_1(Shape{range(4), range(4)}, [](const Array& x) {
        return view(x, Shape{range(4)}, AffineMap(1, 2, {1, 1}, {0, 0}));
    });
    check_linear_1(Shape{range(7), range(4)}, [](const Array& x) {
        return view(x, Shape{range(4), range(4)}, AffineMap(2, 2, {1, 1, 1, 0}, {0, 0}));
    });
    // No ±1 pivot: k -> (2k, 3k + 1) needs the masked copy of k.
    check_linear_1(Shape{range(9), range(13)}, [](const Array& x) {
        return view(x, Shape{range(4), range(2)}, AffineMap(2, 2, {2, 0, 3, 1}, {0, 1}));
    });
    // Pinned input axis and a strided input range: j -> (3, 2j + 1) on ([0,5), [1,12):2).
    check_linear_1(Shape{range(5), range(1, 12, 2)}, [](const Array& x) {
        return view(x, Shape{range(3)}, AffineMap(1, 2, {0, 4}, {3, 1}));
    });
}

TEST_CASE("dot-product identity: random affine views") {
    std::mt19937_64 g(42);
    for (int trial = 0; trial < 24; ++trial) {
        const int R = static_cast<int>(uniform(g, 1, 3)), r = static_cast<int>(uniform(g, 1, 3));
        std::vector<Range> out;
        for (int a = 0; a < R; ++a)
            out.emplace_back(uniform(g, -3, 3), uniform(g, 1, 2), uniform(g, 1, 4));
        Shape result(out);
        std::vector<std::int64_t> m(static_cast<std::size_t>(r * R)), b(r);
        std::vector<Range> in;
        for (int i = 0; i < r; ++i) {
            std::int64_t lo = 0, hi = 0, base = uniform(g, -4, 4);
            b[i] = base;
            for (int a = 0; a < R; ++a) {
                // Mostly one result axis per row (separable), sometimes shared.
                std::int64_t c = (g() % 3 == 0) ? uniform(g, -2, 2) : 0;
                m[i * R + a] = c;
                base += c * out[a].start;
                std::int64_t span = c * out[a].step * (out[a].size - 1);
                lo += std::min<std::int64_t>(0, span);
                hi += std::max<std::int64_t>(0, span);
            }
            std::int64_t margin = uniform(g, 0, 2);
            in.emplace_back(base + lo - margin, 1, hi - lo + 1 + 2 * margin);
        }
        AffineMap map(R, r, m, b);
        INFO("view " << map.to_string() << " of " << result.to_string());
        check_linear_1(
            Shape(in), [&](const Array& x) { return view(x, result, map); },
            static_cast<std::uint64_t>(trial + 1));
    }
}

TEST_CASE("dot-product identity: random transforms") {
    std::mt19937_64 g(7);
    for (int trial = 0; trial < 12; ++trial) {
        const int r = static_cast<int>(uniform(g, 1, 3));
        std::vector<Range> in;
        for (int i = 0; i < r; ++i)
            in.emplace_back(uniform(g, -3, 3), uniform(g, 1, 3), uniform(g, 1, 4));
        std::vector<int> perm(r);
        for (int i = 0; i < r; ++i)
            perm[i] = i;
        std::shuffle(perm.begin(), perm.end(), g);
        std::vector<TransformAxis> axes;
        for (int o = 0; o < r; ++o) {
            std::int64_t scale = uniform(g, 1, 3) * (g() % 2 ? 1 : -1);
            axes.push_back({perm[o], scale, uniform(g, -5, 5)});
        }
        Transform t(r, axes);
        INFO("transform " << t.to_string());
        check_linear_1(
            Shape(in), [&](const Array& x) { return reshape(x, t); },
            static_cast<std::uint64_t>(trial + 100));
    }
}

TEST_CASE("dot-product identity: reductions") {
    Shape s{range(3), range(1, 5), range(0, 6, 3)};
    check_linear_1(s, [](const Array& x) { return sum(x); });
    check_linear_1(s, [](const Array& x) { return sum(x, {1}); });
    check_linear_1(s, [](const Array& x) { return sum(x, {0, 2}, true); });
    check_linear_1(s, [](const Array& x) { return mean(x, {-1}); });
}

TEST_CASE("dot-product identity: fuse, overwrite, stack, pad") {
    // Interleaved strided pieces.
    HEDRA_CHECK_GRADIENT(check_linear(
        [](const std::vector<Array>& x) {
            return fuse({x[0], x[1]});
        },
        {zeros(Shape{range(0, 8, 2), range(3)}, DType::F64),
         zeros(Shape{range(1, 8, 2), range(3)}, DType::F64)},
        exact()));
    // Overlapping pieces: the later one wins; the hidden part of the earlier gets nothing.
    HEDRA_CHECK_GRADIENT(check_linear(
        [](const std::vector<Array>& x) {
            return overwrite({x[0], x[1], x[2]});
        },
        {zeros(Shape{range(6), range(5)}, DType::F64),
         zeros(Shape{range(1, 4), range(0, 5, 2)}, DType::F64),
         zeros(Shape{range(2, 6), range(3, 5)}, DType::F64)},
        exact()));
    HEDRA_CHECK_GRADIENT(check_linear(
        [](const std::vector<Array>& x) {
            return stack(1, {x[0], x[1], x[0]});
        },
        {zeros(Shape{range(2), range(3)}, DType::F64),
         zeros(Shape{range(2), range(3)}, DType::F64)},
        exact()));
    check_linear_1(Shape{range(1, 4), range(3)}, [](const Array& x) {
        return pad(x, {{1, 2}, {0, 1}});
    });
}

TEST_CASE("dot-product identity: linear maps, matmul, broadcasting inside maps") {
    Array w = random_array(Shape{range(4), range(3)}, 5);
    Array mask = random_array(Shape{range(2), range(4)}, 6) > 0.0;
    HEDRA_CHECK_GRADIENT(check_linear(
        [&](const std::vector<Array>& x) {
            // x0 (2,4) and x1 (4,) broadcast from the right.
            return where(mask, x[0] * 3.0 - x[1], x[1] / 2.0);
        },
        {zeros(Shape{range(2), range(4)}, DType::F64), zeros(Shape{range(4)}, DType::F64)},
        exact()));
    check_linear_1(Shape{range(2), range(4)}, [&](const Array& x) { return matmul(x, w); });
    check_linear_1(Shape{range(3), range(5), range(4)},
                   [&](const Array& x) { return matmul(x, w); });
    Array v = random_array(Shape{range(3), range(2), range(5)}, 8);
    check_linear_1(Shape{range(5), range(4)}, [&](const Array& x) { return matmul(v, x); });
}

TEST_CASE("dot-product identity: windows times fixed weights (gather through the map)") {
    Array w6 = random_array(Shape{range(6)}, 21), w3 = random_array(Shape{range(3)}, 22);
    // Output axis longer than the kernel: the output gradient is dilated and padded.
    check_linear_1(Shape{range(14)}, [&](const Array& x) {
        return sum(view(x, Shape{range(5), range(3)}, AffineMap(2, 1, {2, 1}, {1})) * w3, {1});
    });
    // Reversed windows.
    check_linear_1(Shape{range(14)}, [&](const Array& x) {
        return sum(view(x, Shape{range(6), range(3)}, AffineMap(2, 1, {-1, 2}, {9})) * w3, {1});
    });
    // Kernel longer than the output: the weights are the padded operand.
    check_linear_1(Shape{range(9)}, [&](const Array& x) {
        return sum(view(x, Shape{range(2), range(6)}, AffineMap(2, 1, {2, 1}, {0})) * w6, {1});
    });
    // Mixed 2-D: rows placed along the output on one axis and the kernel on the other, so no
    // operand owns every padded row (the plain gather is used).
    Array wk = random_array(Shape{range(2), range(6)}, 23);
    check_linear_1(Shape{range(12), range(9)}, [&](const Array& x) {
        Shape box{range(5), range(2), range(2), range(6)}; // (oh, ow, kh, kw)
        AffineMap m(4, 2, {2, 0, 1, 0, /**/ 0, 2, 0, 1}, {1, 0});
        return sum(view(x, box, m) * wk, {2, 3});
    });
}

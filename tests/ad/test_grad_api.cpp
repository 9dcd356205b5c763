// The grad/vjp/stop_gradient API: fan-out accumulation, parameters that are intermediate
// arrays or unused, dtypes, non-0-based shapes, and the errors users can hit. Also the
// structure of a convolution's input gradient: one gather through a View, no shifted copies.
#include "ad_test_util.hpp"
#include "models.hpp"

using namespace hedra;
using namespace hedra::test;

namespace {

struct GraphCounts {
    int nodes = 0, fuses = 0, max_fuse_rank = 0, views = 0, window_views = 0, reduces = 0;
};

GraphCounts count_nodes(const Array& a) {
    GraphCounts c;
    for (const NodePtr& n : topological_order({a.node()})) {
        ++c.nodes;
        if (n->kind == NodeKind::Fuse) {
            ++c.fuses;
            c.max_fuse_rank = std::max(c.max_fuse_rank, n->shape.rank());
        }
        if (n->kind == NodeKind::Reduce) ++c.reduces;
        if (n->kind != NodeKind::View) continue;
        ++c.views;
        // A gather over windows reads one input axis through two result axes.
        const AffineMap& m = n->access;
        for (int r = 0; r < m.out_rank(); ++r) {
            int nonzero = 0;
            for (int a2 = 0; a2 < m.in_rank(); ++a2)
                nonzero += m.coeff(r, a2) != 0;
            if (nonzero >= 2) {
                ++c.window_views;
                break;
            }
        }
    }
    return c;
}

bool reaches(const Array& from, const Array& target) {
    for (const NodePtr& n : topological_order({from.node()}))
        if (n == target.node()) return true;
    return false;
}

} // namespace

TEST_CASE("grad: fan-out adds contributions") {
    Array x = array(std::vector<double>{1, 2, 3}, Shape::of({3}));
    // d/dx Σ (x·x + x + exp(0·x)) = 2x + 1
    CHECK(values_of(grad(sum(x * x + x), x)) == std::vector<double>{3, 5, 7});
    Array y = x * 2.0;
    CHECK(values_of(grad(sum(y * y) + sum(y), x)) == std::vector<double>{10, 18, 26});
}

TEST_CASE("grad: parameters that are intermediate, unused, or repeated") {
    Array x = array(std::vector<double>{1, 2}, Shape::of({2}));
    Array y = x * 3.0;
    Array z = array(std::vector<double>{5, 6, 7}, Shape::of({3}));
    auto g = grad(sum(y * y), {y, x, z, x});
    CHECK(values_of(g[0]) == std::vector<double>{6, 12});
    CHECK(values_of(g[1]) == std::vector<double>{18, 36});
    CHECK(values_of(g[2]) == std::vector<double>{0, 0, 0});
    CHECK(values_of(g[3]) == std::vector<double>{18, 36});
    CHECK(g[2].shape() == z.shape());
}

TEST_CASE("grad: dtypes and shapes follow the parameters") {
    Array x = array(std::vector<float>{1, 2, 3}, Shape{range(2, 8, 2)});
    Array w = array(std::vector<double>{0.5, 0.25, 2}, Shape{range(2, 8, 2)});
    auto g = grad(sum(cast(x, DType::F64) * w), {x, w});
    CHECK(g[0].dtype() == DType::F32);
    CHECK(g[0].shape() == x.shape());
    CHECK(values_of(g[0]) == std::vector<double>{0.5, 0.25, 2});
    CHECK(values_of(g[1]) == std::vector<double>{1, 2, 3});
    // Integer paths carry no gradient: x · i where i = index_components.
    Array i = index_components(x.shape(), 0);
    CHECK(values_of(grad(sum(x * i), x)) == std::vector<double>{2, 4, 6});
}

TEST_CASE("stop_gradient") {
    Array x = array(std::vector<double>{1, 2, 3}, Shape::of({3}));
    Array s = stop_gradient(x);
    CHECK(values_of(s) == std::vector<double>{1, 2, 3});
    CHECK(values_of(grad(sum(s * x), x)) == std::vector<double>{1, 2, 3});
    CHECK(values_of(grad(sum(stop_gradient(x * x)), x)) == std::vector<double>{0, 0, 0});
    // stop_gradient(x) and x are different arrays; the tag does not leak into x's users.
    CHECK(values_of(grad(sum(x * x), x)) == std::vector<double>{2, 4, 6});
    Array c = constant(2.0, DType::F64);
    CHECK(values_of(grad(stop_gradient(c) * c, c)) == std::vector<double>{2});
}

TEST_CASE("vjp: several outputs and non-scalar cotangents") {
    Array x = array(std::vector<double>{1, 2, 3}, Shape::of({3}));
    Array u = array(std::vector<double>{1, 0, -1}, Shape::of({3}));
    Array t = array(std::vector<double>{2}, Shape::of({1}));
    auto g = vjp({x * x, sum(x, {}, true)}, {u, t}, {x});
    CHECK(values_of(g[0]) == std::vector<double>{4, 2, -4});
}

TEST_CASE("grad: errors name the problem") {
    Array x = array(std::vector<double>{1, 2, 3}, Shape::of({3}));
    Array i = array(std::vector<std::int64_t>{1, 2, 3}, Shape::of({3}));
    CHECK_THROWS_WITH_AS(grad(x * 2.0, x), doctest::Contains("must have rank 0"), Error);
    CHECK_THROWS_WITH_AS(grad(sum(cast(i, DType::F64)), i),
                         doctest::Contains("only float arrays have gradients"), Error);
    CHECK_THROWS_WITH_AS(vjp({x}, {constant(1.0, DType::F64)}, {x}),
                         doctest::Contains("cotangent 0 has shape ()"), Error);
    // A view parameter read only through composed views is not in the graph.
    Array raw = array(std::vector<double>{1, 2, 3, 4, 5, 6}, Shape::of({2, 3}));
    Array t = transpose(raw);
    CHECK_THROWS_WITH_AS(grad(sum(transpose(t) * 2.0), t),
                         doctest::Contains("differentiate with respect to the array it views"),
                         Error);
    CHECK(values_of(grad(sum(transpose(t) * 2.0), raw)) == std::vector<double>(6, 2.0));
    Array custom = reduce([](auto a, auto b) { return a * b + a; }, 0.0, x);
    CHECK_THROWS_WITH_AS(grad(custom, x), doctest::Contains("not differentiable"), Error);
}

TEST_CASE("structure: conv2d's input gradient is a gather through a View") {
    // Only the graph is inspected (nothing is computed), so the sizes can be realistic.
    auto input_grad = [](std::int64_t k, std::int64_t s, std::int64_t p) {
        Array x = placeholder(Shape::of({2, 3, 16, 16}), DType::F64);
        Array w = placeholder(Shape::of({4, 3, k, k}), DType::F64);
        Array y = conv2d(x, w, s, p);
        Array r = placeholder(y.shape(), DType::F64);
        return std::pair{grad(sum(y * r), x), x};
    };
    for (std::int64_t s : {1, 2})
        for (std::int64_t p : {0, 1}) {
            INFO("stride " << s << " padding " << p);
            auto [g3, x3] = input_grad(3, s, p);
            auto [g5, x5] = input_grad(5, s, p);
            GraphCounts c3 = count_nodes(g3), c5 = count_nodes(g5);
            // No K² shifted copies: the graph does not grow with the kernel.
            CHECK(c3.nodes == c5.nodes);
            CHECK(c3.nodes <= 16);
            // One zero-embedding, of the dilated output gradient only (rank 4: no kernel or
            // input-channel axes in any padded array).
            CHECK(c3.fuses <= 1);
            CHECK(c3.max_fuse_rank <= 4);
            CHECK(c3.window_views >= 1);  // the gather: (ih, kh) -> ih - kh
            CHECK(c3.reduces == 1);       // one reduction over (kh, kw, output channels)
            CHECK_FALSE(reaches(g3, x3)); // linear in x: the gradient does not read x
        }
}

TEST_CASE("docs example: a compiled logistic-regression step") {
    const std::int64_t N = 8, D = 3;
    Array x = placeholder(Shape::of({N, D}), DType::F64, "x");
    Array y = placeholder(Shape::of({N}), DType::F64, "y");
    Array w = placeholder(Shape::of({D}), DType::F64, "w");
    Array p = sigmoid(sum(x * w, {1}));
    Array loss = -mean(y * log(p) + (1.0 - y) * log(1.0 - p));
    Array gw = grad(loss, w);
    Array w_next = w - 0.1 * gw;
    auto step = compile({loss, w_next}, {x, y, w});

    HostArray xv = random_host({N, D}, 1), wv = random_host({D}, 2);
    HostArray yv({N}, DType::F64);
    for (std::int64_t i = 0; i < N; ++i)
        yv.set_flat(i, i % 3 == 0 ? 1.0 : 0.0);
    auto out = step({xv, yv, wv});
    // Independent: dL/dw = mean_i (p_i - y_i) x_i.
    std::vector<double> g(D, 0.0);
    for (std::int64_t i = 0; i < N; ++i) {
        double z = 0;
        for (std::int64_t d = 0; d < D; ++d)
            z += xv.flat(i * D + d) * wv.flat(d);
        double pi = 1.0 / (1.0 + std::exp(-z));
        for (std::int64_t d = 0; d < D; ++d)
            g[d] += (pi - yv.flat(i)) * xv.flat(i * D + d) / N;
    }
    for (std::int64_t d = 0; d < D; ++d)
        CHECK(out[1].flat(d) == doctest::Approx(wv.flat(d) - 0.1 * g[d]).epsilon(1e-12));
}

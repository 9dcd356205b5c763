// Collective nodes: compile() cuts a graph at its all-reduces into pieces that are ordinary
// programs; their values and gradients (Megatron's pair: the sum passes its cotangent through,
// copy_to_group sums it) against the same arithmetic written out. The group here stands for two
// ranks that hold equal values, so a sum doubles and a max is the value itself.
#include <doctest/doctest.h>

#include <cmath>

#include "core/collective_program.hpp"
#include "core/expect_error.hpp"
#include "hedra.hpp"

using namespace hedra;

namespace {

struct TwinRanks final : CollectiveGroup {
    int calls = 0;
    int rank() const override { return 0; }
    int size() const override { return 2; }
    std::string describe() const override { return "twins (rank 0 of 2)"; }
    void all_reduce_in_place(HostArray& data, CollectiveOp op) override {
        ++calls;
        if (op == CollectiveOp::Max) return;
        for (float& v : data.mutable_values<float>())
            v = v + v;
    }
};

ComputeOptions reference() {
    ComputeOptions o;
    o.backend = "reference";
    return o;
}

HostArray ramp(std::vector<std::int64_t> sizes) {
    HostArray a(sizes, DType::F32);
    for (std::int64_t i = 0; i < a.size(); ++i)
        a.set_flat(i, 0.25 * static_cast<double>(i % 7) - 0.5);
    return a;
}

} // namespace

TEST_CASE("collectives: a graph is cut at its all-reduces and runs the sums between pieces") {
    auto twins = std::make_shared<TwinRanks>();
    for (const char* backend : {"reference", "openmp"}) {
        INFO(backend);
        ComputeOptions o;
        o.backend = backend;
        Array x = placeholder(Shape::of({3, 4}), DType::F32, "x");
        Array w = placeholder(Shape::of({4, 5}), DType::F32, "w");
        Array h = all_reduce(matmul(x, w), twins);            // piece 0, then a sum
        Array y = all_reduce(tanh(h) * 3.0f + sum(x), twins); // piece 1, a sum, piece 2
        Array out = y - h;
        CompiledProgram p = compile({out, h}, {x, w}, o);
        HostArray xv = ramp({3, 4}), wv = ramp({4, 5});
        twins->calls = 0;
        std::vector<HostArray> got = p({xv, wv});
        CHECK(twins->calls == 2);
        std::vector<HostArray> want =
            compute({2.0f * (tanh(2.0f * matmul(array(xv), array(wv))) * 3.0f + sum(array(xv))) -
                         2.0f * matmul(array(xv), array(wv)),
                     2.0f * matmul(array(xv), array(wv))},
                    reference());
        for (int k = 0; k < 2; ++k)
            for (std::int64_t i = 0; i < want[k].size(); ++i)
                CHECK(got[k].flat(i) == doctest::Approx(want[k].flat(i)).epsilon(1e-6));
    }
}

TEST_CASE("collectives: gradients pass through a sum and are summed by copy_to_group") {
    auto twins = std::make_shared<TwinRanks>();
    Array x = placeholder(Shape::of({3, 4}), DType::F32, "x");
    Array w = placeholder(Shape::of({4, 5}), DType::F32, "w");
    // A column-parallel then row-parallel pair, as in a tensor-parallel MLP.
    Array hidden = tanh(matmul(copy_to_group(x, twins), w));
    Array y = all_reduce(matmul(hidden, transpose(w, {1, 0})), twins);
    Array loss = sum(y * y);
    std::vector<Array> g = grad(loss, {x, w});
    HostArray xv = ramp({3, 4}), wv = ramp({4, 5});
    std::vector<HostArray> got = compile({loss, g[0], g[1]}, {x, w}, reference())({xv, wv});
    // Written out: the sum's cotangent 2y passes through; x's gradient is summed (doubled).
    Array X = array(xv), W = array(wv);
    Array H = tanh(matmul(X, W));
    Array Y = 2.0f * matmul(H, transpose(W, {1, 0}));
    Array ybar = 2.0f * Y;
    Array hbar = matmul(ybar, W);
    Array pre = hbar * (1.0f - H * H);
    Array gx = 2.0f * matmul(pre, transpose(W, {1, 0}));
    Array gw = matmul(transpose(X, {1, 0}), pre) + matmul(transpose(ybar, {1, 0}), H);
    std::vector<HostArray> want = compute({sum(Y * Y), gx, gw}, reference());
    for (int k = 0; k < 3; ++k)
        for (std::int64_t i = 0; i < want[k].size(); ++i)
            CHECK(got[k].flat(i) == doctest::Approx(want[k].flat(i)).epsilon(1e-5));
}

TEST_CASE("collectives: compute(), a symbolic batch, a max, and a group of one") {
    auto twins = std::make_shared<TwinRanks>();
    HostArray xv = ramp({2, 3});
    HostArray s = compute(all_reduce(array(xv) + 1.0f, twins), reference());
    for (std::int64_t i = 0; i < s.size(); ++i)
        CHECK(s.flat(i) == doctest::Approx(2.0 * (xv.flat(i) + 1.0)));
    HostArray m = compute(all_reduce(array(xv), twins, CollectiveOp::Max), reference());
    CHECK(m.flat(4) == doctest::Approx(xv.flat(4)));
    // A symbolic leading extent: one program for every batch.
    Array xb = placeholder(Shape{dynamic("batch", 8), range(3)}, DType::F32, "xb");
    CompiledProgram p = compile({sum(all_reduce(exp(xb), twins))}, {xb}, reference());
    for (std::int64_t b : {2, 5}) {
        HostArray in = ramp({b, 3});
        double want = 0.0;
        for (std::int64_t i = 0; i < in.size(); ++i)
            want += 2.0 * std::exp(in.flat(i));
        CHECK(p({in})[0].flat(0) == doctest::Approx(want).epsilon(1e-5));
    }
    Array x = placeholder(Shape::of({4}), DType::F32, "x");
    struct One final : CollectiveGroup {
        int rank() const override { return 0; }
        int size() const override { return 1; }
        std::string describe() const override { return "one"; }
        void all_reduce_in_place(HostArray&, CollectiveOp) override { FAIL("called"); }
    };
    Array alone = all_reduce(x, std::make_shared<One>());
    CHECK(alone.node() == x.node()); // a group of one adds no node
}

TEST_CASE("collectives: cut plans count pieces and all-reduces") {
    auto twins = std::make_shared<TwinRanks>();
    Array x = placeholder(Shape::of({4}), DType::F32, "x");
    Array chain = x;
    for (int k = 0; k < 3; ++k)
        chain = all_reduce(chain * 2.0f + 1.0f, twins);
    std::vector<NodePtr> outs{(chain + 1.0f).node()};
    auto program = detail::compile_with_collectives(outs, {x.node()}, reference());
    detail::CollectivePlan plan = detail::collective_plan(*program);
    CHECK(plan.pieces == 4);
    CHECK(plan.all_reduces == 3);
    // Two independent sums of one level share a cut.
    Array a = all_reduce(x * 2.0f, twins), b = all_reduce(x * 3.0f, twins);
    auto two = detail::compile_with_collectives({(a + b).node()}, {x.node()}, reference());
    CHECK(detail::collective_plan(*two).pieces == 2);
    CHECK(detail::collective_plan(*two).all_reduces == 2);
    HostArray got = two->run({ramp({4})})[0];
    HostArray xv = ramp({4});
    for (std::int64_t i = 0; i < 4; ++i)
        CHECK(got.flat(i) == doctest::Approx(10.0 * xv.flat(i)));
}

TEST_CASE("collectives: errors say what to do") {
    auto twins = std::make_shared<TwinRanks>();
    Array x = placeholder(Shape::of({4}), DType::F32, "x");
    CHECK_ERROR(all_reduce(x, nullptr), "all_reduce", "no group", "collective_group");
    CHECK_ERROR(all_reduce(cast(x, DType::BF16), twins), "all_reduce", "f32");
    CHECK_ERROR(grad(sum(all_reduce(x, twins, CollectiveOp::Max)), x), "max", "stop_gradient");
    CHECK_ERROR(save_graph({all_reduce(x, twins)}, {x}), "save_graph", "collective");
    CHECK_ERROR(scan(
                    [&](const std::vector<Array>& c, const std::vector<Array>& xs) {
                        return ScanStep{{all_reduce(c[0] + xs[0], twins)}, {}};
                    },
                    {zeros(Shape::of({4}))}, {placeholder(Shape::of({3, 4}))}),
                "scan", "collective", "outside the scan");
}

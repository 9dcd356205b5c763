// partition at the edges: outputs that are leaves or views of leaves, placeholders and their
// order, memoized nodes as inputs, empty shapes, rank 0, the expression-size cap, the
// materialization rule for shared maps, errors and determinism.
#include "partition_testing.hpp"
#include "scheduler/canonicalize.hpp"

using namespace hedra;
using namespace hedra::test;
using poly::BufferRole;
using poly::StatementKind;

TEST_CASE("an output that is a leaf or a view of a leaf is still written by a copy") {
    Array x = array(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape::of({2, 3}));
    Array p = placeholder(Shape::of({2}), DType::F32, "p");
    Partitioned r =
        run_partitioned({x, transpose(x), p}, {p}, {HostArray::from<float>({7, 8}, {2})});
    REQUIRE(r.ir.kernels.size() == 3);
    CHECK(count_buffers(r.ir, BufferRole::Input) == 2);
    CHECK(count_buffers(r.ir, BufferRole::Output) == 3);
    for (const auto& k : r.ir.kernels) {
        REQUIRE(k.statements.size() == 1);
        CHECK(k.statements[0].kind == StatementKind::Assign);
        CHECK(k.statements[0].reads.size() == 1);
    }
    CHECK(r.ir.inputs.at(0) == 0); // the placeholder comes first
    CHECK(r.ir.buffers[0].node == p.node());
    check_close(r.results[0], {1, 2, 3, 4, 5, 6});
    check_close(r.results[1], {1, 4, 2, 5, 3, 6});
    check_close(r.results[2], {7, 8});
}

TEST_CASE("placeholders are inputs in the given order, even when unused") {
    Array a = placeholder(Shape::of({3}), DType::F32, "a");
    Array b = placeholder(Shape::of({3}), DType::F32, "b");
    Array c = placeholder(Shape::of({2}), DType::I32, "unused");
    Array y = b * 10.0f - a;
    std::vector<HostArray> in{HostArray::from<float>({1, 2, 3}, {3}),
                              HostArray::from<float>({4, 5, 6}, {3}),
                              HostArray::from<std::int32_t>({0, 0}, {2})};
    Partitioned p = run_partitioned({y}, {c, a, b}, {in[2], in[0], in[1]});
    REQUIRE(p.ir.inputs.size() == 3);
    CHECK(p.ir.buffers[p.ir.inputs[0]].node == c.node());
    CHECK(p.ir.buffers[p.ir.inputs[1]].node == a.node());
    CHECK(p.ir.buffers[p.ir.inputs[2]].node == b.node());
    check_close(p.results[0], {39, 48, 57});
    check_against_reference({y}, {a, b}, {in[0], in[1]});
}

TEST_CASE("a memoized node is an input and its graph is not visited") {
    Array x = array(std::vector<float>{1, 2, 3}, Shape::of({3}));
    Array y = x * 2.0f + 1.0f;
    // Memoize through the reference backend, as compute() does.
    ComputeOptions options;
    options.backend = "reference";
    HostArray yv = compute(y, options);
    REQUIRE(y.value().has_value());
    Array z = y * y;
    Partitioned p = run_partitioned({z});
    REQUIRE(p.ir.inputs.size() == 1);
    CHECK(p.ir.buffers[p.ir.inputs[0]].node == y.node());
    for (const auto& b : p.ir.buffers)
        CHECK(b.node != x.node());
    check_close(yv, {3, 5, 7});
    check_close(p.results[0], {9, 25, 49});
}

TEST_CASE("empty shapes and rank 0") {
    Array e = zeros(Shape::of({0, 3})) + 1.0f;
    Array x = array(std::vector<float>{}, Shape::of({2, 0}));
    Array s = sum(x, {1}); // over an empty axis: the identity
    Array m = max(x, {1});
    Array c = constant(3.5f); // a rank-0 output that is a constant
    Array t = sum(array(std::vector<float>{1, 2, 3, 4}, Shape::of({2, 2}))); // rank 0
    Array u = t * c;
    Partitioned p = run_partitioned({e, s, m, c, t, u});
    CHECK(p.results[0].sizes() == std::vector<std::int64_t>{0, 3});
    check_close(p.results[1], {0, 0});
    CHECK(p.results[2].flat(0) == -INFINITY);
    check_close(p.results[3], {3.5});
    check_close(p.results[4], {10});
    check_close(p.results[5], {35});
    CHECK(p.results[5].rank() == 0);
    check_against_reference({e, s, c, t, u});
}

TEST_CASE("the inlined expression of a statement is capped") {
    std::vector<float> xv{1, 2, 3};
    Array x = array(xv, Shape::of({3}));
    Array y = x;
    for (int i = 0; i < 60; ++i)
        y = y * 0.5f + 1.0f;
    sched::PartitionOptions options;
    options.max_expression_nodes = 16;
    options.fuse_rows = false; // (fused rows would join the materialized maps in one kernel)
    poly::ProgramIR ir = sched::partition({y.node()}, {}, options);
    CHECK(ir.kernels.size() > 4);
    for (const auto& k : ir.kernels)
        for (const auto& s : k.statements) {
            std::vector<std::int64_t> ones(s.reads.size(), 1);
            CHECK(sched::expression_size(s.value, ones) <= 16);
        }
    std::vector<double> want(xv.begin(), xv.end());
    for (double& w : want)
        for (int i = 0; i < 60; ++i)
            w = static_cast<float>(static_cast<float>(w * 0.5f) + 1.0f);
    check_close(interpret_ir(ir)[0], want);
    // With the default cap the same chain is also right.
    check_against_reference({y});
}

TEST_CASE("a cheap map shared by two kernels is recomputed in each, unless a sum multiplies it "
          "(a contraction's operand); an expensive one shared in one kernel is stored") {
    Array x = array(std::vector<float>{1, 2, 3, 4}, Shape::of({2, 2}));
    Array cheap = x + 1.0f;
    Partitioned p = check_against_reference({sum(cheap, {0}), sum(cheap, {1})});
    CHECK(p.ir.kernels.size() == 2);
    CHECK(count_buffers(p.ir, BufferRole::Temporary) == 0);

    Array w = array(std::vector<float>{1, -1, 2, 0.5f}, Shape::of({2, 2}));
    Partitioned c = check_against_reference({matmul(cheap, w), sum(cheap, {1})});
    CHECK(c.ir.kernels.size() == 3);
    CHECK(count_buffers(c.ir, BufferRole::Temporary) == 1);

    Array dear = sin(x); // a scalar libm call (f32 exp would be vector math, recomputed)
    Partitioned q = check_against_reference({sum(dear * transpose(dear), {1})}, {}, {}, 1e-6);
    CHECK(q.ir.kernels.size() == 2);

    Array once = x * 3.0f;
    Partitioned r = check_against_reference({sum(once * transpose(once), {1})});
    CHECK(r.ir.kernels.size() == 1); // cheap, both uses in one statement: recomputed
}

TEST_CASE("partition errors name the placeholder") {
    Array a = placeholder(Shape::of({3}), DType::F32, "weights");
    Array y = a + 1.0f;
    auto message = [](auto f) {
        try {
            f();
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    std::string missing = message([&] { sched::partition({y.node()}, {}); });
    CHECK(missing.find("placeholder 'weights' f32 (3) created at") != std::string::npos);
    CHECK(missing.find("not listed among the placeholders") != std::string::npos);
    std::string twice = message([&] { sched::partition({y.node()}, {a.node(), a.node()}); });
    CHECK(twice.find("listed twice") != std::string::npos);
}

TEST_CASE("partition is deterministic") {
    Array a = array(small_values(12, 21), Shape::of({3, 4}));
    Array b = array(small_values(20, 22), Shape::of({4, 5}));
    Array c = exp(matmul(a, b) * 0.01f);
    Array y = c / sum(c, {1}, true);
    std::string first = poly::to_string(sched::partition({y.node(), c.node()}, {}));
    std::string second = poly::to_string(sched::partition({y.node(), c.node()}, {}));
    CHECK(first == second);
}

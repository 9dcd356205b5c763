// Tests of canonicalize: views leave the graph, their accesses compose, leaves stop the
// traversal, consumers are counted; and the scalar-expression helpers.
#include "scheduler/canonicalize.hpp"

#include "partition_testing.hpp"

using namespace hedra;

TEST_CASE("canonicalize drops views and composes their accesses") {
    Array x = array(std::vector<float>(24, 1.0f), Shape::of({4, 6}));
    Array y = reshape(x, Shape{range(1, 3), range(0, 6, 2)}); // rows 1..2, even columns
    Array z = transpose(y);
    Array w = z * 2.0f;
    sched::CanonicalGraph g = sched::canonicalize({w.node()});
    REQUIRE(g.nodes.size() == 2); // x, w (the views are gone; the literal is in w's expr)
    CHECK(g.nodes[0].node == x.node());
    CHECK(g.nodes[0].leaf);
    CHECK(g.nodes[1].node == w.node());
    CHECK(g.nodes[1].output);
    CHECK(g.nodes[1].operands == std::vector<int>{0});
    CHECK(g.nodes[0].consumers == std::vector<int>{1});
    CHECK(g.outputs == std::vector<int>{1});

    auto use = g.resolve(w.node()->inputs[0], AffineMap::identity(2));
    CHECK(use.node == x.node());
    // z[j, i] = y[i, j] = x[1 + i, 2 * j]
    CHECK(use.access == AffineMap(2, 2, {0, 1, 2, 0}, {1, 0}));
}

TEST_CASE("canonicalize keeps views that are outputs and counts every use") {
    Array x = array(std::vector<float>{1, 2, 3}, Shape::of({3}));
    Array t = reshape(x, Transform::shift({2}));
    Array a = x * x;
    Array b = a + reshape(t, Transform::shift({-2})); // a view of the output view t
    sched::CanonicalGraph g = sched::canonicalize({b.node(), t.node()});
    int ix = g.find(x.node().get()), ia = g.find(a.node().get()), it = g.find(t.node().get());
    REQUIRE(ix >= 0);
    REQUIRE(ia >= 0);
    REQUIRE(it >= 0);
    CHECK(g.nodes[it].output);
    CHECK(g.nodes[it].operands == std::vector<int>{ix});
    // x is read by a (x * x has one operand: core merges repeated ones), by b through the
    // view, and by the output view t.
    CHECK(g.nodes[ix].consumers.size() == 3);
    CHECK(g.nodes[ia].consumers.size() == 1);
}

TEST_CASE("canonicalize stops at memoized nodes") {
    Array x = array(std::vector<float>{1, 2, 3}, Shape::of({3}));
    Array y = exp(x) + 1.0f;
    y.node()->set_memo(HostArray::from<float>({5, 6, 7}, {3}));
    Array z = y * 2.0f;
    sched::CanonicalGraph g = sched::canonicalize({z.node()});
    REQUIRE(g.nodes.size() == 2);
    CHECK(g.nodes[0].node == y.node());
    CHECK(g.nodes[0].leaf);
    CHECK(g.find(x.node().get()) == -1);
}

TEST_CASE("fold_constants, has_transcendental and expression_size") {
    ScalarExpr two = scalar_const(2.0, DType::F32);
    ScalarExpr three = scalar_const(3.0, DType::F32);
    ScalarExpr in = scalar_input(0, DType::F32);
    ScalarExpr e = scalar_binary(ScalarOp::Mul, in, scalar_binary(ScalarOp::Add, two, three));
    ScalarExpr f = sched::fold_constants(e);
    REQUIRE(f->op == ScalarOp::Mul);
    CHECK(f->args[1]->op == ScalarOp::Const);
    CHECK(f->args[1]->fvalue == 5.0);
    CHECK(sched::fold_constants(scalar_unary(ScalarOp::Neg, two))->fvalue == -2.0);
    CHECK_FALSE(sched::has_transcendental(e));
    // Scalar libm calls are expensive; f32 exp, log, tanh, sigmoid are vector math.
    CHECK(sched::has_transcendental(
        scalar_binary(ScalarOp::Add, scalar_unary(ScalarOp::Sin, in), two)));
    CHECK(sched::has_transcendental(scalar_unary(ScalarOp::Exp, scalar_input(0, DType::F64))));
    CHECK_FALSE(sched::has_transcendental(
        scalar_binary(ScalarOp::Add, scalar_unary(ScalarOp::Exp, in), two)));
    // select(c, v, v) is v.
    ScalarExpr flag = scalar_input(1, DType::Bool);
    CHECK(sched::fold_constants(scalar_select(flag, in, in)) == in);
    CHECK(sched::expression_size(e, {}) == 5);
    CHECK(sched::expression_size(e, {10}) == 14);
}

// The primitives at the graph level: result shapes and dtypes of map, reshape, view, reduce,
// fuse, overwrite and stack, and the counter-space access maps of views, each checked against
// hand-derived values (no backend needed).
#include <doctest/doctest.h>

#include "core/library.hpp"
#include "core/primitives.hpp"

using namespace hedra;

namespace {

Array f32(const Shape& s) {
    return array(std::vector<float>(s.size(), 1.0f), s);
}
Array i32(const Shape& s) {
    return array(std::vector<std::int32_t>(s.size(), 1), s);
}

// The access of a View node as (matrix, offsets).
void check_access(const Array& v, const std::vector<std::int64_t>& matrix,
                  const std::vector<std::int64_t>& offsets) {
    REQUIRE(v.node()->kind == NodeKind::View);
    CHECK(v.node()->access.matrix() == matrix);
    CHECK(v.node()->access.offsets() == offsets);
}

} // namespace

TEST_CASE("map: broadcasting aligns from the right") {
    Array a = f32(Shape::of({3, 1})), b = f32(Shape::of({4}));
    Array c = a + b;
    CHECK(c.shape() == Shape::of({3, 4}));
    REQUIRE(c.node()->kind == NodeKind::Map);
    REQUIRE(c.node()->inputs.size() == 2);
    for (const NodePtr& in : c.node()->inputs)
        CHECK(in->shape == Shape::of({3, 4}));
    // a (3,1) read at counters (i, 0); b (4) read at counter j.
    check_access(Array(c.node()->inputs[0]), {1, 0, 0, 0}, {0, 0});
    check_access(Array(c.node()->inputs[1]), {0, 1}, {0});
}

TEST_CASE("map: ranges other than [0,n) broadcast when equal or of size 1") {
    Shape s{range(1, 4), range(0, 8, 2)};
    Array a = f32(s), b = f32(Shape{range(5, 6), range(0, 8, 2)});
    CHECK((a * b).shape() == s);
    CHECK((a + f32(Shape{range(0, 8, 2)})).shape() == s);
    CHECK((a + 1.0f).shape() == s);
}

TEST_CASE("map: dtypes follow promotion and weak literals") {
    Shape s = Shape::of({2});
    Array fa = f32(s), ia = i32(s);
    CHECK((fa + ia).dtype() == DType::F32);
    CHECK((ia + ia).dtype() == DType::I32);
    CHECK((ia * 2).dtype() == DType::I32);   // weak integer literal
    CHECK((ia * 2.0).dtype() == DType::F32); // float literal with integers gives f32
    CHECK((fa * 2.0).dtype() == DType::F32); // weak double keeps f32
    CHECK((ia < ia).dtype() == DType::Bool);
    Array d = array(std::vector<double>{1, 2}, s);
    CHECK((d + fa).dtype() == DType::F64);
    CHECK((fa + constant(1.0, DType::F64)).dtype() == DType::F64); // constants are strong
}

TEST_CASE("map: several outputs share their inputs") {
    Array a = f32(Shape::of({2, 3})), b = f32(Shape::of({3}));
    auto outs = lazy_multiple_value(
        [](Sym x, Sym y) { return std::make_tuple(x + y, x * y, x < y); }, a, b);
    REQUIRE(outs.size() == 3);
    CHECK(outs[0].shape() == Shape::of({2, 3}));
    CHECK(outs[2].dtype() == DType::Bool);
    CHECK(outs[0].node()->inputs == outs[1].node()->inputs);
    CHECK(outs[0].node() != outs[1].node());
}

TEST_CASE("map: any number of operands and literal-only maps") {
    std::vector<Operand> ops;
    for (int i = 0; i < 5; ++i)
        ops.emplace_back(f32(Shape::of({2, i == 0 ? 3 : 1})));
    Array s =
        lazy_n_ary([](const std::vector<Sym>& x) { return x[0] + x[1] + x[2] + x[3] + x[4]; }, ops);
    CHECK(s.shape() == Shape::of({2, 3}));
    Array k = lazy([](Sym x) { return x + 1; }, 2.0);
    CHECK(k.shape() == Shape());
    CHECK(k.node()->inputs.empty());
}

TEST_CASE("reshape by transform: permute, shift, stride, reverse, unit axes") {
    Array a = f32(Shape::of({2, 3}));
    Array p = reshape(a, Transform::permutation({1, 0}));
    CHECK(p.shape() == Shape::of({3, 2}));
    check_access(p, {0, 1, 1, 0}, {0, 0});
    Array s = reshape(a, Transform::shift({1, -1}));
    CHECK(s.shape() == Shape{range(1, 3), range(-1, 2)});
    check_access(s, {1, 0, 0, 1}, {0, 0});
    Array st = reshape(a, Transform::scaling({1, 2}));
    CHECK(st.shape() == Shape{range(2), range(0, 6, 2)});
    Array rev = reshape(a, Transform::scaling({1, -1}));
    CHECK(rev.shape() == Shape{range(2), range(-2, 1)});
    check_access(rev, {1, 0, 0, -1}, {0, 2}); // result counter k reads 2 - k
    Array unit = reshape(a, Transform(2, {{0, 1, 0}, {-1, 1, 5}, {1, 1, 0}}));
    CHECK(unit.shape() == Shape{range(2), range(5, 6), range(3)});
    check_access(unit, {1, 0, 0, 0, 0, 1}, {0, 0});
    Array dropped =
        reshape(unit, Transform(3, {{0, 1, 0}, {2, 1, 0}}, {std::nullopt, 5, std::nullopt}));
    CHECK(dropped.node() == a.node());
}

TEST_CASE("reshape by shape: move, broadcast, select") {
    Array a = f32(Shape::of({4}));
    Array moved = reshape(a, Shape{range(1, 5)});
    CHECK(moved.shape() == Shape{range(1, 5)});
    check_access(moved, {1}, {0});
    Array b = reshape(f32(Shape::of({1, 3})), Shape::of({2, 3}));
    check_access(b, {0, 0, 0, 1}, {0, 0});
    Array lead = reshape(f32(Shape::of({3})), Shape::of({2, 3}));
    CHECK(lead.shape() == Shape::of({2, 3}));
    check_access(lead, {0, 1}, {0});
    Array sel = reshape(f32(Shape::of({10})), Shape{range(2, 9, 3)});
    CHECK(sel.shape().size() == 3);
    check_access(sel, {3}, {2});
    Array strided = reshape(f32(Shape{range(0, 10, 2)}), Shape{range(2, 8, 2)});
    check_access(strided, {1}, {1});
    Array one = reshape(f32(Shape::of({10})), Shape{range(7, 8)});
    check_access(one, {0}, {7});
}

TEST_CASE("view: diagonals, windows and strided sources in counter space") {
    Array a = f32(Shape::of({3, 3}));
    Array diag = view(a, Shape::of({3}), AffineMap(1, 2, {1, 1}, {0, 0}));
    CHECK(diag.shape() == Shape::of({3}));
    check_access(diag, {1, 1}, {0, 0});
    Array x = f32(Shape::of({6}));
    Array win = view(x, Shape::of({4, 3}), AffineMap(2, 1, {1, 1}, {0}));
    CHECK(win.shape() == Shape::of({4, 3}));
    check_access(win, {1, 1}, {0});
    Array s = f32(Shape{range(0, 12, 2)});
    Array v = view(s, Shape::of({3}), AffineMap(1, 1, {4}, {2})); // indices 2, 6, 10
    check_access(v, {2}, {1});
    Array shifted = view(f32(Shape::of({6, 6})), Shape{range(1, 5), range(1, 5)},
                         AffineMap(2, 2, {1, 0, 0, 1}, {-1, 0}));
    check_access(shifted, {1, 0, 0, 1}, {0, 1});
    Array empty = view(a, Shape::of({0, 4}), AffineMap(2, 2, {100, 0, 0, 100}, {50, 50}));
    CHECK(empty.shape().empty());
    CHECK(broadcast_to(f32(Shape::of({3, 1})), Shape::of({2, 3, 4})).shape() ==
          Shape::of({2, 3, 4}));
}

TEST_CASE("reduce: result shapes and sorted axes") {
    Array a = f32(Shape::of({2, 3, 4}));
    CHECK(reduce(ReduceOp::Sum, a, {0, 2}).shape() == Shape::of({3}));
    CHECK(reduce(ReduceOp::Sum, a, {2, 0}, true).shape() == Shape::of({1, 3, 1}));
    CHECK(reduce(ReduceOp::Sum, a, {2, 0}).node()->axes == std::vector<int>{0, 2});
    CHECK(reduce(ReduceOp::Max, a, {-1}).shape() == Shape::of({2, 3}));
    CHECK(reduce(ReduceOp::Min, a).shape() == Shape());
    CHECK(reduce(ReduceOp::Sum, a, {}, true).shape() == Shape::of({1, 1, 1}));
    Array s = f32(Shape{range(1, 9, 2), range(3)});
    CHECK(reduce(ReduceOp::Sum, s, {1}).shape() == Shape{range(1, 9, 2)});
    Array r0 = constant(2.0);
    CHECK(reduce(ReduceOp::Sum, r0).node() == r0.node());
}

TEST_CASE("reduce: dtypes, with explicit conversion maps") {
    Shape s = Shape::of({2, 3});
    Array i = i32(s), f = f32(s), b = i < 2;
    CHECK(reduce(ReduceOp::Sum, i).dtype() == DType::I64);
    CHECK(reduce(ReduceOp::Prod, b).dtype() == DType::I64);
    CHECK(reduce(ReduceOp::Sum, f).dtype() == DType::F32);
    CHECK(reduce(ReduceOp::Max, i).dtype() == DType::I32);
    CHECK(reduce(ReduceOp::And, f, {1}).dtype() == DType::Bool);
    CHECK(reduce(ReduceOp::Or, b, {0}).dtype() == DType::Bool);
    for (Array r : {reduce(ReduceOp::Sum, i, {0}), reduce(ReduceOp::Or, f, {0})}) {
        REQUIRE(r.node()->kind == NodeKind::Reduce);
        const NodePtr& in = r.node()->inputs.at(0);
        CHECK(in->dtype == r.dtype());
        CHECK(in->kind == NodeKind::Map); // the conversion
    }
    CHECK(reduce(ReduceOp::Sum, f, {0}).node()->inputs.at(0) == f.node());
}

TEST_CASE("reduce: a custom combiner with its identity") {
    Array a = f32(Shape::of({2, 5}));
    Array r = reduce([](Sym acc, Sym x) { return max(acc, abs(x)); }, 0.0, a, {1});
    CHECK(r.shape() == Shape::of({2}));
    REQUIRE(r.node()->kind == NodeKind::Reduce);
    CHECK(r.node()->reduce_op == ReduceOp::Custom);
    REQUIRE(r.node()->identity.get() != nullptr);
    CHECK(r.node()->identity->op == ScalarOp::Const);
    CHECK(r.node()->identity->dtype == DType::F32);
    CHECK(scalar_num_inputs(r.node()->expr) == 2);
    Array r0 = reduce([](Sym acc, Sym x) { return acc + x; }, 1.0, constant(2.0));
    CHECK(r0.node()->kind == NodeKind::Map); // rank 0: identity combined with the element
}

TEST_CASE("fuse: halves, interleaved strides, and dropped empty pieces") {
    Array l = f32(Shape{range(4), range(2)}), r = f32(Shape{range(4), range(2, 4)});
    Array lr = fuse({l, r});
    CHECK(lr.shape() == Shape::of({4, 4}));
    CHECK(lr.node()->kind == NodeKind::Fuse);
    CHECK_FALSE(lr.node()->overwrite);
    Array even = f32(Shape{range(0, 8, 2)}), odd = f32(Shape{range(1, 8, 2)});
    CHECK(fuse({even, odd}).shape() == Shape::of({8}));
    Array none = f32(Shape{range(3, 3)});
    CHECK(fuse({even, none, odd}).node()->inputs.size() == 2);
    CHECK(fuse({l}).node() == l.node());
    // Many pieces: the sweep finds no overlap quickly.
    std::vector<Array> rows;
    for (int i = 0; i < 2000; ++i)
        rows.push_back(f32(Shape{range(i, i + 1), range(3)}));
    CHECK(fuse(rows).shape() == Shape::of({2000, 3}));
}

TEST_CASE("overwrite: the rightmost piece wins, union is the hull") {
    Array u = f32(Shape::of({6, 6}));
    Array inner = f32(Shape{range(1, 5), range(1, 5)});
    Array o = overwrite({u, inner});
    CHECK(o.shape() == Shape::of({6, 6}));
    CHECK(o.node()->overwrite);
    CHECK(o.node()->inputs.size() == 2);
    // Overlapping halves that cover a box.
    Array a = f32(Shape{range(0, 5)}), b = f32(Shape{range(3, 8)});
    CHECK(overwrite({a, b}).shape() == Shape::of({8}));
    // Strided pieces covering a box together.
    Array e = f32(Shape{range(0, 10, 2)}), all = f32(Shape{range(1, 10, 2)});
    CHECK(overwrite({e, all, f32(Shape{range(4, 7)})}).shape() == Shape::of({10}));
}

TEST_CASE("stack: a new axis with indices 0..n-1") {
    Array a = f32(Shape::of({2, 3})), b = f32(Shape::of({2, 3})), c = f32(Shape::of({2, 3}));
    CHECK(stack(0, {a, b, c}).shape() == Shape::of({3, 2, 3}));
    CHECK(stack(1, {a, b, c}).shape() == Shape::of({2, 3, 3}));
    CHECK(stack(-1, {a, b, c}).shape() == Shape::of({2, 3, 3}));
    CHECK(stack(2, {a, b}).shape() == Shape::of({2, 3, 2}));
    CHECK(stack(0, {a}).shape() == Shape::of({1, 2, 3}));
    Array s = stack(0, {a, b});
    REQUIRE(s.node()->kind == NodeKind::Fuse);
    CHECK(s.node()->inputs[1]->shape == Shape{range(1, 2), range(2), range(3)});
    CHECK(stack(0, {f32(Shape::of({0})), f32(Shape::of({0}))}).shape() == Shape::of({2, 0}));
}

TEST_CASE("index components and leaves") {
    Array i = index_components(Shape{range(1, 5), range(3)}, 0);
    CHECK(i.dtype() == DType::I64);
    CHECK(i.shape() == Shape{range(1, 5), range(3)});
    CHECK(index_components(Shape::of({2, 3}), -1).node()->axis == 1);
    Array p = placeholder(Shape::of({3}), DType::I32, "x");
    CHECK(p.node()->kind == NodeKind::Placeholder);
    CHECK(p.node()->name == "x");
    CHECK(p.dtype() == DType::I32);
    HostArray h = HostArray::from(std::vector<float>{1, 2, 3, 4, 5, 6}, {6});
    Array d = array(h, Shape{range(2), range(1, 4)});
    CHECK(d.node()->data.sizes() == std::vector<std::int64_t>{2, 3});
    CHECK(d.node()->data.raw() == h.raw()); // shared, not copied
    std::vector<double> host{1, 2};
    Array borrowed = array(host.data(), Shape::of({2}), Ownership::Borrow);
    CHECK(borrowed.node()->data.raw() == host.data());
    CHECK(full(Shape::of({2, 2}), 3.0, DType::I32).dtype() == DType::I32);
}

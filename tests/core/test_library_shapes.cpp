// Library functions at the graph level: operators' dtypes, matmul's NumPy shape rules and its
// structure (views, a map, a sum: no materialized product), transpose, pad, flatten/unflatten,
// rebase and the named reductions, each against hand-derived shapes.
#include <doctest/doctest.h>

#include "core/library.hpp"

using namespace hedra;

namespace {

template <class T = float>
Array leaf(const Shape& s) {
    return array(std::vector<T>(static_cast<std::size_t>(s.size()), T(1)), s);
}

} // namespace

TEST_CASE("library: elementwise dtypes") {
    Shape s = Shape::of({2, 2});
    Array f = leaf(s), i = leaf<std::int32_t>(s), d = leaf<double>(s);
    CHECK((f + i).dtype() == DType::F32);
    CHECK((i / i).dtype() == DType::I32);
    CHECK((i >= 1).dtype() == DType::Bool);
    CHECK((f != d).dtype() == DType::Bool);
    CHECK(exp(i).dtype() == DType::F32);
    CHECK(sqrt(d).dtype() == DType::F64);
    CHECK(abs(i).dtype() == DType::I32);
    CHECK(relu(i).dtype() == DType::I32);
    CHECK(relu(f).dtype() == DType::F32);
    CHECK(where(f > 0, f, 0).dtype() == DType::F32);
    CHECK(where(i > 0, d, i).dtype() == DType::F64);
    CHECK(maximum(i, d).dtype() == DType::F64);
    CHECK(pow(f, 2).dtype() == DType::F32);
    CHECK(cast(f, DType::I64).dtype() == DType::I64);
    CHECK(cast(f, DType::F32).node() == f.node());
    CHECK((-f).shape() == s);
    CHECK(tanh(f).shape() == s);
    CHECK(sigmoid(f).shape() == s);
    CHECK(log(f).shape() == s);
}

TEST_CASE("library: named reductions") {
    Array a = leaf(Shape::of({2, 3, 4}));
    CHECK(sum(a).shape() == Shape());
    CHECK(sum(a, {1}).shape() == Shape::of({2, 4}));
    CHECK(max(a, {0, -1}, true).shape() == Shape::of({1, 3, 1}));
    CHECK(min(a, {2}).shape() == Shape::of({2, 3}));
    CHECK(mean(a, {1}).dtype() == DType::F32);
    CHECK(mean(leaf<std::int32_t>(Shape::of({4}))).dtype() == DType::F32);
    CHECK(mean(leaf<double>(Shape::of({4}))).dtype() == DType::F64);
    CHECK(sum(leaf<std::int32_t>(Shape::of({4}))).dtype() == DType::I64);
}

TEST_CASE("library: matmul shapes follow NumPy") {
    auto mm = [](std::vector<std::int64_t> x, std::vector<std::int64_t> y) {
        return matmul(leaf(Shape::of(x)), leaf(Shape::of(y))).shape();
    };
    CHECK(mm({3, 4}, {4, 5}) == Shape::of({3, 5}));
    CHECK(mm({4}, {4, 5}) == Shape::of({5}));
    CHECK(mm({3, 4}, {4}) == Shape::of({3}));
    CHECK(mm({4}, {4}) == Shape());
    CHECK(mm({2, 3, 4}, {4, 5}) == Shape::of({2, 3, 5}));
    CHECK(mm({3, 4}, {2, 4, 5}) == Shape::of({2, 3, 5}));
    CHECK(mm({2, 1, 3, 4}, {5, 4, 6}) == Shape::of({2, 5, 3, 6}));
    CHECK(mm({4}, {2, 4, 5}) == Shape::of({2, 5}));
    CHECK(mm({2, 3, 4}, {4}) == Shape::of({2, 3}));
    CHECK(mm({3, 0}, {0, 5}) == Shape::of({3, 5}));
}

TEST_CASE("library: matmul keeps the operands' ranges and dtypes") {
    Array a = leaf(Shape{range(1, 4), range(2, 6)});
    Array b = leaf(Shape{range(0, 8, 2), range(5, 10)});
    CHECK(matmul(a, b).shape() == Shape{range(1, 4), range(5, 10)});
    Shape s = Shape::of({2, 2});
    CHECK(matmul(leaf<std::int32_t>(s), leaf<std::int32_t>(s)).dtype() == DType::I32);
    CHECK(matmul(leaf(s), leaf<double>(s)).dtype() == DType::F64);
    CHECK(matmul(leaf<bool>(s), leaf<bool>(s)).dtype() == DType::Bool);
    CHECK(matmul(leaf<std::int64_t>(s), leaf<std::int64_t>(s)).dtype() == DType::I64);
}

TEST_CASE("library: matmul is views, a map and a sum") {
    Array a = leaf(Shape::of({3, 4})), b = leaf(Shape::of({4, 5}));
    Array c = matmul(a, b);
    REQUIRE(c.node()->kind == NodeKind::Reduce);
    CHECK(c.node()->reduce_op == ReduceOp::Sum);
    CHECK(c.node()->axes == std::vector<int>{2});
    const NodePtr& product = c.node()->inputs.at(0);
    REQUIRE(product->kind == NodeKind::Map);
    CHECK(product->shape == Shape::of({3, 5, 4}));
    REQUIRE(product->inputs.size() == 2);
    // Each operand is read through one view of the leaf: a[i, k] and b[k, j].
    const NodePtr &va = product->inputs[0], &vb = product->inputs[1];
    REQUIRE(va->kind == NodeKind::View);
    REQUIRE(vb->kind == NodeKind::View);
    CHECK(va->inputs.at(0) == a.node());
    CHECK(vb->inputs.at(0) == b.node());
    CHECK(va->access.matrix() == std::vector<std::int64_t>{1, 0, 0, 0, 0, 1});
    CHECK(vb->access.matrix() == std::vector<std::int64_t>{0, 0, 1, 0, 1, 0});
    CHECK(matmul(a, b).node() == c.node());
}

TEST_CASE("library: transpose") {
    Array a = leaf(Shape::of({2, 3, 4}));
    CHECK(transpose(a).shape() == Shape::of({4, 3, 2}));
    CHECK(transpose(a, {1, 0, 2}).shape() == Shape::of({3, 2, 4}));
    CHECK(transpose(a, {-1, 0, 1}).shape() == Shape::of({4, 2, 3}));
    CHECK(transpose(a, {0, 1, 2}).node() == a.node());
    CHECK(transpose(leaf(Shape{range(1, 3), range(0, 6, 2)})).shape() ==
          Shape{range(0, 6, 2), range(1, 3)});
}

TEST_CASE("library: pad extends the index space on both sides") {
    Array a = leaf(Shape::of({3, 4}));
    Array p = pad(a, {{1, 2}, {0, 1}}, 0.0);
    CHECK(p.shape() == Shape{range(-1, 5), range(0, 5)});
    CHECK(p.dtype() == DType::F32);
    REQUIRE(p.node()->kind == NodeKind::Fuse);
    CHECK(p.node()->overwrite);
    CHECK(pad(a, {{0, 0}, {0, 0}}).node() == a.node());
    CHECK(pad(leaf(Shape{range(0, 8, 2)}), {{1, 1}}).shape() == Shape{range(-2, 10, 2)});
    CHECK(rebase(p).shape() == Shape::of({6, 5}));
}

TEST_CASE("library: flatten and unflatten") {
    Array a = leaf(Shape::of({2, 3, 4}));
    Array all = flatten(a);
    CHECK(all.shape() == Shape::of({24}));
    REQUIRE(all.node()->kind == NodeKind::Fuse);
    CHECK(all.node()->inputs.size() == 6); // one piece per index of the first two axes
    CHECK(flatten(a, 1, 2).shape() == Shape::of({2, 12}));
    CHECK(flatten(a, 0, 1).shape() == Shape::of({6, 4}));
    CHECK(flatten(a, 1, 1).node() == a.node());
    CHECK(flatten(leaf(Shape::of({2, 0, 3}))).shape() == Shape::of({0}));
    Array u = unflatten(leaf(Shape::of({2, 12})), 1, {3, 4});
    CHECK(u.shape() == Shape::of({2, 3, 4}));
    REQUIRE(u.node()->kind == NodeKind::View);
    CHECK(u.node()->access.matrix() == std::vector<std::int64_t>{1, 0, 0, 0, 4, 1});
    CHECK(unflatten(all, 0, {2, 3, 4}).shape() == a.shape());
    CHECK(unflatten(leaf(Shape::of({6})), -1, {6, 1}).shape() == Shape::of({6, 1}));
}

TEST_CASE("library: rebase moves the index space to [0,n)") {
    Array a = leaf(Shape{range(1, 5), range(0, 8, 2)});
    Array r = rebase(a);
    CHECK(r.shape() == Shape::of({4, 4}));
    REQUIRE(r.node()->kind == NodeKind::View);
    CHECK(r.node()->access.is_identity());
    CHECK(rebase(leaf(Shape::of({3}))).node()->kind == NodeKind::Data);
}

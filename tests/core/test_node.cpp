// The lazy graph's nodes: hash-consing (equal graphs are one object, different data leaves are
// not), deterministic hashes, topological order, the listing, memoized results, and interning
// from several threads at once.
#include <doctest/doctest.h>

#include <set>
#include <thread>

#include "core/library.hpp"
#include "core/node.hpp"
#include "core/primitives.hpp"

using namespace hedra;

namespace {

Array data(std::vector<float> v, const Shape& s) {
    return array(v, s);
}

} // namespace

TEST_CASE("node: equal graphs built twice are the same node") {
    Array a = data({1, 2, 3, 4, 5, 6}, Shape::of({2, 3}));
    Array b = data({1, 2, 3}, Shape::of({3}));
    auto build = [&] { return sum(exp(a * b + 1.0f), {1}); };
    Array x = build(), y = build();
    CHECK(x.node() == y.node());
    CHECK(x.node()->hash == y.node()->hash);
    // Same structure written differently: a lambda and the operator give the same map.
    Array z = lazy([](Sym p, Sym q) { return p + q; }, a, b);
    CHECK(z.node() == (a + b).node());
}

TEST_CASE("node: data leaves with equal contents are different nodes") {
    Array a = data({1, 2, 3}, Shape::of({3}));
    Array b = data({1, 2, 3}, Shape::of({3}));
    CHECK(a.node() != b.node());
    CHECK(a.node()->id != b.node()->id);
    CHECK((a + 1.0f).node() != (b + 1.0f).node());
    Array p = placeholder(Shape::of({3}), DType::F32, "p");
    Array q = placeholder(Shape::of({3}), DType::F32, "p");
    CHECK(p.node() != q.node());
}

TEST_CASE("node: constants are interned by value and dtype") {
    CHECK(constant(2.0).node() == constant(2.0).node());
    CHECK(constant(2.0).node() != constant(3.0).node());
    CHECK(constant(2.0, DType::F32).node() != constant(2.0, DType::F64).node());
    CHECK(full(Shape::of({2, 2}), 1.0).node() == ones(Shape::of({2, 2})).node());
    CHECK(full(Shape::of({2, 2}), 0.0).node() == zeros(Shape::of({2, 2})).node());
    CHECK(zeros(Shape::of({2, 2})).node() != zeros(Shape::of({2, 3})).node());
}

TEST_CASE("node: creation site is not part of identity") {
    Array a = data({1, 2}, Shape::of({2}));
    const unsigned line = __LINE__ + 1;
    Array x = reshape(a, Shape::of({3, 2}));
    Array y = reshape(a, Shape::of({3, 2}));
    CHECK(x.node() == y.node());
    CHECK(y.node()->loc.line() == line); // the first creator's site
}

TEST_CASE("node: payload differences make different nodes") {
    Array a = data({1, 2, 3, 4, 5, 6}, Shape::of({2, 3}));
    CHECK(sum(a, {0}).node() != sum(a, {1}).node());
    CHECK(sum(a, {0}).node() != sum(a, {0}, true).node());
    CHECK(sum(a).node() != max(a).node());
    CHECK(index_components(Shape::of({2, 3}), 0).node() !=
          index_components(Shape::of({2, 3}), 1).node());
    CHECK(transpose(a).node() != a.node());
    CHECK(overwrite({a, a + 1.0f}).node() == (a + 1.0f).node()); // hidden piece dropped
    Array l = reshape(a, Shape{range(2), range(2)}), r = reshape(a, Shape{range(2), range(2, 3)});
    CHECK(fuse({l, r}).node() == fuse({l, r}).node());
    CHECK(fuse({l, r}).node() != fuse({r, l}).node());
}

TEST_CASE("node: views compose and identity views vanish") {
    Array a = data({1, 2, 3, 4, 5, 6}, Shape::of({2, 3}));
    CHECK(transpose(transpose(a)).node() == a.node());
    Array t = transpose(a);
    CHECK(t.node()->kind == NodeKind::View);
    Array tt = reshape(t, Transform::shift({1, 1}));
    CHECK(tt.node()->kind == NodeKind::View);
    CHECK(tt.node()->inputs.at(0) == a.node()); // one view, not a chain
    CHECK(reshape(a, Transform::identity(2)).node() == a.node());
    CHECK(reshape(a, Shape::of({2, 3})).node() == a.node());
}

TEST_CASE("node: maps drop unused operands and merge repeated ones") {
    Array a = data({1, 2, 3}, Shape::of({3}));
    Array b = data({4, 5, 6}, Shape::of({3}));
    Array sq = a * a;
    REQUIRE(sq.node()->kind == NodeKind::Map);
    CHECK(sq.node()->inputs.size() == 1);
    Array first = lazy([](Sym x, Sym) { return x * 2.0f; }, a, b);
    CHECK(first.node()->inputs.size() == 1);
    CHECK(first.node() == (a * 2.0f).node());
    CHECK(lazy([](Sym, Sym y) { return y; }, a, b).node() == b.node());
}

TEST_CASE("node: hashes are deterministic functions of structure") {
    Array c1 = constant(1.5), c2 = constant(1.5);
    CHECK(c1.node()->hash == c2.node()->hash);
    // Structurally equal graphs over the same leaf hash equally however they were reached.
    Array a = data({1, 2, 3, 4}, Shape::of({4}));
    std::size_t h1 = (a * 3.0f).node()->hash;
    std::size_t h2 = lazy([](Sym x) { return x * 3.0f; }, a).node()->hash;
    CHECK(h1 == h2);
}

TEST_CASE("node: topological order lists inputs before users, each once") {
    Array a = data({1, 2, 3}, Shape::of({3}));
    Array b = exp(a);
    Array c = b + b * a;
    Array d = sum(c);
    auto order = topological_order({d.node(), c.node()});
    std::set<const Node*> seen;
    for (const NodePtr& n : order) {
        for (const NodePtr& in : n->inputs)
            CHECK(seen.count(in.get()) == 1);
        CHECK(seen.insert(n.get()).second);
    }
    CHECK(order.back() == d.node());
    CHECK(seen.count(a.node().get()) == 1);
    // Deterministic: the same order again.
    CHECK(topological_order({d.node(), c.node()}) == order);
}

TEST_CASE("node: to_string lists every node") {
    Array a = data({1, 2, 3, 4, 5, 6}, Shape::of({2, 3}));
    Array s = sum(a * 2.0f, {1});
    std::string text = to_string({s.node()});
    CHECK(text.find("data") != std::string::npos);
    CHECK(text.find("map") != std::string::npos);
    CHECK(text.find("reduce sum axes [1]") != std::string::npos);
    CHECK(text.find("f32 (2)") != std::string::npos);
    CHECK(text.find("outputs: %2") != std::string::npos);
}

TEST_CASE("node: memo is shared by equal arrays") {
    Array a = data({1, 2, 3}, Shape::of({3}));
    Array x = a * 5.0f, y = a * 5.0f;
    CHECK_FALSE(x.value().has_value());
    x.node()->set_memo(HostArray::from(std::vector<float>{5, 10, 15}, {3}));
    REQUIRE(y.value().has_value());
    CHECK(y.value()->at({2}) == 15.0);
    CHECK(to_string({y.node()}).find("(computed)") != std::string::npos);
}

TEST_CASE("node: describe names dtype, shape, kind and site") {
    Array a = data({1, 2}, Shape{range(1, 3)});
    std::string d = a.describe();
    CHECK(d.find("f32 ([1,3)) data at test_node.cpp:") == 0);
    Array e;
    CHECK_FALSE(e.valid());
}

TEST_CASE("node: interning from several threads gives one node per structure") {
    Array a = data({1, 2, 3, 4}, Shape::of({4}));
    std::vector<NodePtr> got(8);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
        threads.emplace_back([&, t] {
            NodePtr last;
            for (int i = 0; i < 200; ++i)
                last = sum(exp(a * static_cast<float>(i % 7))).node();
            got[t] = last;
        });
    for (auto& th : threads)
        th.join();
    for (int t = 1; t < 8; ++t)
        CHECK(got[t] == got[0]);
}

TEST_CASE("node: many short-lived nodes do not disturb interning") {
    Array b = data({1, 2}, Shape::of({2}));
    NodePtr kept = (b + 1.0f).node();
    for (int i = 0; i < 5000; ++i)
        (void)(b + static_cast<float>(i + 2)); // expire at once
    CHECK((b + 1.0f).node() == kept);
    CHECK((b + 2.0f).node() != kept);
}

TEST_CASE("node: dropping a very long lazy chain does not overflow the stack") {
    Array leaf = data({1, 2}, Shape::of({2}));
    {
        Array x = leaf;
        for (int i = 0; i < 200000; ++i)
            x = x + 1.0f;
        CHECK(topological_order({x.node()}).size() == 200001);
    } // the chain is released here, iteratively
    CHECK((leaf + 1.0f).node()->inputs.at(0) == leaf.node());
}

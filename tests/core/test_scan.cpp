// scan's graph: the step traced once into a closed body (its closures cut out as inputs of the
// Scan node), the shapes of its results, and the errors for a scan that cannot run.
#include <doctest/doctest.h>

#include "hedra.hpp"

using namespace hedra;

namespace {

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

ScanStep add_step(const std::vector<Array>& c, const std::vector<Array>& x) {
    return {{c[0] + x[0]}, {c[0] * 2.0f}};
}

} // namespace

TEST_CASE("scan: the step is traced once, its closures become inputs of the Scan node") {
    Array w = placeholder(Shape::of({4, 4}), DType::F32, "w");
    Array xs = placeholder(Shape::of({10, 3, 4}), DType::F32, "xs");
    int traced = 0;
    ScanResult r = scan(
        [&](const std::vector<Array>& c, const std::vector<Array>& x) {
            ++traced;
            Array h = tanh(matmul(c[0], w) + x[0] + 1.0f); // 1.0f stays in the body
            return ScanStep{{h}, {h, sum(h, {1})}};
        },
        {zeros(Shape::of({3, 4}))}, {xs});
    CHECK(traced == 1);
    CHECK(r.carries[0].shape() == Shape::of({3, 4}));
    CHECK(r.ys[0].shape() == Shape::of({10, 3, 4}));
    CHECK(r.ys[1].shape() == Shape::of({10, 3}));
    CHECK(r.states[0].shape() == Shape::of({10, 3, 4}));
    const NodePtr& out = r.carries[0].node();
    REQUIRE(out->kind == NodeKind::ScanOutput);
    const NodePtr& s = out->inputs.at(0);
    REQUIRE(s->kind == NodeKind::Scan);
    const ScanBody& b = *s->body;
    CHECK(b.carries == 1);
    CHECK(b.xs == 1);
    CHECK(b.closures() == 1); // w; the constant 1 is recomputed in the step
    CHECK(s->inputs.at(2) == w.node());
    CHECK(b.steps.size == 10);
    // The body reads nothing from outside but its placeholders.
    for (const NodePtr& n : topological_order(b.outputs))
        if (n->kind == NodeKind::Placeholder)
            CHECK(std::find(b.params.begin(), b.params.end(), n) != b.params.end());
    // Every component of one scan reads the same Scan node (views of it for stacked ones).
    const NodePtr& y1 = r.ys[1].node();
    REQUIRE(y1->kind == NodeKind::ScanOutput);
    CHECK(y1->inputs.at(0) == s);
    CHECK(y1->component == b.carries + 1);
}

TEST_CASE("scan: stacked results follow the scan axis; a length without scanned arrays") {
    Array xs = ones(Shape::of({2, 5, 3}));
    ScanResult r = scan(add_step, {zeros(Shape::of({2, 3}))}, {xs}, 1);
    CHECK(r.ys[0].shape() == Shape::of({2, 5, 3}));
    CHECK(compute(r.carries[0]).flat(0) == 5.0);
    ScanOptions o;
    o.length = 4;
    ScanResult count = scan(
        [](const std::vector<Array>& c, const std::vector<Array>&) {
            return ScanStep{{c[0] + 1}, {c[0]}};
        },
        {zeros(Shape(), DType::I64)}, {}, 0, o);
    CHECK(count.ys[0].shape() == Shape::of({4}));
    HostArray v = compute(count.ys[0]);
    CHECK(v.flat(3) == 3.0);
    CHECK(compute(count.carries[0]).flat(0) == 4.0);
}

TEST_CASE("scan: errors name the operation, the shapes and what to do") {
    Array xs = ones(Shape::of({6, 3}));
    Array c0 = zeros(Shape::of({3}));
    std::string e = error_of([&] {
        scan(
            [](const std::vector<Array>& c, const std::vector<Array>& x) {
                return ScanStep{{reshape(c[0], Shape::of({1, 3})) + x[0]}, {}};
            },
            {c0}, {xs});
    });
    CHECK(e.find("scan: the step changes carry 0") != std::string::npos);
    CHECK(e.find("(1,3)") != std::string::npos);
    e = error_of([&] {
        scan(
            [](const std::vector<Array>& c, const std::vector<Array>& x) {
                return ScanStep{{cast(c[0], DType::F64) + x[0]}, {}};
            },
            {c0}, {xs});
    });
    CHECK(e.find("keeps its shape and dtype") != std::string::npos);
    e = error_of([&] { scan(add_step, {c0}, {xs}, 2); });
    CHECK(e.find("scan: axis 2 out of range") != std::string::npos);
    e = error_of([&] { scan(add_step, {c0}, {xs, ones(Shape::of({5, 3}))}); });
    CHECK(e.find("differ in length") != std::string::npos);
    e = error_of([&] { scan(add_step, {c0}, {}); });
    CHECK(e.find("ScanOptions::length") != std::string::npos);
    e = error_of([&] { scan(add_step, {c0}, {ones(Shape::of({0, 3}))}); });
    CHECK(e.find("no steps") != std::string::npos);
    e = error_of([&] {
        scan(
            [](const std::vector<Array>&, const std::vector<Array>& x) {
                return ScanStep{{}, {x[0]}};
            },
            {c0}, {xs});
    });
    CHECK(e.find("returned 0 carries but the scan has 1") != std::string::npos);
    e = error_of([&] { scan(add_step, {c0}, {constant(1.0f)}); });
    CHECK(e.find("rank 0") != std::string::npos);
}

TEST_CASE("reduce over axes of one element each is a view of the element") {
    Array x = placeholder(Shape::of({4, 1, 3}), DType::F32, "x");
    Array s = sum(x, {1});
    CHECK(s.node()->kind == NodeKind::View);
    CHECK(s.shape() == Shape::of({4, 3}));
    Array kept = sum(x, {1}, true);
    CHECK(kept.node() == x.node()); // keeping the axis: the array itself
    CHECK(kept.shape() == Shape::of({4, 1, 3}));
    CHECK(sum(x, {0}).node()->kind == NodeKind::Reduce);
    Array b = sum(ones(Shape::of({2, 1}), DType::Bool), {1}); // promoted: i64
    CHECK(b.dtype() == DType::I64);
    HostArray v = compute(b);
    CHECK(v.flat(0) == 1.0);
    HostArray in =
        compute(reshape(index_components(Shape::of({4, 1, 3}), 2), Shape::of({4, 1, 3})));
    CHECK(compute(sum(cast(array(in), DType::F32), {1})).flat(5) == 2.0);
}

// scan's adjoint (a scan the other way over the stored carries): finite differences through an
// Elman recurrence with respect to its inputs, first carry and closed-over weights; the
// dot-product identity for a linear recurrence; reverse scans, several carries, the carries of
// every step in the loss, an integer carry; a scan inside a scan's step; and second order.
#include "ad_test_util.hpp"

using namespace hedra;
using namespace hedra::test;

namespace {

// h_t = tanh(x_t Wx + h_{t-1} Wh + b); loss = sum(ys^2) + sum(h_T).
Array elman_loss(const std::vector<Array>& p, bool reverse) {
    ScanOptions o;
    o.reverse = reverse;
    const Array &xs = p.at(0), &h0 = p.at(1), &wx = p.at(2), &wh = p.at(3), &b = p.at(4);
    ScanResult r = scan(
        [&](const std::vector<Array>& c, const std::vector<Array>& x) {
            Array h = tanh(matmul(x[0], wx) + matmul(c[0], wh) + b);
            return ScanStep{{h}, {h * 0.5}};
        },
        {h0}, {xs}, 0, o);
    return sum(r.ys[0] * r.ys[0]) + sum(r.carries[0]);
}

std::vector<Array> elman_point() {
    return {random_array(Shape::of({5, 3, 4}), 1), random_array(Shape::of({3, 6}), 2),
            random_array(Shape::of({4, 6}), 3, -0.5, 0.5),
            random_array(Shape::of({6, 6}), 4, -0.5, 0.5), random_array(Shape::of({6}), 5)};
}

} // namespace

TEST_CASE("finite differences: an Elman recurrence, forward and reverse, every input") {
    for (bool reverse : {false, true}) {
        CAPTURE(reverse);
        HEDRA_CHECK_GRADIENT(check_gradient(
            [&](const std::vector<Array>& p) { return elman_loss(p, reverse); }, elman_point()));
    }
}

TEST_CASE("dot-product identity: a linear recurrence in its inputs and first carry") {
    Array a = random_array(Shape::of({4}), 6);
    auto f = [&](const std::vector<Array>& x) {
        auto [c, ys] = scan(
            [&](const Array& c, const Array& xt) {
                Array n = c * a + xt;
                return std::pair{n, n * 3.0};
            },
            x.at(1), x.at(0));
        return ys + reshape(c, Shape::of({1, 4}));
    };
    HEDRA_CHECK_GRADIENT(check_linear(
        f, {zeros(Shape::of({7, 4}), DType::F64), zeros(Shape::of({4}), DType::F64)}, exact(7)));
}

TEST_CASE("finite differences: two carries, the carries of every step, an integer step count") {
    auto f = [&](const std::vector<Array>& p) {
        ScanResult r = scan(
            [&](const std::vector<Array>& c, const std::vector<Array>& x) {
                Array step = c[2] + 1; // i64: no gradient
                Array a = c[0] * sigmoid(c[1]) + x[0] * cast(step, DType::F64) * 0.1;
                Array b = c[1] - x[1] * a;
                return ScanStep{{a, b, step}, {a * b}};
            },
            {p.at(0), p.at(1), zeros(Shape::of({3}), DType::I64)}, {p.at(2), p.at(3)});
        return sum(r.ys[0]) + sum(r.states[0] * r.states[1]) + sum(r.carries[1] * r.carries[1]);
    };
    HEDRA_CHECK_GRADIENT(check_gradient(
        f, {random_array(Shape::of({3}), 8), random_array(Shape::of({3}), 9),
            random_array(Shape::of({6, 3}), 10), random_array(Shape::of({6, 3}), 11)}));
}

TEST_CASE("finite differences: a scan inside a scan's step, and the gradient of a gradient") {
    auto inner_outer = [&](const std::vector<Array>& p) {
        const Array w = p.at(1);
        auto [total, rows] = scan(
            [&](const Array& c, const Array& row) {
                auto [s, partial] = scan(
                    [&](const Array& a, const Array& v) {
                        Array n = tanh(a * w + v);
                        return std::pair{n, n};
                    },
                    c, row);
                return std::pair{s, sum(partial)};
            },
            zeros(Shape(), DType::F64), p.at(0));
        return total * 2.0 + sum(rows * rows);
    };
    HEDRA_CHECK_GRADIENT(check_gradient(
        inner_outer, {random_array(Shape::of({3, 4}), 12), random_array(Shape(), 13)}));

    auto second = [&](const std::vector<Array>& p) {
        Array xs = p.at(0);
        Array g = grad(elman_loss({xs, p.at(1), p.at(2), p.at(3), p.at(4)}, false), xs);
        return sum(g * g);
    };
    GradientCheckOptions o;
    o.rtol = 1e-5;
    HEDRA_CHECK_GRADIENT(check_gradient(second, elman_point(), o));
}

TEST_CASE("checkpointed scans: the same values and gradients, segments recomputed") {
    std::vector<Array> p = elman_point();
    auto loss = [&](const std::vector<Array>& q, std::int64_t checkpoint) {
        ScanOptions o;
        o.checkpoint = checkpoint;
        ScanResult r = scan(
            [&](const std::vector<Array>& c, const std::vector<Array>& x) {
                Array h = tanh(matmul(x[0], q[2]) + matmul(c[0], q[3]) + q[4]);
                return ScanStep{{h}, {h * 0.5}};
            },
            {q[1]}, {q[0]}, 0, o);
        CHECK(r.ys[0].shape() == Shape::of({6, 3, 6}));
        CHECK(r.states[0].shape() == Shape::of({6, 3, 6}));
        return sum(r.ys[0] * r.ys[0]) + sum(r.carries[0]) + sum(r.states[0]) * 0.25;
    };
    p[0] = random_array(Shape::of({6, 3, 4}), 14);
    Array plain = loss(p, 0), segmented = loss(p, 3);
    std::vector<Array> g0 = grad(plain, p), g1 = grad(segmented, p);
    CHECK(compute(plain).flat(0) == doctest::Approx(compute(segmented).flat(0)).epsilon(1e-12));
    for (std::size_t i = 0; i < p.size(); ++i) {
        std::vector<double> a = values_of(g0[i]), b = values_of(g1[i]);
        REQUIRE(a.size() == b.size());
        for (std::size_t j = 0; j < a.size(); ++j)
            CHECK(a[j] == doctest::Approx(b[j]).epsilon(1e-10));
    }
    HEDRA_CHECK_GRADIENT(
        check_gradient([&](const std::vector<Array>& q) { return loss(q, 2); }, p));
    std::string error;
    try {
        loss(p, 4);
    } catch (const Error& e) {
        error = e.what();
    }
    CHECK(error.find("checkpoint 4 needs a static number of steps that it divides") !=
          std::string::npos);
}

TEST_CASE("adjoint structure: slices of one array join into one overwrite; unflatten is undone") {
    // Four slices of one (3, 8) array, each used twice: one padded array of their cotangents,
    // not one zero-padded copy per use.
    Array g = placeholder(Shape::of({3, 8}), DType::F64, "g");
    Array loss = constant(0.0, DType::F64);
    for (std::int64_t k = 0; k < 4; ++k) {
        Array part = view(g, Shape::of({3, 2}), AffineMap(2, 2, {1, 0, 0, 1}, {0, 2 * k}));
        loss = loss + sum(tanh(part) * part) + sum(sigmoid(part));
    }
    Array d = grad(loss, g);
    int fuses = 0;
    for (const NodePtr& n : topological_order({d.node()}))
        fuses += n->kind == NodeKind::Fuse;
    CHECK(fuses == 1);
    HEDRA_CHECK_GRADIENT(check_gradient(
        [&](const std::vector<Array>& x) {
            Array l = constant(0.0, DType::F64);
            for (std::int64_t k = 0; k < 4; ++k) {
                Array part =
                    view(x[0], Shape::of({3, 2}), AffineMap(2, 2, {1, 0, 0, 1}, {0, 2 * k}));
                l = l + sum(tanh(part) * part) + sum(sigmoid(part));
            }
            return l;
        },
        {random_array(Shape::of({3, 8}), 15)}));

    // The adjoint of unflatten is a flatten (pieces moved), not a window gather with a sum.
    Array x = placeholder(Shape::of({12, 3}), DType::F64, "x");
    Array u = unflatten(x, 0, {4, 3});
    Array dx = grad(sum(u * u), x);
    for (const NodePtr& n : topological_order({dx.node()}))
        CHECK(n->kind != NodeKind::Reduce);
    HEDRA_CHECK_GRADIENT(check_linear(
        [](const std::vector<Array>& v) {
            return unflatten(v[0], 0, {4, 3});
        },
        {zeros(Shape::of({12, 3}), DType::F64)}, exact(16)));
}

TEST_CASE("adjoint structure: the reverse step reads the forward step's tanh, stored") {
    // The forward scan stores its tanh values (as it stores its contractions) for the reverse
    // scan, whose step then evaluates no tanh of its own; finite differences above check the
    // values.
    std::vector<Array> p = elman_point();
    std::vector<Array> d = grad(elman_loss(p, false), {p[2], p[3]});
    auto has_tanh = [](const ScalarExpr& e) {
        std::vector<ScalarExpr> stack{e};
        while (!stack.empty()) {
            ScalarExpr x = stack.back();
            stack.pop_back();
            if (!x) continue;
            if (x->op == ScalarOp::Tanh) return true;
            stack.insert(stack.end(), x->args.begin(), x->args.end());
        }
        return false;
    };
    int reverse_scans = 0;
    for (const NodePtr& n : topological_order({d[0].node(), d[1].node()})) {
        if (n->kind != NodeKind::Scan) continue;
        bool any = false;
        for (const NodePtr& m : topological_order(n->body->outputs))
            any = any || (m->kind == NodeKind::Map && has_tanh(m->expr));
        // The forward scans (the loss's, and the one extended with what it stores, which the
        // scheduler merges) evaluate tanh; the reverse scan does not.
        CHECK(any == !n->body->reverse);
        reverse_scans += n->body->reverse;
    }
    CHECK(reverse_scans == 1);
}

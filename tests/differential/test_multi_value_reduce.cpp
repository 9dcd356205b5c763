// reduce_multiple_value: several arrays reduced together by an associative combiner of tuples
// (argmax as (value, index), Welford's mean and variance, logsumexp in one pass), against naive
// loops, on the reference backend, and openmp against it (the differential harness). The cuda
// backend refuses it (tests/cuda/test_emulation.cpp).
#include "differential/differential.hpp"

#include <cmath>
#include <limits>

using namespace hedra;
using test::check_differential;

namespace {

// argmax along `axis` as one pass: (value, index), ties and NaN as NumPy.
std::vector<Array> value_and_index(const Array& a, int axis) {
    Array idx = index_components(a.shape(), axis);
    return reduce_multiple_value(
        [](const std::vector<Sym>& acc, const std::vector<Sym>& x) {
            // x wins when larger, or NaN where acc is not; ties keep the lower index.
            Sym better = (x[0] > acc[0]) || (x[0] != x[0] && acc[0] == acc[0]);
            Sym tie = x[0] == acc[0] && x[1] < acc[1];
            Sym take = better || tie;
            return std::vector<Sym>{select(take, x[0], acc[0]), select(take, x[1], acc[1])};
        },
        {-std::numeric_limits<double>::infinity(), 0}, {a, idx}, {axis});
}

} // namespace

TEST_CASE("reduce_multiple_value: argmax as (value, index) in one pass") {
    Array x = test::random_array(Shape::of({7, 33}), 41);
    Array t = where(x > 0.3f, 0.3f, x); // many ties
    for (int axis : {0, 1}) {
        CAPTURE(axis);
        std::vector<Array> r = value_and_index(t, axis);
        auto got =
            compute(std::vector<Array>{r[0], r[1], argmax(t, axis)}, test::on_backend("reference"));
        CHECK(test::flat_values(got[1]) == test::flat_values(got[2]));
        HostArray tv = compute(t);
        std::int64_t outer = axis == 0 ? 33 : 7, len = axis == 0 ? 7 : 33;
        for (std::int64_t o = 0; o < outer; ++o) {
            std::int64_t best = 0;
            auto at = [&](std::int64_t q) {
                return axis == 0 ? tv.flat(q * 33 + o) : tv.flat(o * 33 + q);
            };
            for (std::int64_t q = 1; q < len; ++q)
                if (at(q) > at(best)) best = q;
            CHECK(got[1].flat(o) == static_cast<double>(best));
            CHECK(got[0].flat(o) == at(best));
        }
    }
}

TEST_CASE("reduce_multiple_value: Welford mean and variance, and logsumexp, in one pass") {
    Array x = array(test::random_values(1000, 42, -3, 3), Shape::of({5, 200}));
    Array ones = full(x.shape(), 1.0, DType::F64);
    Array xd = cast(x, DType::F64);
    // (count, mean, M2): the parallel-combination form of Welford's update for one element.
    std::vector<Array> w = reduce_multiple_value(
        [](const std::vector<Sym>& acc, const std::vector<Sym>& e) {
            Sym n = acc[0] + e[0];
            Sym delta = e[1] - acc[1];
            Sym mean = acc[1] + delta * e[0] / n;
            Sym m2 = acc[2] + e[2] + delta * delta * acc[0] * e[0] / n;
            return std::vector<Sym>{n, mean, m2};
        },
        {0, 0, 0}, {ones, xd, full(x.shape(), 0.0, DType::F64)}, {1});
    // (max, sum of exp(x - max)) with rescaling: logsumexp = max + log(sum).
    std::vector<Array> l = reduce_multiple_value(
        [](const std::vector<Sym>& acc, const std::vector<Sym>& e) {
            Sym m = max(acc[0], e[0]);
            return std::vector<Sym>{m, acc[1] * exp(acc[0] - m) + e[1] * exp(e[0] - m)};
        },
        {-std::numeric_limits<double>::infinity(), 0}, {x, full(x.shape(), 1.0)}, {1});
    Array lse = l[0] + log(l[1]);
    check_differential({w[0], w[1], w[2], lse}, test::Compare::Tolerance, {1e-6, 1e-6});
    auto r = compute(std::vector<Array>{w[1], w[2], lse}, test::on_backend("reference"));
    HostArray xv = compute(x);
    for (std::int64_t i = 0; i < 5; ++i) {
        double mean = 0, m2 = 0, mx = -1e300, s = 0;
        for (std::int64_t j = 0; j < 200; ++j)
            mean += xv.flat(i * 200 + j) / 200;
        for (std::int64_t j = 0; j < 200; ++j) {
            double d = xv.flat(i * 200 + j) - mean;
            m2 += d * d;
            mx = std::max(mx, xv.flat(i * 200 + j));
        }
        for (std::int64_t j = 0; j < 200; ++j)
            s += std::exp(xv.flat(i * 200 + j) - mx);
        CHECK(r[0].flat(i) == doctest::Approx(mean).epsilon(1e-12));
        CHECK(r[1].flat(i) == doctest::Approx(m2).epsilon(1e-10));
        CHECK(r[2].flat(i) == doctest::Approx(mx + std::log(s)).epsilon(1e-6));
    }
}

TEST_CASE("reduce_multiple_value: errors name the operation and the shapes") {
    Array a = test::random_array(Shape::of({3, 4}), 43), b = test::random_array(Shape::of({4}), 44);
    auto f = [](const std::vector<Sym>& acc, const std::vector<Sym>& x) {
        return std::vector<Sym>{acc[0] + x[0], acc[1] + x[1]};
    };
    CHECK_THROWS_WITH_AS(reduce_multiple_value(f, {0, 0}, {a, b}, {1}),
                         doctest::Contains("array 1 has shape (4) but array 0 has shape (3,4)"),
                         Error);
    CHECK_THROWS_WITH_AS(reduce_multiple_value(f, {0}, {a, a}, {1}),
                         doctest::Contains("give one of each per array"), Error);
}

TEST_CASE(
    "reduce_multiple_value: graph files, and gradients (an index none, a selected value max's)") {
    Array x = test::random_array(Shape::of({4, 6}), 45);
    std::vector<Array> r = value_and_index(x, 1);
    // A graph file holds it: the loaded graph computes the same index and value.
    std::string text = save_graph(std::vector<Array>{r[1], r[0]});
    std::vector<Array> back = load_graph(text).output_arrays();
    REQUIRE(back.size() == 2);
    CHECK(test::flat_values(compute(back[0])) == test::flat_values(compute(r[1])));
    CHECK(test::flat_values(compute(back[1])) == test::flat_values(compute(r[0])));
    GraphLoadOptions same_ids;
    same_ids.keep_ids = true; // the very same nodes, so the same bytes
    CHECK(save_graph(load_graph(text, "<graph>", same_ids).outputs) == text);
    // A damaged one is refused with the file's position.
    std::string bad = text;
    bad.replace(bad.find("\"component\": 0"), 14, "\"component\": 7");
    CHECK_THROWS_WITH_AS(load_graph(bad), doctest::Contains("'component' is 7"), Error);
    // The index has no gradient; a loss that selects with it differentiates through x only.
    Array picked = where(index_components(x.shape(), 1) == unflatten(r[1], 0, {4, 1}), x, 0.0f);
    HostArray g = compute(grad(sum(picked * picked), x), test::on_backend("reference"));
    HostArray xv = compute(x), iv = compute(r[1], test::on_backend("reference"));
    for (std::int64_t i = 0; i < 4; ++i)
        for (std::int64_t j = 0; j < 6; ++j)
            CHECK(g.flat(i * 6 + j) == (iv.flat(i) == j ? 2 * xv.flat(i * 6 + j) : 0.0));
    // The value selects its accumulator or its element: max's gradient (no ties here).
    HostArray gv = compute(grad(sum(r[0] * r[0]), x), test::on_backend("reference"));
    HostArray gm = compute(grad(sum(max(x, {1}) * max(x, {1})), x), test::on_backend("reference"));
    CHECK(test::flat_values(gv) == test::flat_values(gm));
    check_differential({grad(sum(r[0] * r[0]), x)});
    // A component that combines (logsumexp's scaled sum) has no rule.
    std::vector<Array> l = reduce_multiple_value(
        [](const std::vector<Sym>& acc, const std::vector<Sym>& e) {
            Sym m = max(acc[0], e[0]);
            return std::vector<Sym>{m, acc[1] * exp(acc[0] - m) + e[1] * exp(e[0] - m)};
        },
        {-1e30, 0}, {x, x * 0.0f + 1.0f}, {1});
    CHECK_THROWS_WITH_AS(grad(sum(l[1]), x), doctest::Contains("not differentiable"), Error);
}

TEST_CASE("reduction identities of integer arrays saturate at the dtype's range") {
    // INT64_MAX has no double: 2^63, the nearest, must not convert to 0 (out of range), which
    // would be the minimum of these positive values and the maximum of these negative ones.
    Array pos = array(std::vector<std::int64_t>{5, 3, 7}, Shape::of({3}));
    Array neg = array(std::vector<std::int64_t>{-5, -3, -7}, Shape::of({3}));
    Array lowest = reduce([](Sym acc, Sym x) { return min(acc, x); },
                          static_cast<double>(std::numeric_limits<std::int64_t>::max()), pos);
    std::vector<Array> r = reduce_multiple_value(
        [](const std::vector<Sym>& acc, const std::vector<Sym>& x) {
            return std::vector<Sym>{min(acc[0], x[0]), max(acc[1], x[1])};
        },
        {1e300, -1e300}, {pos, neg}, {0});
    auto got = compute(std::vector<Array>{lowest, r[0], r[1]}, test::on_backend("reference"));
    CHECK(got[0].flat(0) == 3);
    CHECK(got[1].flat(0) == 3);
    CHECK(got[2].flat(0) == -3);
    check_differential({lowest, r[0], r[1]});
    CHECK_THROWS_WITH_AS(reduce([](Sym acc, Sym x) { return acc + x; }, std::nan(""), pos),
                         doctest::Contains("the identity of an i64 array is NaN"), Error);
}

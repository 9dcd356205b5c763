// Differential: reductions over each axis and several axes (sum, prod, max, min, and, or,
// custom), integer sums exactly, float sums within a tolerance, keepdims, shifted shapes.
#include "differential/differential.hpp"

using namespace hedra;
using test::check_differential;
using test::Compare;

TEST_CASE("differential: float reductions over every axis") {
    Array x = test::random_array(Shape::of({5, 7, 33}), 11);
    for (int axis : {0, 1, 2}) {
        CAPTURE(axis);
        check_differential({sum(x, {axis}), mean(x, {axis}, true)}, Compare::Tolerance);
        check_differential({max(x, {axis}), min(x, {axis})}); // exact: order-independent
        check_differential({reduce(ReduceOp::Prod, x + 1.5f, {axis})}, Compare::Tolerance);
    }
    check_differential({sum(x, {0, 2}), sum(x), max(x, {1, 2}, true)}, Compare::Tolerance);
}

TEST_CASE("differential: integer and bool reductions are exact") {
    Array a = array(test::random_ints(7 * 1000, 12, -1000, 1000), Shape::of({7, 1000}));
    check_differential({sum(a, {1}), sum(a, {0}), max(a, {0}), min(a), sum(a * a)});
    Array b = a > 0;
    check_differential({reduce(ReduceOp::And, b, {1}), reduce(ReduceOp::Or, b, {0})});
}

TEST_CASE("differential: custom reduction and reductions of maps on strided shapes") {
    Array x = array(test::random_values(9 * 4, 13), Shape{range(2, 29, 3), range(-1, 3)});
    Array sq = reduce([](auto acc, auto v) { return acc + v * v; }, 0.0, x, {0});
    check_differential({sq, sum(exp(x) * 2.0f, {1}), max(abs(x) - 0.5f, {0, 1})},
                       Compare::Tolerance);
}

TEST_CASE("differential: a reduction of size 1 and an empty-free single element") {
    Array x = test::random_array(Shape::of({1, 1}), 14);
    Array y = test::random_array(Shape::of({1, 7}), 15);
    check_differential({sum(x, {0}), sum(y, {1}), max(y, {0})}, Compare::Tolerance);
}

// take's adjoint (scatter_add) and scatter_add's (take): the dot-product identity in f64 with
// repeated and clamped indices, finite differences through a nonlinear model of an embedding,
// and second order (the adjoint of the adjoint is take again).
#include "ad_test_util.hpp"

using namespace hedra;
using namespace hedra::test;

TEST_CASE("dot-product identity: take and scatter_add with repeated indices, any axis") {
    // Index 2 appears three times, 0 never: the adjoint sums three rows into one, none into 0.
    Array ids = array(std::vector<std::int32_t>{2, 4, 2, 1, 2, 3}, Shape::of({2, 3}));
    Shape table = Shape::of({5, 4});
    HEDRA_CHECK_GRADIENT(
        check_linear([&](const std::vector<Array>& x) { return take(x.at(0), ids); },
                     {zeros(table, DType::F64)}, exact(1)));
    HEDRA_CHECK_GRADIENT(
        check_linear([&](const std::vector<Array>& x) { return take(x.at(0), ids, 1); },
                     {zeros(Shape::of({3, 5, 2}), DType::F64)}, exact(2)));
    HEDRA_CHECK_GRADIENT(check_linear(
        [&](const std::vector<Array>& x) { return scatter_add(x.at(0), ids, 0, table); },
        {zeros(Shape::of({2, 3, 4}), DType::F64)}, exact(3)));
    // Computed indices outside the axis are clamped on both sides of the identity.
    Array wild = index_components(Shape::of({6}), 0) * 2 - 3; // -3 .. 7 on an axis of 5
    HEDRA_CHECK_GRADIENT(
        check_linear([&](const std::vector<Array>& x) { return take(x.at(0), wild); },
                     {zeros(table, DType::F64)}, exact(4)));
}

TEST_CASE("finite differences: an embedding, a nonlinearity and a loss over the taken rows") {
    Array ids = array(std::vector<std::int64_t>{1, 0, 1, 3, 3, 3}, Shape::of({3, 2}));
    auto f = [&](const std::vector<Array>& x) {
        Array e = take(x.at(0), ids);      // (3, 2, 4)
        Array h = tanh(e * x.at(1) + 0.5); // x[1]: (4,)
        return sum(h * h);
    };
    HEDRA_CHECK_GRADIENT(
        check_gradient(f, {random_array(Shape::of({4, 4}), 5), random_array(Shape::of({4}), 6)}));
}

TEST_CASE("second order: the derivative of a gradient that went through scatter_add") {
    Array ids = array(std::vector<std::int32_t>{0, 2, 2}, Shape::of({3}));
    auto f = [&](const std::vector<Array>& x) {
        Array t = x.at(0);
        Array g = grad(sum(exp(take(t, ids))), t); // scatter_add of exp(rows)
        return sum(g * g);
    };
    HEDRA_CHECK_GRADIENT(check_gradient(f, {random_array(Shape::of({3, 2}), 7)}));
}

// The public gradient checkers: they pass on correct gradients and catch wrong ones (a
// stop_gradient that changes the derivative, a non-linear function given to check_linear).
#include "ad_test_util.hpp"

using namespace hedra;
using namespace hedra::test;

TEST_CASE("check_gradient passes on a smooth function, with f32 inputs converted to f64") {
    Array x = array(std::vector<float>{0.5f, -1.0f, 2.0f}, Shape{range(1, 4)});
    GradientCheckResult r = check_gradient(
        [](const std::vector<Array>& a) {
            CHECK(a[0].dtype() == DType::F64);
            CHECK(a[0].shape() == Shape{range(1, 4)});
            return sum(exp(a[0]) * a[0]);
        },
        {x});
    CHECK(r.ok);
    CHECK(r.error <= 1e-8 * std::abs(r.analytic));
    CHECK(r.to_string().find(": ok") != std::string::npos);
}

TEST_CASE("check_gradient catches a wrong derivative, also for non-scalar outputs") {
    Array x = random_array(Shape::of({2, 3}), 1);
    // stop_gradient hides half of the derivative of x²: the analytic value is half the true one.
    GradientCheckResult r =
        check_gradient([](const std::vector<Array>& a) { return stop_gradient(a[0]) * a[0]; }, {x});
    CHECK_FALSE(r.ok);
    CHECK(r.analytic == doctest::Approx(r.numeric / 2).epsilon(1e-6));
    CHECK(r.to_string().find("MISMATCH") != std::string::npos);
}

TEST_CASE("check_linear: exact for linear functions, fails for non-linear ones") {
    Shape s = Shape::of({3, 2});
    HEDRA_CHECK_GRADIENT(check_linear(
        [](const std::vector<Array>& a) { return transpose(a[0]) * 2.0 - transpose(a[1]); },
        {zeros(s, DType::F64), zeros(s, DType::F64)}, exact()));
    GradientCheckResult r = check_linear([](const std::vector<Array>& a) { return a[0] * a[0]; },
                                         {zeros(s, DType::F64)}, exact());
    CHECK_FALSE(r.ok);
}

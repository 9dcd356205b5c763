// The derivative rule of every scalar operation, checked on the scalar IR alone: the cotangent
// expressions from scalar_vjp are evaluated and compared with central differences of the
// expression itself (f64), plus the documented subgradient conventions at kinks.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include "ad/scalar_derivative.hpp"

using namespace hedra;

namespace {

ScalarValue f64(double v) {
    return ScalarValue::of(v, DType::F64);
}
ScalarExpr x0() {
    return scalar_input(0, DType::F64);
}
ScalarExpr x1() {
    return scalar_input(1, DType::F64);
}

// d expr / d input k at `point`, from the rule (cotangent 1) and from central differences.
std::pair<double, double> both(const ScalarExpr& e, std::vector<double> point, int k) {
    const int n = static_cast<int>(point.size());
    auto bars = ad::scalar_vjp(e, scalar_input(n, e->dtype), n);
    std::vector<ScalarValue> in;
    for (double v : point)
        in.push_back(f64(v));
    in.push_back(ScalarValue::of(1.0, e->dtype));
    double rule = bars[k] ? evaluate(bars[k], in).as_double() : 0.0;
    const double h = 1e-6;
    auto at = [&](double dx) {
        std::vector<ScalarValue> p;
        for (int i = 0; i < n; ++i)
            p.push_back(f64(point[i] + (i == k ? dx : 0.0)));
        return evaluate(e, p).as_double();
    };
    return {rule, (at(h) - at(-h)) / (2 * h)};
}

void check_rule(const ScalarExpr& e, std::vector<double> point) {
    for (int k = 0; k < static_cast<int>(point.size()); ++k) {
        auto [rule, numeric] = both(e, point, k);
        INFO(to_string(e) << " input " << k);
        CHECK(rule == doctest::Approx(numeric).epsilon(1e-6));
    }
}

double rule_at(const ScalarExpr& e, std::vector<double> point, int k) {
    return both(e, std::move(point), k).first;
}

} // namespace

TEST_CASE("scalar_vjp: unary rules match central differences") {
    for (ScalarOp op :
         {ScalarOp::Neg, ScalarOp::Abs, ScalarOp::Exp, ScalarOp::Tanh, ScalarOp::Sigmoid})
        for (double v : {-1.3, -0.2, 0.7, 2.1})
            check_rule(scalar_unary(op, x0()), {v});
    for (ScalarOp op : {ScalarOp::Log, ScalarOp::Sqrt})
        for (double v : {0.3, 1.0, 2.5})
            check_rule(scalar_unary(op, x0()), {v});
}

TEST_CASE("scalar_vjp: binary rules match central differences") {
    for (ScalarOp op : {ScalarOp::Add, ScalarOp::Sub, ScalarOp::Mul, ScalarOp::Div, ScalarOp::Min,
                        ScalarOp::Max}) {
        check_rule(scalar_binary(op, x0(), x1()), {0.7, -1.9});
        check_rule(scalar_binary(op, x0(), x1()), {-2.3, 0.4});
    }
    check_rule(scalar_binary(ScalarOp::Pow, x0(), x1()), {1.7, 2.3});
    check_rule(scalar_binary(ScalarOp::Pow, x0(), x1()), {0.4, -0.6});
    check_rule(scalar_binary(ScalarOp::Pow, x0(), scalar_const(3.0, DType::F64)), {-1.2});
}

TEST_CASE("scalar_vjp: select, casts and shared subexpressions") {
    ScalarExpr cond = scalar_binary(ScalarOp::Gt, x0(), x1());
    ScalarExpr sel = scalar_select(cond, scalar_binary(ScalarOp::Mul, x0(), x0()),
                                   scalar_unary(ScalarOp::Exp, x1()));
    check_rule(sel, {1.5, 0.5});
    check_rule(sel, {-1.5, 0.5});
    // f64 -> f32 -> f64 round trip: derivative 1 (up to f32 rounding of the value).
    ScalarExpr rt = scalar_cast(scalar_cast(x0(), DType::F32), DType::F64);
    CHECK(rule_at(rt, {0.3}, 0) == 1.0);
    // A shared node used twice: x*exp(x) + exp(x)/y.
    ScalarExpr ex = scalar_unary(ScalarOp::Exp, x0());
    ScalarExpr e = scalar_binary(ScalarOp::Add, scalar_binary(ScalarOp::Mul, x0(), ex),
                                 scalar_binary(ScalarOp::Div, ex, x1()));
    check_rule(e, {0.4, 1.7});
    // Nested: tanh(sigmoid(x) * sqrt(y)) - log(y) * x.
    ScalarExpr n = scalar_binary(
        ScalarOp::Sub,
        scalar_unary(ScalarOp::Tanh,
                     scalar_binary(ScalarOp::Mul, scalar_unary(ScalarOp::Sigmoid, x0()),
                                   scalar_unary(ScalarOp::Sqrt, x1()))),
        scalar_binary(ScalarOp::Mul, scalar_unary(ScalarOp::Log, x1()), x0()));
    check_rule(n, {-0.8, 2.2});
}

TEST_CASE("scalar_vjp: subgradient conventions at kinks") {
    ScalarExpr zero = scalar_const(0.0, DType::F64);
    // max/min ties split the cotangent evenly.
    CHECK(rule_at(scalar_binary(ScalarOp::Max, x0(), x1()), {1.0, 1.0}, 0) == 0.5);
    CHECK(rule_at(scalar_binary(ScalarOp::Max, x0(), x1()), {1.0, 1.0}, 1) == 0.5);
    CHECK(rule_at(scalar_binary(ScalarOp::Min, x0(), x1()), {1.0, 1.0}, 0) == 0.5);
    // max(x, x) = x has derivative 1.
    CHECK(rule_at(scalar_binary(ScalarOp::Max, x0(), x0()), {0.3}, 0) == 1.0);
    // relu = max(x, 0): 0.5 at 0; select(x > 0, x, 0): 0 at 0.
    CHECK(rule_at(scalar_binary(ScalarOp::Max, x0(), zero), {0.0}, 0) == 0.5);
    CHECK(rule_at(scalar_select(scalar_binary(ScalarOp::Gt, x0(), zero), x0(), zero), {0.0}, 0) ==
          0.0);
    // abs'(0) = 0.
    CHECK(rule_at(scalar_unary(ScalarOp::Abs, x0()), {0.0}, 0) == 0.0);
    // pow(0, y): d/dy taken as 0.
    CHECK(rule_at(scalar_binary(ScalarOp::Pow, x0(), x1()), {0.0, 2.0}, 1) == 0.0);
}

TEST_CASE("scalar_vjp: piecewise-constant operations have no cotangent") {
    auto bars = ad::scalar_vjp(scalar_cast(scalar_binary(ScalarOp::Lt, x0(), x1()), DType::F64),
                               scalar_input(2, DType::F64), 2);
    CHECK(bars[0] == nullptr);
    CHECK(bars[1] == nullptr);
    bars = ad::scalar_vjp(scalar_cast(scalar_cast(x0(), DType::I64), DType::F64),
                          scalar_input(1, DType::F64), 1);
    CHECK(bars[0] == nullptr);
    // An integer input of a float expression gets no cotangent.
    ScalarExpr i = scalar_input(1, DType::I64);
    bars = ad::scalar_vjp(scalar_binary(ScalarOp::Mul, x0(), scalar_cast(i, DType::F64)),
                          scalar_input(2, DType::F64), 2);
    CHECK(bars[0] != nullptr);
    CHECK(bars[1] == nullptr);
    // f32 expression of an f64 input: the cotangent comes back as f64.
    ScalarExpr f = scalar_unary(ScalarOp::Exp, scalar_cast(x0(), DType::F32));
    bars = ad::scalar_vjp(f, scalar_input(1, DType::F32), 1);
    REQUIRE(bars[0] != nullptr);
    CHECK(bars[0]->dtype == DType::F64);
}

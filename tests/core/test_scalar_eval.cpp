// evaluate() and ScalarValue::of: every operation against hand values for each dtype, including
// wraparound, division by zero, negative powers, NaN, f32 rounding and every cast.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "core/scalar_expr.hpp"
#include "expect_error.hpp"

using namespace hedra;

namespace {

constexpr std::int64_t kI32Min = -2147483648LL, kI32Max = 2147483647LL;
constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

ScalarValue iv(std::int64_t v, DType t) {
    ScalarValue r;
    r.dtype = t;
    r.i = v;
    return r;
}
ScalarValue fv(double v, DType t) {
    ScalarValue r;
    r.dtype = t;
    r.f = v;
    return r;
}

ScalarValue un(ScalarOp op, ScalarValue x) {
    return evaluate(scalar_unary(op, scalar_input(0, x.dtype)), {x});
}
ScalarValue bin(ScalarOp op, ScalarValue a, ScalarValue b) {
    return evaluate(scalar_binary(op, scalar_input(0, a.dtype), scalar_input(1, b.dtype)), {a, b});
}
ScalarValue cast_to(ScalarValue x, DType to) {
    return evaluate(scalar_cast(scalar_input(0, x.dtype), to), {x});
}

std::int64_t i32(ScalarOp op, std::int64_t a, std::int64_t b) {
    ScalarValue r = bin(op, iv(a, DType::I32), iv(b, DType::I32));
    CHECK(r.dtype == (op >= ScalarOp::Lt ? DType::Bool : DType::I32));
    return r.i;
}
std::int64_t i64(ScalarOp op, std::int64_t a, std::int64_t b) {
    return bin(op, iv(a, DType::I64), iv(b, DType::I64)).i;
}
double f32(ScalarOp op, float a, float b) {
    ScalarValue r = bin(op, fv(a, DType::F32), fv(b, DType::F32));
    CHECK(r.dtype == DType::F32);
    return r.f;
}
double f64(ScalarOp op, double a, double b) {
    return bin(op, fv(a, DType::F64), fv(b, DType::F64)).f;
}
bool boolean(ScalarOp op, bool a, bool b) {
    ScalarValue r = bin(op, iv(a, DType::Bool), iv(b, DType::Bool));
    CHECK(r.dtype == DType::Bool);
    return r.i != 0;
}

} // namespace

TEST_CASE("i32 arithmetic wraps, divides toward zero and x/0 == 0") {
    using enum ScalarOp;
    CHECK(i32(Add, kI32Max, 1) == kI32Min);
    CHECK(i32(Sub, kI32Min, 1) == kI32Max);
    CHECK(i32(Mul, 65536, 65536) == 0);
    CHECK(i32(Mul, 46341, 46341) == -2147479015LL);
    CHECK(i32(Mul, -7, 6) == -42);
    CHECK(i32(Div, 7, 2) == 3);
    CHECK(i32(Div, -7, 2) == -3);
    CHECK(i32(Div, 7, -2) == -3);
    CHECK(i32(Div, -7, -2) == 3);
    CHECK(i32(Div, 7, 0) == 0);
    CHECK(i32(Div, kI32Min, -1) == kI32Min);
    CHECK(i32(Pow, 3, 4) == 81);
    CHECK(i32(Pow, -2, 3) == -8);
    CHECK(i32(Pow, 2, -1) == 0);
    CHECK(i32(Pow, 1, -1) == 0);
    CHECK(i32(Pow, 0, 0) == 1);
    CHECK(i32(Pow, 5, 0) == 1);
    CHECK(i32(Pow, 2, 31) == kI32Min);
    CHECK(i32(Pow, 2, 32) == 0);
    CHECK(i32(Pow, 3, 20) == -808182895LL);
    CHECK(i32(Min, -3, 2) == -3);
    CHECK(i32(Max, -3, 2) == 2);
    CHECK(i32(Lt, 1, 2) == 1);
    CHECK(i32(Lt, 2, 2) == 0);
    CHECK(i32(Le, 2, 2) == 1);
    CHECK(i32(Gt, 1, 2) == 0);
    CHECK(i32(Ge, 2, 2) == 1);
    CHECK(i32(Eq, 3, 3) == 1);
    CHECK(i32(Ne, 3, 3) == 0);
    CHECK(un(Neg, iv(5, DType::I32)).i == -5);
    CHECK(un(Neg, iv(kI32Min, DType::I32)).i == kI32Min);
    CHECK(un(Abs, iv(-5, DType::I32)).i == 5);
    CHECK(un(Abs, iv(kI32Min, DType::I32)).i == kI32Min);
}

TEST_CASE("i64 arithmetic wraps") {
    using enum ScalarOp;
    CHECK(i64(Add, kI64Max, 1) == kI64Min);
    CHECK(i64(Sub, kI64Min, 1) == kI64Max);
    CHECK(i64(Mul, std::int64_t{1} << 32, std::int64_t{1} << 32) == 0);
    CHECK(i64(Mul, 3037000500LL, 3037000500LL) == -9223372036709301616LL);
    CHECK(i64(Mul, kI32Max, 2) == 4294967294LL); // no 32-bit wrap in i64
    CHECK(i64(Div, kI64Min, -1) == kI64Min);
    CHECK(i64(Div, -9, 4) == -2);
    CHECK(i64(Div, 9, 0) == 0);
    CHECK(i64(Pow, 2, 62) == 4611686018427387904LL);
    CHECK(i64(Pow, 2, 63) == kI64Min);
    CHECK(i64(Pow, 2, 64) == 0);
    CHECK(i64(Pow, -1, 1000001) == -1);
    CHECK(i64(Pow, 10, -3) == 0);
    CHECK(i64(Pow, 3, 40) == -6289078614652622815LL);
    CHECK(i64(Min, kI64Min, 0) == kI64Min);
    CHECK(i64(Max, kI64Min, 0) == 0);
    CHECK(i64(Ge, kI64Min, kI64Max) == 0);
    CHECK(un(ScalarOp::Neg, iv(kI64Min, DType::I64)).i == kI64Min);
    CHECK(un(ScalarOp::Abs, iv(-kI64Max, DType::I64)).i == kI64Max);
}

TEST_CASE("f32 rounds after every operation") {
    using enum ScalarOp;
    CHECK(f32(Add, 0.1f, 0.2f) == static_cast<double>(0.1f + 0.2f));
    CHECK(f32(Add, 1e8f, 1.0f) == 100000000.0);
    CHECK(f32(Sub, 1.0f, 0.1f) == static_cast<double>(1.0f - 0.1f));
    CHECK(f32(Mul, 1.1f, 1.1f) == static_cast<double>(1.1f * 1.1f));
    CHECK(f32(Div, 1.0f, 3.0f) == static_cast<double>(1.0f / 3.0f));
    CHECK(f32(Div, 1.0f, 3.0f) != 1.0 / 3.0);
    CHECK(f32(Div, 1.0f, 0.0f) == kInf);
    CHECK(std::isnan(f32(Div, 0.0f, 0.0f)));
    CHECK(f32(Pow, 2.0f, 10.0f) == 1024.0);
    CHECK(f32(Pow, 2.0f, 0.5f) == static_cast<double>(static_cast<float>(1.4142135623730951)));
    CHECK(f32(Min, -1.0f, 2.0f) == -1.0);
    CHECK(f32(Max, -1.0f, 2.0f) == 2.0);
    CHECK(std::isnan(f32(Min, 1.0f, std::nanf(""))));
    CHECK(std::isnan(f32(Max, std::nanf(""), 1.0f)));
    CHECK(f32(Add, 3e38f, 3e38f) == kInf);

    auto u = [](ScalarOp op, float x) { return un(op, fv(x, DType::F32)).f; };
    CHECK(u(Neg, 2.5f) == -2.5);
    CHECK(u(Abs, -2.5f) == 2.5);
    CHECK(u(Exp, 0.0f) == 1.0);
    CHECK(u(Exp, 1.0f) == static_cast<double>(static_cast<float>(2.718281828459045)));
    CHECK(u(Log, 1.0f) == 0.0);
    CHECK(std::isnan(u(Log, -1.0f)));
    CHECK(u(Log, 0.0f) == -kInf);
    CHECK(u(Sqrt, 4.0f) == 2.0);
    CHECK(u(Sqrt, 2.0f) == static_cast<double>(std::sqrt(2.0f)));
    CHECK(u(Tanh, 0.0f) == 0.0);
    CHECK(u(Tanh, 100.0f) == 1.0);
    CHECK(u(Sigmoid, 0.0f) == 0.5);
    // f32 sigmoid is f32 math (core/f32_math.hpp): within 2.5 ULP (2^-24 at 0.88).
    CHECK(std::fabs(u(Sigmoid, 2.0f) - 0.8807970779778823) <= 2.5 * std::ldexp(1.0, -24));
}

TEST_CASE("f64 operations") {
    using enum ScalarOp;
    CHECK(f64(Add, 0.1, 0.2) == 0.30000000000000004);
    CHECK(f64(Sub, 0.3, 0.1) == 0.19999999999999998);
    CHECK(f64(Mul, 1.1, 1.1) == 1.2100000000000002);
    CHECK(f64(Div, 1.0, 3.0) == 0.3333333333333333);
    CHECK(f64(Pow, 9.0, 0.5) == 3.0);
    CHECK(f64(Pow, 2.0, -2.0) == 0.25);
    CHECK(f64(Min, 0.5, -0.25) == -0.25);
    CHECK(f64(Max, 0.5, -0.25) == 0.5);
    CHECK(std::isnan(f64(Max, 0.5, kNaN)));
    auto u = [](ScalarOp op, double x) { return un(op, fv(x, DType::F64)).f; };
    CHECK(u(Exp, 1.0) == doctest::Approx(2.718281828459045).epsilon(1e-15));
    CHECK(u(Log, 2.718281828459045) == doctest::Approx(1.0).epsilon(1e-15));
    CHECK(u(Sqrt, 2.0) == 1.4142135623730951);
    CHECK(u(Tanh, 0.5) == doctest::Approx(0.46211715726000974).epsilon(1e-15));
    CHECK(u(Sigmoid, 2.0) == doctest::Approx(0.8807970779778823).epsilon(1e-15));
    CHECK(u(Sigmoid, -1000.0) == 0.0);
    CHECK(u(Abs, -0.0) == 0.0);
    CHECK(u(Neg, 0.1) == -0.1);
}

TEST_CASE("float comparisons, including NaN") {
    using enum ScalarOp;
    auto cmp = [](ScalarOp op, double a, double b) {
        ScalarValue r = bin(op, fv(a, DType::F64), fv(b, DType::F64));
        CHECK(r.dtype == DType::Bool);
        return r.i;
    };
    CHECK(cmp(Lt, 1, 2) == 1);
    CHECK(cmp(Le, 2, 2) == 1);
    CHECK(cmp(Gt, 1, 2) == 0);
    CHECK(cmp(Ge, 1, 2) == 0);
    CHECK(cmp(Eq, 0.0, -0.0) == 1);
    CHECK(cmp(Ne, 1, 2) == 1);
    CHECK(cmp(Eq, kNaN, kNaN) == 0);
    CHECK(cmp(Ne, kNaN, kNaN) == 1);
    CHECK(cmp(Lt, kNaN, 1) == 0);
    CHECK(cmp(Ge, kNaN, 1) == 0);
    CHECK(bin(Lt, fv(1.5f, DType::F32), fv(2.5f, DType::F32)).i == 1);
}

TEST_CASE("bool operations") {
    using enum ScalarOp;
    for (bool a : {false, true})
        for (bool b : {false, true}) {
            CHECK(boolean(And, a, b) == (a && b));
            CHECK(boolean(Or, a, b) == (a || b));
            CHECK(boolean(Add, a, b) == (a || b)); // computed on 0/1, then != 0
            CHECK(boolean(Sub, a, b) == (a != b));
            CHECK(boolean(Mul, a, b) == (a && b));
            CHECK(boolean(Div, a, b) == (a && b));
            CHECK(boolean(Min, a, b) == (a && b));
            CHECK(boolean(Max, a, b) == (a || b));
            CHECK(boolean(Lt, a, b) == (a < b));
            CHECK(boolean(Eq, a, b) == (a == b));
        }
    CHECK(un(Not, iv(1, DType::Bool)).i == 0);
    CHECK(un(Not, iv(0, DType::Bool)).i == 1);
    CHECK(un(Abs, iv(1, DType::Bool)).i == 1);
    // And/Or of other dtypes convert with x != 0.
    CHECK(bin(And, fv(0.5, DType::F64), iv(3, DType::I32)).i == 1);
    CHECK(bin(Or, fv(0.0, DType::F64), iv(0, DType::I32)).i == 0);
}

TEST_CASE("casts behave like C++ casts, with NaN and overflow defined as 0") {
    CHECK(cast_to(fv(2.7, DType::F64), DType::I32).i == 2);
    CHECK(cast_to(fv(-2.7, DType::F64), DType::I32).i == -2);
    CHECK(cast_to(fv(kNaN, DType::F64), DType::I32).i == 0);
    CHECK(cast_to(fv(1e10, DType::F64), DType::I32).i == 0);
    CHECK(cast_to(fv(-2147483648.9, DType::F64), DType::I32).i == kI32Min);
    CHECK(cast_to(fv(2147483647.9, DType::F64), DType::I32).i == kI32Max);
    CHECK(cast_to(fv(2147483648.0, DType::F64), DType::I32).i == 0);
    CHECK(cast_to(fv(1e19, DType::F64), DType::I64).i == 0);
    CHECK(cast_to(fv(-kInf, DType::F64), DType::I64).i == 0);
    CHECK(cast_to(fv(-9.2e18, DType::F64), DType::I64).i == -9200000000000000000LL);
    CHECK(cast_to(fv(0.5, DType::F64), DType::Bool).i == 1);
    CHECK(cast_to(fv(-0.0, DType::F64), DType::Bool).i == 0);
    CHECK(cast_to(fv(kNaN, DType::F64), DType::Bool).i == 1);
    CHECK(cast_to(fv(0.1, DType::F64), DType::F32).f == static_cast<double>(0.1f));
    CHECK(cast_to(fv(1e300, DType::F64), DType::F32).f == kInf);
    CHECK(cast_to(fv(2.5f, DType::F32), DType::I32).i == 2);
    CHECK(cast_to(fv(0.1f, DType::F32), DType::F64).f == static_cast<double>(0.1f));

    CHECK(cast_to(iv((std::int64_t{1} << 32) + 7, DType::I64), DType::I32).i == 7);
    CHECK(cast_to(iv(std::int64_t{1} << 31, DType::I64), DType::I32).i == kI32Min);
    CHECK(cast_to(iv(-1, DType::I64), DType::I32).i == -1);
    // One rounding from i64 to f32 (through f64 it would round twice, to 2^60).
    CHECK(cast_to(iv((std::int64_t{1} << 60) + (std::int64_t{1} << 36) + 1, DType::I64), DType::F32)
              .f == 1152921642045800448.0);
    CHECK(cast_to(iv((std::int64_t{1} << 53) + 1, DType::I64), DType::F64).f == 9007199254740992.0);
    CHECK(cast_to(iv(2, DType::I32), DType::Bool).i == 1);
    CHECK(cast_to(iv(0, DType::I32), DType::Bool).i == 0);
    CHECK(cast_to(iv(-5, DType::I32), DType::I64).i == -5);
    CHECK(cast_to(iv(1, DType::Bool), DType::F32).f == 1.0);
    CHECK(cast_to(iv(1, DType::Bool), DType::I64).i == 1);

    CHECK(ScalarValue::of(2.9, DType::I64).i == 2);
    CHECK(ScalarValue::of(kNaN, DType::I64).i == 0);
    CHECK(ScalarValue::of(3.0, DType::Bool).i == 1);
    CHECK(ScalarValue::of(0.1, DType::F32).f == static_cast<double>(0.1f));
    CHECK(ScalarValue::of(0.1, DType::F32).dtype == DType::F32);
    CHECK(ScalarValue::of(7.0, DType::I32).as_double() == 7.0);
    CHECK(ScalarValue::of(0.1, DType::F64).as_double() == 0.1);
}

TEST_CASE("select, constants and nested expressions") {
    ScalarExpr s = scalar_select(scalar_input(0, DType::Bool), scalar_input(1, DType::I32),
                                 scalar_const_int(-4, DType::I32));
    CHECK(evaluate(s, {iv(1, DType::Bool), iv(9, DType::I32)}).i == 9);
    CHECK(evaluate(s, {iv(0, DType::Bool), iv(9, DType::I32)}).i == -4);
    // (in0:i32 / 2) * 1.5 with promotion: the integer division happens first.
    ScalarExpr e = scalar_binary(
        ScalarOp::Mul,
        scalar_binary(ScalarOp::Div, scalar_input(0, DType::I32), scalar_const_int(2, DType::I32)),
        scalar_const(1.5, DType::F64));
    ScalarValue r = evaluate(e, {iv(7, DType::I32)});
    CHECK(r.dtype == DType::F64);
    CHECK(r.f == 4.5);
    CHECK(evaluate(scalar_const(0.1, DType::F32), {}).f == static_cast<double>(0.1f));
    CHECK(evaluate(scalar_const_int(-3, DType::I64), {}).i == -3);
}

TEST_CASE("evaluate rejects missing or mistyped inputs") {
    ScalarExpr e =
        scalar_binary(ScalarOp::Add, scalar_input(0, DType::F32), scalar_input(1, DType::F32));
    CHECK_ERROR(evaluate(e, {fv(1, DType::F32)}), "evaluate", "input 1", "1 inputs");
    CHECK_ERROR(evaluate(e, {fv(1, DType::F32), fv(1, DType::F64)}), "input 1", "f64", "f32");
    CHECK_ERROR(evaluate(nullptr, {}), "null");
}

// Sym: tracing arithmetic with the weak-literal promotion rule, comparisons, logic, casts, select
// and the math functions, checked on the printed expression and its dtype.
#include <doctest/doctest.h>

#include <tuple>

#include "core/sym.hpp"
#include "expect_error.hpp"

using namespace hedra;

namespace {

Sym var(int k, DType t) {
    return Sym(scalar_input(k, t));
}
std::string str(const Sym& s) {
    return to_string(s.expr());
}

} // namespace

TEST_CASE("literals are weak") {
    Sym f(1.5), i(3), b(true);
    CHECK(f.weak());
    CHECK(i.weak());
    CHECK(b.weak());
    CHECK(f.dtype() == DType::F32);
    CHECK(i.dtype() == DType::I64);
    CHECK(b.dtype() == DType::Bool);
    CHECK(f.literal_value() == 1.5);
    CHECK_FALSE(i.literal_value().has_value());
    CHECK_FALSE(var(0, DType::F32).weak());
    CHECK(Sym(2.5f).dtype() == DType::F32);
    CHECK(Sym(std::int32_t{7}).dtype() == DType::I64);
}

TEST_CASE("a weak literal takes the strong operand's dtype") {
    Sym x = var(0, DType::F32), d = var(0, DType::F64), n = var(0, DType::I32);
    CHECK(str(x * 2.0) == "mul(in0:f32, 2:f32)");
    CHECK(str(2.0 * x) == "mul(2:f32, in0:f32)");
    CHECK(str(x + 1) == "add(in0:f32, 1:f32)");
    CHECK(str(n + 1) == "add(in0:i32, 1:i32)");
    CHECK(str(n - true) == "sub(in0:i32, 1:i32)");
    CHECK(str(d * 0.1) == "mul(in0:f64, 0.1:f64)");
    // The f64 literal keeps its double value (not 0.1 rounded to float).
    CHECK((d * 0.1).expr()->args[1]->fvalue == 0.1);
    CHECK(evaluate((d * 0.1).expr(), {ScalarValue::of(3.0, DType::F64)}).f == 3.0 * 0.1);
    CHECK((x * 2.0).dtype() == DType::F32);
    CHECK_FALSE((x * 2.0).weak());
}

TEST_CASE("a literal of a higher kind promotes") {
    Sym n = var(0, DType::I32), l = var(0, DType::I64), m = var(0, DType::Bool);
    CHECK(str(n * 2.5) == "mul(cast<f32>(in0:i32), 2.5:f32)");
    CHECK(str(l / 2.0) == "div(cast<f32>(in0:i64), 2:f32)");
    CHECK(str(m * 0.5) == "mul(cast<f32>(in0:bool), 0.5:f32)");
    CHECK(str(m + 1) == "add(cast<i64>(in0:bool), 1:i64)");
    CHECK(str(m + true) == "add(in0:bool, true:bool)");
}

TEST_CASE("strong operands promote; weak with weak stays weak") {
    Sym n = var(0, DType::I32), x = var(1, DType::F32), d = var(2, DType::F64);
    CHECK(str(n + x) == "add(cast<f32>(in0:i32), in1:f32)");
    CHECK(str(x * d) == "mul(cast<f64>(in1:f32), in2:f64)");
    CHECK_FALSE((n + x).weak());
    Sym w = Sym(2) * Sym(3.0);
    CHECK(w.weak());
    CHECK(w.dtype() == DType::F32);
    Sym k = Sym(2) + Sym(5);
    CHECK(k.weak());
    CHECK(k.dtype() == DType::I64);
    CHECK(str(n + k) == "add(in0:i32, cast<i32>(add(2:i64, 5:i64)))");
}

TEST_CASE("comparisons give a strong bool") {
    Sym x = var(0, DType::F32), n = var(1, DType::I32);
    Sym c = x < 1;
    CHECK(c.dtype() == DType::Bool);
    CHECK_FALSE(c.weak());
    CHECK(str(c) == "lt(in0:f32, 1:f32)");
    CHECK(str(n >= 2.5) == "ge(cast<f32>(in1:i32), 2.5:f32)");
    CHECK(str(x == n) == "eq(in0:f32, cast<f32>(in1:i32))");
    CHECK(str(x != x) == "ne(in0:f32, in0:f32)");
    CHECK(str(x <= 0) == "le(in0:f32, 0:f32)");
    CHECK(str(0 > x) == "gt(0:f32, in0:f32)");
    Sym lits = Sym(1) < Sym(2);
    CHECK(lits.dtype() == DType::Bool);
    CHECK_FALSE(lits.weak());
}

TEST_CASE("and, or and not convert to bool") {
    Sym x = var(0, DType::F32), n = var(1, DType::I64), b = var(2, DType::Bool);
    CHECK(str(x && n) == "and(cast<bool>(in0:f32), cast<bool>(in1:i64))");
    CHECK(str(b || true) == "or(in2:bool, true:bool)");
    CHECK(str(b && 0.0) == "and(in2:bool, false:bool)");
    CHECK((b && true).dtype() == DType::Bool);
    CHECK_FALSE((b && true).weak());
    CHECK(str(!b) == "not(in2:bool)");
    CHECK(str(!x) == "not(cast<bool>(in0:f32))");
    CHECK(evaluate((!x).expr(), {ScalarValue::of(0.0, DType::F32)}).i == 1);
}

TEST_CASE("unary math") {
    Sym x = var(0, DType::F64), n = var(1, DType::I32);
    CHECK(str(-x) == "neg(in0:f64)");
    CHECK(str(abs(n)) == "abs(in1:i32)");
    CHECK(str(exp(x)) == "exp(in0:f64)");
    CHECK(str(log(n)) == "log(cast<f32>(in1:i32))");
    CHECK(str(sqrt(x)) == "sqrt(in0:f64)");
    CHECK(str(tanh(x)) == "tanh(in0:f64)");
    CHECK(str(sigmoid(x)) == "sigmoid(in0:f64)");
    CHECK((-Sym(2.0)).weak());
    CHECK_FALSE((-x).weak());
    CHECK_ERROR(-var(0, DType::Bool), "'neg'", "bool");
}

TEST_CASE("min, max and pow with literals") {
    Sym x = var(0, DType::F32), n = var(1, DType::I64);
    CHECK(str(max(x, 0)) == "max(in0:f32, 0:f32)");
    CHECK(str(min(1.0, x)) == "min(1:f32, in0:f32)");
    CHECK(str(pow(x, 2)) == "pow(in0:f32, 2:f32)");
    CHECK(str(pow(n, 3)) == "pow(in1:i64, 3:i64)");
    CHECK(str(max(x, n)) == "max(in0:f32, cast<f32>(in1:i64))");
}

TEST_CASE("cast and select") {
    Sym x = var(0, DType::F32), n = var(1, DType::I32);
    CHECK(str(cast(x, DType::I64)) == "cast<i64>(in0:f32)");
    CHECK(cast(x, DType::F32).expr() == x.expr());
    CHECK_FALSE(cast(Sym(2.0), DType::F64).weak());
    CHECK(cast(Sym(0.1), DType::F64).expr()->fvalue == 0.1); // the literal's exact value
    CHECK(str(cast(Sym(2.7), DType::I32)) == "2:i32");
    CHECK(str(cast(Sym(3), DType::F64)) == "3:f64");

    Sym relu = select(x > 0, x, 0);
    CHECK(relu.dtype() == DType::F32);
    CHECK_FALSE(relu.weak());
    CHECK(str(relu) == "select(gt(in0:f32, 0:f32), in0:f32, 0:f32)");
    CHECK(str(select(n, x, n)) == "select(cast<bool>(in1:i32), in0:f32, cast<f32>(in1:i32))");
    CHECK(str(select(true, n, 2.5)) == "select(true:bool, cast<f32>(in1:i32), 2.5:f32)");
    Sym both = select(x > 0, 1, 2);
    CHECK(both.weak());
    CHECK(both.dtype() == DType::I64);
}

TEST_CASE("tracing results") {
    Sym x = var(0, DType::F32), y = var(1, DType::F32);
    auto one = detail::trace_results(x + y);
    REQUIRE(one.size() == 1);
    CHECK(to_string(one[0]) == "add(in0:f32, in1:f32)");
    auto many = detail::trace_results(std::make_tuple(x * y, x - y, 2.0));
    REQUIRE(many.size() == 3);
    CHECK(to_string(many[1]) == "sub(in0:f32, in1:f32)");
    CHECK(to_string(many[2]) == "2:f32");
    auto pair = detail::trace_results(std::make_pair(x, 1));
    CHECK(to_string(pair[1]) == "1:i64");

    // A generic lambda traced on Syms, then evaluated.
    auto f = [](auto a, auto b) { return max(a * 2.0 - b, 0) / (b + 1); };
    ScalarExpr e = f(x, y).expr();
    CHECK(e->dtype == DType::F32);
    CHECK(evaluate(e, {ScalarValue::of(3, DType::F32), ScalarValue::of(1, DType::F32)}).f == 2.5);
    CHECK(evaluate(e, {ScalarValue::of(0, DType::F32), ScalarValue::of(1, DType::F32)}).f == 0.0);
}

// Scalar expressions: construction and promotion through explicit casts, printing, structural
// hashing and equality, input counting and substitution. Evaluation is in test_scalar_eval.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "core/scalar_expr.hpp"
#include "expect_error.hpp"

using namespace hedra;

namespace {

ScalarExpr in(int k, DType t) {
    return scalar_input(k, t);
}

// A random expression over inputs in0:f32, in1:i32, in2:bool (deterministic per rng state).
ScalarExpr random_expr(std::mt19937& rng, int depth) {
    std::uniform_int_distribution<int> pick(0, 9), small(-3, 3);
    int p = depth == 0 ? pick(rng) % 3 : pick(rng);
    switch (p) {
    case 0:
        return in(0, DType::F32);
    case 1:
        return in(1, DType::I32);
    case 2:
        return small(rng) > 0 ? in(2, DType::Bool) : scalar_const(small(rng) * 0.25, DType::F32);
    case 3:
        return scalar_unary(ScalarOp::Abs, random_expr(rng, depth - 1));
    case 4:
        return scalar_unary(ScalarOp::Exp, random_expr(rng, depth - 1));
    case 5:
        return scalar_cast(random_expr(rng, depth - 1), DType::I64);
    case 6:
        return scalar_binary(ScalarOp::Add, random_expr(rng, depth - 1),
                             random_expr(rng, depth - 1));
    case 7:
        return scalar_binary(ScalarOp::Lt, random_expr(rng, depth - 1),
                             random_expr(rng, depth - 1));
    case 8:
        return scalar_binary(ScalarOp::Max, random_expr(rng, depth - 1),
                             scalar_const_int(small(rng), DType::I32));
    default:
        return scalar_select(random_expr(rng, depth - 1), random_expr(rng, depth - 1),
                             random_expr(rng, depth - 1));
    }
}

} // namespace

TEST_CASE("constants convert their value to the dtype") {
    CHECK(scalar_const(2.7, DType::I32)->ivalue == 2);
    CHECK(scalar_const(-2.7, DType::I64)->ivalue == -2);
    CHECK(scalar_const(0.5, DType::Bool)->ivalue == 1);
    CHECK(scalar_const(0.0, DType::Bool)->ivalue == 0);
    CHECK(scalar_const(0.1, DType::F32)->fvalue == static_cast<double>(0.1f));
    CHECK(scalar_const(0.1, DType::F64)->fvalue == 0.1);
    CHECK(scalar_const(std::nan(""), DType::I32)->ivalue == 0);
    CHECK(scalar_const(3.0, DType::F64)->op == ScalarOp::Const);
    CHECK(scalar_const(3.0, DType::F64)->args.empty());

    CHECK(scalar_const_int((std::int64_t{1} << 32) + 5, DType::I32)->ivalue == 5);
    CHECK(scalar_const_int(std::int64_t{1} << 31, DType::I32)->ivalue == -2147483648LL);
    CHECK(scalar_const_int(7, DType::Bool)->ivalue == 1);
    CHECK(scalar_const_int(16777217, DType::F32)->fvalue == 16777216.0);
    CHECK(scalar_const_int((std::int64_t{1} << 53) + 1, DType::F64)->fvalue == 9007199254740992.0);
    CHECK(scalar_const_int(-9, DType::I64)->ivalue == -9);
}

TEST_CASE("inputs and unary operations") {
    ScalarExpr x = in(3, DType::F64);
    CHECK(x->op == ScalarOp::Input);
    CHECK(x->ivalue == 3);
    CHECK(x->dtype == DType::F64);
    CHECK(scalar_unary(ScalarOp::Neg, x)->dtype == DType::F64);
    CHECK(scalar_unary(ScalarOp::Abs, in(0, DType::I32))->dtype == DType::I32);
    CHECK(scalar_unary(ScalarOp::Not, in(0, DType::Bool))->dtype == DType::Bool);
    ScalarExpr e = scalar_unary(ScalarOp::Exp, in(0, DType::I32));
    CHECK(e->dtype == DType::F32);
    CHECK(to_string(e) == "exp(cast<f32>(in0:i32))");
    CHECK(to_string(scalar_unary(ScalarOp::Sqrt, in(0, DType::Bool))) ==
          "sqrt(cast<f32>(in0:bool))");
    CHECK(to_string(scalar_unary(ScalarOp::Sigmoid, in(1, DType::F64))) == "sigmoid(in1:f64)");
}

TEST_CASE("casts") {
    ScalarExpr x = in(0, DType::F32);
    CHECK(scalar_cast(x, DType::F32) == x); // the same node: no cast to the same dtype
    ScalarExpr c = scalar_cast(x, DType::I64);
    CHECK(c->op == ScalarOp::Cast);
    CHECK(c->dtype == DType::I64);
    CHECK(c->args.at(0) == x);
    CHECK(to_string(c) == "cast<i64>(in0:f32)");
    CHECK(to_string(scalar_cast(c, DType::F32)) == "cast<f32>(cast<i64>(in0:f32))"); // no folding
}

TEST_CASE("binary operations promote with explicit casts") {
    ScalarExpr a = in(0, DType::I32), b = in(1, DType::F64);
    ScalarExpr s = scalar_binary(ScalarOp::Add, a, b);
    CHECK(s->dtype == DType::F64);
    CHECK(to_string(s) == "add(cast<f64>(in0:i32), in1:f64)");
    CHECK(s->args[0]->dtype == s->args[1]->dtype);

    ScalarExpr lt = scalar_binary(ScalarOp::Lt, in(0, DType::I32), in(1, DType::F32));
    CHECK(lt->dtype == DType::Bool);
    CHECK(to_string(lt) == "lt(cast<f32>(in0:i32), in1:f32)");
    CHECK(to_string(scalar_binary(ScalarOp::Eq, in(0, DType::Bool), in(1, DType::I64))) ==
          "eq(cast<i64>(in0:bool), in1:i64)");
    ScalarExpr both = scalar_binary(ScalarOp::And, in(0, DType::F32), in(1, DType::I64));
    CHECK(both->dtype == DType::Bool);
    CHECK(to_string(both) == "and(cast<bool>(in0:f32), cast<bool>(in1:i64))");
    CHECK(scalar_binary(ScalarOp::Div, a, a)->dtype == DType::I32);
    CHECK(scalar_binary(ScalarOp::Mul, in(0, DType::Bool), in(1, DType::Bool))->dtype ==
          DType::Bool);
    CHECK(scalar_binary(ScalarOp::Max, in(0, DType::I64), in(1, DType::I32))->dtype == DType::I64);
    CHECK(scalar_binary(ScalarOp::Pow, in(0, DType::F32), in(1, DType::F64))->dtype == DType::F64);
}

TEST_CASE("select promotes its branches and casts the condition") {
    ScalarExpr s = scalar_select(in(0, DType::I32), in(1, DType::F32), in(2, DType::F64));
    CHECK(s->dtype == DType::F64);
    CHECK(to_string(s) == "select(cast<bool>(in0:i32), cast<f64>(in1:f32), in2:f64)");
    CHECK(to_string(scalar_select(in(0, DType::Bool), in(1, DType::I32),
                                  scalar_const_int(0, DType::I32))) ==
          "select(in0:bool, in1:i32, 0:i32)");
}

TEST_CASE("printing constants and operation names") {
    CHECK(to_string(scalar_binary(ScalarOp::Add, in(0, DType::F32), scalar_const(2, DType::F32))) ==
          "add(in0:f32, 2:f32)");
    CHECK(to_string(scalar_const(0.1, DType::F32)) == "0.1:f32");
    CHECK(to_string(scalar_const(0.1, DType::F64)) == "0.1:f64");
    CHECK(to_string(scalar_const(-2.5, DType::F64)) == "-2.5:f64");
    CHECK(to_string(scalar_const(1, DType::Bool)) == "true:bool");
    CHECK(to_string(scalar_const(0, DType::Bool)) == "false:bool");
    CHECK(to_string(scalar_const_int(-3, DType::I64)) == "-3:i64");
    CHECK(to_string(scalar_const(std::numeric_limits<double>::infinity(), DType::F32)) ==
          "inf:f32");
    CHECK(to_string(ScalarExpr()) == "<null>");

    const std::map<ScalarOp, std::string> names{
        {ScalarOp::Const, "const"},     {ScalarOp::Input, "input"}, {ScalarOp::Neg, "neg"},
        {ScalarOp::Not, "not"},         {ScalarOp::Abs, "abs"},     {ScalarOp::Exp, "exp"},
        {ScalarOp::Log, "log"},         {ScalarOp::Sqrt, "sqrt"},   {ScalarOp::Tanh, "tanh"},
        {ScalarOp::Sigmoid, "sigmoid"}, {ScalarOp::Cast, "cast"},   {ScalarOp::Add, "add"},
        {ScalarOp::Sub, "sub"},         {ScalarOp::Mul, "mul"},     {ScalarOp::Div, "div"},
        {ScalarOp::Pow, "pow"},         {ScalarOp::Min, "min"},     {ScalarOp::Max, "max"},
        {ScalarOp::Lt, "lt"},           {ScalarOp::Le, "le"},       {ScalarOp::Gt, "gt"},
        {ScalarOp::Ge, "ge"},           {ScalarOp::Eq, "eq"},       {ScalarOp::Ne, "ne"},
        {ScalarOp::And, "and"},         {ScalarOp::Or, "or"},       {ScalarOp::Select, "select"},
        {ScalarOp::Sin, "sin"},         {ScalarOp::Cos, "cos"},     {ScalarOp::Erf, "erf"},
        {ScalarOp::Log1p, "log1p"},     {ScalarOp::Expm1, "expm1"}, {ScalarOp::Floor, "floor"},
        {ScalarOp::Ceil, "ceil"},       {ScalarOp::Round, "round"}, {ScalarOp::Mod, "mod"},
        {ScalarOp::BitAnd, "bitand"},   {ScalarOp::BitOr, "bitor"}, {ScalarOp::BitXor, "bitxor"},
        {ScalarOp::Shl, "shl"},         {ScalarOp::Shr, "shr"}};
    CHECK(names.size() == static_cast<std::size_t>(ScalarOp::Select) + 1);
    for (auto& [op, name] : names)
        CHECK(scalar_op_name(op) == name);
}

TEST_CASE("bad constructions throw") {
    ScalarExpr f = in(0, DType::F32);
    CHECK_ERROR(scalar_input(-1, DType::F32), "scalar_input", "-1");
    CHECK_ERROR(scalar_unary(ScalarOp::Not, f), "'not'", "bool", "f32");
    CHECK_ERROR(scalar_unary(ScalarOp::Neg, in(0, DType::Bool)), "'neg'", "bool");
    CHECK_ERROR(scalar_unary(ScalarOp::Add, f), "'add'", "not a unary operation");
    CHECK_ERROR(scalar_unary(ScalarOp::Cast, f), "scalar_cast");
    CHECK_ERROR(scalar_unary(ScalarOp::Exp, nullptr), "exp", "null");
    CHECK_ERROR(scalar_binary(ScalarOp::Neg, f, f), "'neg'", "not a binary operation");
    CHECK_ERROR(scalar_binary(ScalarOp::Select, f, f), "'select'", "not a binary operation");
    CHECK_ERROR(scalar_binary(ScalarOp::Add, f, nullptr), "add", "null");
    CHECK_ERROR(scalar_cast(nullptr, DType::F32), "cast", "null");
    CHECK_ERROR(scalar_select(nullptr, f, f), "select", "null");
}

TEST_CASE("structural hash and equality") {
    auto build = [](double c) {
        return scalar_binary(ScalarOp::Mul, scalar_unary(ScalarOp::Exp, in(0, DType::F32)),
                             scalar_const(c, DType::F32));
    };
    ScalarExpr a = build(2), b = build(2), c = build(3);
    CHECK(a != b);
    CHECK(a->hash == b->hash);
    CHECK(structurally_equal(a, b));
    CHECK_FALSE(structurally_equal(a, c));
    CHECK(structurally_equal(a, a));
    CHECK_FALSE(structurally_equal(a, nullptr));
    CHECK(structurally_equal(ScalarExpr(), ScalarExpr()));
    CHECK_FALSE(structurally_equal(scalar_const(0.0, DType::F64), scalar_const(-0.0, DType::F64)));
    CHECK(structurally_equal(scalar_const(std::nan(""), DType::F64),
                             scalar_const(std::nan(""), DType::F64)));
    CHECK_FALSE(structurally_equal(in(0, DType::F32), in(1, DType::F32)));
    CHECK_FALSE(structurally_equal(in(0, DType::F32), in(0, DType::F64)));
    CHECK_FALSE(
        structurally_equal(scalar_const_int(1, DType::I32), scalar_const_int(1, DType::I64)));
    CHECK_FALSE(
        structurally_equal(scalar_binary(ScalarOp::Sub, in(0, DType::F32), in(1, DType::F32)),
                           scalar_binary(ScalarOp::Sub, in(1, DType::F32), in(0, DType::F32))));

    // Random trees built twice from the same seed agree; different trees get different hashes.
    std::mt19937 r1(42), r2(42);
    std::map<std::string, std::size_t> hash_of;
    std::map<std::size_t, std::string> text_of;
    for (int i = 0; i < 500; ++i) {
        ScalarExpr x = random_expr(r1, 4), y = random_expr(r2, 4);
        CHECK(x->hash == y->hash);
        CHECK(structurally_equal(x, y));
        std::string s = to_string(x);
        if (auto it = hash_of.find(s); it != hash_of.end()) CHECK(it->second == x->hash);
        hash_of[s] = x->hash;
        if (auto it = text_of.find(x->hash); it != text_of.end()) CHECK(it->second == s);
        text_of[x->hash] = s;
    }
    CHECK(hash_of.size() > 200);
}

TEST_CASE("deep shared DAGs are handled in linear time") {
    auto build = [] {
        ScalarExpr y = in(0, DType::F64);
        for (int i = 0; i < 80; ++i)
            y = scalar_binary(ScalarOp::Mul, y, y);
        return y;
    };
    ScalarExpr a = build(), b = build();
    CHECK(structurally_equal(a, b));
    CHECK(scalar_num_inputs(a) == 1);
    ScalarExpr c = substitute_inputs(a, {in(4, DType::F64)});
    CHECK(scalar_num_inputs(c) == 5);
    CHECK_FALSE(structurally_equal(a, c));
}

TEST_CASE("input counting and substitution") {
    ScalarExpr x = in(0, DType::F32), y = in(1, DType::F32);
    ScalarExpr e = scalar_binary(ScalarOp::Add, x, y);
    CHECK(scalar_num_inputs(scalar_const(1, DType::F32)) == 0);
    CHECK(scalar_num_inputs(e) == 2);
    CHECK(scalar_num_inputs(scalar_binary(ScalarOp::Add, x, in(3, DType::F32))) == 4);
    CHECK(scalar_num_inputs(nullptr) == 0);

    ScalarExpr swapped = substitute_inputs(e, {y, scalar_const(2, DType::F32)});
    CHECK(to_string(swapped) == "add(in1:f32, 2:f32)");
    CHECK(swapped->hash == scalar_binary(ScalarOp::Add, y, scalar_const(2, DType::F32))->hash);
    CHECK(substitute_inputs(e, {x, y}) == e); // unchanged trees are returned as is
    // A replacement of another dtype is cast back, so the tree's dtypes do not change.
    CHECK(to_string(substitute_inputs(e, {in(0, DType::F64), y})) ==
          "add(cast<f32>(in0:f64), in1:f32)");
    // Replacements are not substituted again.
    CHECK(to_string(substitute_inputs(e, {y, x})) == "add(in1:f32, in0:f32)");
    CHECK_ERROR(substitute_inputs(e, {x}), "substitute_inputs", "no replacement for input 1",
                "1 given");
    CHECK_ERROR(substitute_inputs(e, {x, nullptr}), "no replacement for input 1");
}

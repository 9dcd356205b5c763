// The operation and dtype tables (core/scalar_ops.def, core/dtypes.def) and what is generated from
// them: enumerator values (part of kernel cache keys), names and their round trips, sizes, kinds,
// arities and typing rules as the constructors apply them.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/scalar_expr.hpp"

using namespace hedra;

// The numbering must not move: kernel cache keys and structural hashes contain it.
static_assert(static_cast<int>(DType::Bool) == 0 && static_cast<int>(DType::I32) == 1 &&
              static_cast<int>(DType::I64) == 2 && static_cast<int>(DType::F32) == 3 &&
              static_cast<int>(DType::F64) == 4 && static_cast<int>(DType::BF16) == 5 &&
              static_cast<int>(DType::F16) == 6);
static_assert(kNumDTypes == 7);
static_assert(static_cast<int>(ScalarOp::Const) == 0 && static_cast<int>(ScalarOp::Input) == 1 &&
              static_cast<int>(ScalarOp::Neg) == 2 && static_cast<int>(ScalarOp::Expm1) == 14 &&
              static_cast<int>(ScalarOp::Cast) == 18 && static_cast<int>(ScalarOp::Add) == 19 &&
              static_cast<int>(ScalarOp::Shr) == 31 && static_cast<int>(ScalarOp::Lt) == 32 &&
              static_cast<int>(ScalarOp::Or) == 39 && static_cast<int>(ScalarOp::Select) == 40);
static_assert(kNumScalarOps == 41);
// The lookups are usable at compile time.
static_assert(dtype_size(DType::F16) == 2 && is_half(DType::BF16) && !is_float(DType::I64));
static_assert(scalar_op_info(ScalarOp::Select).arity == 3);

TEST_CASE("every dtype: its number, name, size, C names and kind") {
    struct Row {
        DType t;
        const char* name;
        std::size_t size;
        const char* cpp;
        const char* c;
        bool integer, floating, half;
    };
    const Row rows[] = {
        {DType::Bool, "bool", 1, "bool", "uint8_t", false, false, false},
        {DType::I32, "i32", 4, "std::int32_t", "int32_t", true, false, false},
        {DType::I64, "i64", 8, "std::int64_t", "int64_t", true, false, false},
        {DType::F32, "f32", 4, "float", "float", false, true, false},
        {DType::F64, "f64", 8, "double", "double", false, true, false},
        {DType::BF16, "bf16", 2, "std::uint16_t", "uint16_t", false, true, true},
        {DType::F16, "f16", 2, "std::uint16_t", "uint16_t", false, true, true},
    };
    REQUIRE(std::size(rows) == kNumDTypes);
    std::set<std::string> names;
    for (std::size_t i = 0; i < kNumDTypes; ++i) {
        const Row& r = rows[i];
        CAPTURE(r.name);
        CHECK(kAllDTypes[i] == r.t);
        CHECK(static_cast<std::size_t>(r.t) == i);
        CHECK(dtype_name(r.t) == r.name);
        CHECK(parse_dtype(r.name) == r.t);
        CHECK(dtype_size(r.t) == r.size);
        CHECK(std::string(dtype_cpp_name(r.t)) == r.cpp);
        CHECK(std::string(dtype_info(r.t).c_name) == r.c);
        CHECK(is_integer(r.t) == r.integer);
        CHECK(is_float(r.t) == r.floating);
        CHECK(is_half(r.t) == r.half);
        CHECK(compute_dtype(r.t) == (r.half ? DType::F32 : r.t));
        names.insert(r.name);
    }
    CHECK(names.size() == kNumDTypes);
    CHECK(dtype_size(dtype_of<bool>()) == sizeof(bool));
    CHECK(dtype_size(dtype_of<std::int32_t>()) == sizeof(std::int32_t));
    CHECK(dtype_size(dtype_of<double>()) == sizeof(double));
    try {
        parse_dtype("float");
        FAIL("parse_dtype accepted 'float'");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) ==
              "unknown dtype 'float'; expected one of bool, i32, i64, f32, f64, bf16, f16");
    }
}

TEST_CASE("promotion: bool < i32 < i64 < bf16, f16 < f32 < f64") {
    const DType order[] = {DType::Bool, DType::I32, DType::I64, DType::F16, DType::F32, DType::F64};
    for (std::size_t i = 0; i < std::size(order); ++i)
        for (std::size_t j = 0; j < std::size(order); ++j)
            CHECK(promote(order[i], order[j]) == order[std::max(i, j)]);
    CHECK(promote(DType::BF16, DType::F16) == DType::F32);
    CHECK(promote(DType::BF16, DType::I64) == DType::BF16);
    CHECK(promote(DType::BF16, DType::F32) == DType::F32);
}

TEST_CASE("every operation: a distinct name that reads back, and its arity") {
    std::set<std::string> names;
    for (std::size_t i = 0; i < kNumScalarOps; ++i) {
        const ScalarOp op = kAllScalarOps[i];
        CHECK(static_cast<std::size_t>(op) == i);
        const std::string name = scalar_op_name(op);
        CAPTURE(name);
        CHECK(!name.empty());
        CHECK(names.insert(name).second);
        CHECK(scalar_op_from_name(name) == op);
    }
    CHECK(!scalar_op_from_name("fma"));
    CHECK(!scalar_op_from_name(""));
    CHECK(std::string(scalar_op_name(ScalarOp::BitAnd)) == "bitand");
    CHECK(std::string(scalar_op_name(ScalarOp::Log1p)) == "log1p");
}

TEST_CASE("every operation: the constructors build it with its arity and typing rule") {
    const ScalarExpr i32 = scalar_input(0, DType::I32);
    const ScalarExpr f32 = scalar_input(1, DType::F32);
    const ScalarExpr b = scalar_input(2, DType::Bool);
    for (ScalarOp op : kAllScalarOps) {
        const ScalarOpInfo& info = scalar_op_info(op);
        CAPTURE(std::string(info.name));
        ScalarExpr e;
        switch (info.rule) {
        case ScalarOpRule::Leaf:
            CHECK(info.arity == 0);
            e = op == ScalarOp::Const ? scalar_const(1.0, DType::F32) : f32;
            CHECK(e->op == op);
            break;
        case ScalarOpRule::Keep:
            e = scalar_unary(op, i32);
            CHECK(e->dtype == DType::I32);
            break;
        case ScalarOpRule::FloatMath: // an integer operand is computed in f32
            e = scalar_unary(op, i32);
            CHECK(e->dtype == DType::F32);
            CHECK(e->args[0]->op == ScalarOp::Cast);
            break;
        case ScalarOpRule::Cast:
            e = scalar_cast(i32, DType::F64);
            CHECK(e->dtype == DType::F64);
            break;
        case ScalarOpRule::Arith:
            e = scalar_binary(op, i32, f32);
            CHECK(e->dtype == DType::F32);
            break;
        case ScalarOpRule::Bitwise:
            e = scalar_binary(op, b, b);
            CHECK(e->dtype == DType::Bool);
            CHECK_THROWS_AS(scalar_binary(op, f32, i32), Error);
            break;
        case ScalarOpRule::Shift:
            e = scalar_binary(op, i32, i32);
            CHECK(e->dtype == DType::I32);
            CHECK_THROWS_AS(scalar_binary(op, b, b), Error);
            break;
        case ScalarOpRule::Compare:
            e = scalar_binary(op, i32, f32);
            CHECK(e->dtype == DType::Bool);
            CHECK(e->args[0]->dtype == DType::F32);
            break;
        case ScalarOpRule::Logical:
            e = info.arity == 1 ? scalar_unary(op, b) : scalar_binary(op, i32, f32);
            CHECK(e->dtype == DType::Bool);
            break;
        case ScalarOpRule::Select:
            e = scalar_select(b, i32, f32);
            CHECK(e->dtype == DType::F32);
            break;
        }
        REQUIRE(e);
        CHECK(e->op == op);
        CHECK(static_cast<int>(e->args.size()) == info.arity);
        if (info.arity == 1 && op != ScalarOp::Cast)
            CHECK_THROWS_AS(scalar_binary(op, f32, f32), Error);
        if (info.arity == 2) CHECK_THROWS_AS(scalar_unary(op, f32), Error);
    }
}

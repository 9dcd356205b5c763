// Bad-input catalogue, part 1: misuses of the value-level API that test_bad_input.cpp does not
// cover: scalar expressions and Syms, dtypes, ranges, affine maps, transforms applied to
// indices, host arrays, custom reduction combiners and leaves. Each must throw hedra::Error
// whose message names the operation and the offending values, so the user can act on it.
#include <doctest/doctest.h>

#include "core/expect_error.hpp"
#include "hedra.hpp"

using namespace hedra;

TEST_CASE("catalogue: scalar expressions and Syms") {
    Sym b = Sym(scalar_input(0, DType::Bool));
    Sym f = Sym(scalar_input(1, DType::F32));
    CHECK_ERROR(-b, "'neg' of a bool operand", "use 'not'");
    CHECK_ERROR(scalar_unary(ScalarOp::Not, scalar_input(0, DType::F32)), "'not' needs a bool",
                "f32");
    CHECK_ERROR(scalar_unary(ScalarOp::Add, scalar_input(0, DType::F32)), "scalar_unary", "add");
    CHECK_ERROR(scalar_unary(ScalarOp::Cast, scalar_input(0, DType::F32)), "scalar_cast");
    CHECK_ERROR(scalar_binary(ScalarOp::Exp, f.expr(), f.expr()), "scalar_binary", "exp");
    CHECK_ERROR(scalar_input(-1, DType::F32), "scalar_input", "-1");
    CHECK_ERROR(scalar_unary(ScalarOp::Neg, nullptr), "null scalar expression");
    CHECK_ERROR(evaluate(scalar_binary(ScalarOp::Add, scalar_input(0, DType::F32),
                                       scalar_input(1, DType::F32)),
                         {ScalarValue::of(1.0, DType::F32)}),
                "evaluate", "reads input 1", "1 inputs");
    CHECK_ERROR(evaluate(scalar_input(0, DType::F64), {ScalarValue::of(1.0, DType::I32)}),
                "evaluate", "input 0 has dtype i32", "reads f64");
    CHECK_ERROR(substitute_inputs(scalar_input(2, DType::F32), {}), "substitute_inputs", "input 2");
}

TEST_CASE("catalogue: dtypes, ranges and shapes") {
    CHECK_ERROR(parse_dtype("f8"), "unknown dtype 'f8'", "bf16, f16");
    CHECK_ERROR(Range(0, -2, 3), "invalid range", "step -2");
    CHECK_ERROR(Range(0, 1, -3), "invalid range", "size -3");
    // 2^80 elements: the element count must not overflow silently.
    CHECK_ERROR(Shape::of({std::int64_t{1} << 40, std::int64_t{1} << 40}), "shape", "elements",
                "too many");
    CHECK_ERROR(Shape::of({3, -1}), "Shape::of", "size -1");
}

TEST_CASE("catalogue: affine maps and transforms applied to indices") {
    CHECK_ERROR(AffineMap(2, 1, {1, 0, 0}, {0}), "affine map 2 -> 1");
    CHECK_ERROR(AffineMap(1, 2, {1, 1}, {0}), "affine map 1 -> 2");
    CHECK_ERROR(AffineMap::projection(2, {0, 3}), "projection", "axis 3");
    AffineMap m = AffineMap::identity(2);
    CHECK_ERROR(m.apply({1, 2, 3}), "affine map", "rank 3");
    CHECK_ERROR(m.compose(AffineMap::identity(3)), "cannot compose affine map");
    Transform t = Transform::permutation({1, 0});
    CHECK_ERROR(t.apply(std::vector<std::int64_t>{1}), "transform", "index (1)", "rank 1");
    Transform pinned(2, {{0, 1, 0}}, {std::nullopt, 4});
    CHECK_ERROR(pinned.apply(std::vector<std::int64_t>{1, 3}), "transform", "pinned");
    CHECK_ERROR(t.compose(Transform::identity(3)), "compose");
    CHECK_ERROR(Transform::scaling({2, 0}), "invalid transform", "scale 0");
    CHECK_ERROR(Transform::permutation({0, 2}), "invalid transform");
    CHECK_ERROR(Transform(1, {{0, 1, 0}, {0, 2, 1}}), "invalid transform", "input axis 0");
}

TEST_CASE("catalogue: host arrays") {
    HostArray a({2, 3}, DType::I32);
    CHECK_ERROR(a.values<float>(), "host array", "dtype i32", "f32");
    CHECK_ERROR(a.flat(6), "element 6 is out of bounds for 6 elements");
    CHECK_ERROR(a.flat(-1), "element -1 is out of bounds");
    CHECK_ERROR(HostArray({2, -3}, DType::F32), "host array of shape (2,-3)", "axis 1",
                "negative size -3");
    CHECK_ERROR(HostArray({4}, DType::F32, nullptr, nullptr), "host array (4)", "null pointer");
    CHECK_ERROR(HostArray::from(std::vector<float>{1, 2, 3}, {2, 2}), "HostArray::from", "3 values",
                "4 elements");
    CHECK_ERROR(HostArray().values<float>(), "host array", "no data");
    CHECK_ERROR(array(HostArray({2, 3}, DType::F32), Shape::of({3, 3})), "array", "shape (2,3)",
                "(3,3)");
    CHECK_ERROR(array(static_cast<const float*>(nullptr), Shape::of({2}), Ownership::Borrow),
                "null pointer");
}

TEST_CASE("catalogue: custom combiners and leaves") {
    Array x = array(std::vector<float>{1, 2, 3}, Shape::of({3}));
    CHECK_ERROR(reduce([](Sym acc, Sym v) { return std::make_tuple(acc + v, acc * v); }, 0.0, x),
                "reduce", "one value");
    CHECK_ERROR(reduce([](Sym acc, Sym v) { return acc < v; }, 0.0, x), "reduce", "combiner",
                "bool", "f32");
    CHECK_ERROR(stack(-3, {x, x}), "stack", "axis -3");
    CHECK_ERROR(index_components(Shape::of({2, 3}), -3), "index_components", "axis -3");
    CHECK_ERROR(where(array(std::vector<float>{1, 2}, Shape::of({2})), x, x),
                "cannot broadcast in 'where'", "(2)", "(3)");
    CHECK_ERROR(flatten(constant(1.0)), "flatten", "axis 0 out of range", "()");
}

// Must-throw tests: every user mistake across the API throws hedra::Error whose message names
// the operation, the shapes (as ranges), the axis and the creation site. Compiled programs are
// checked against a fake backend registered here, so no real backend is involved.
#include <doctest/doctest.h>

#include "core/compute.hpp"
#include "core/expect_error.hpp"
#include "core/library.hpp"

using namespace hedra;

namespace {

Array f32(const Shape& s) {
    return array(std::vector<float>(s.size(), 1.0f), s);
}
Array i32(const Shape& s) {
    return array(std::vector<std::int32_t>(s.size(), 1), s);
}

// A backend whose programs return zeros: enough to reach the input checks of a program.
class ZerosBackend : public Backend {
public:
    std::string name() const override { return "test_zeros"; }
    std::unique_ptr<Program> compile(const std::vector<NodePtr>& outputs,
                                     const std::vector<NodePtr>&, const CompileOptions&) override {
        struct Zeros : Program {
            std::vector<NodePtr> outputs;
            std::vector<HostArray> run(const std::vector<HostArray>&) override {
                std::vector<HostArray> r;
                for (const NodePtr& n : outputs)
                    r.emplace_back(n->shape.sizes(), n->dtype);
                return r;
            }
        };
        auto p = std::make_unique<Zeros>();
        p->outputs = outputs;
        return p;
    }
};

ComputeOptions zeros_backend() {
    register_backend("test_zeros", [] { return std::make_shared<ZerosBackend>(); });
    ComputeOptions o;
    o.backend = "test_zeros";
    return o;
}

} // namespace

TEST_CASE("errors: map broadcasting") {
    Array a = f32(Shape::of({3, 2})), b = f32(Shape::of({3, 4}));
    CHECK_ERROR(a + b, "cannot broadcast in 'add'", "axis 1", "[0,2)", "[0,4)", "(3,2)", "(3,4)",
                "a created at test_bad_input.cpp:", "b at test_bad_input.cpp:");
    Array c = f32(Shape{range(0, 3)}), d = f32(Shape{range(1, 4)});
    CHECK_ERROR(lazy([](Sym x, Sym y) { return x * y; }, c, d), "cannot broadcast in 'lazy'",
                "axis 0", "[1,4)");
    CHECK_ERROR(lazy([](Sym x, Sym y, Sym z) { return x + y + z; }, c, 1.0f, a),
                "cannot broadcast in 'lazy'", "a created at", "c at");
    CHECK_ERROR(where(a > 0, a, b), "cannot broadcast in 'where'");
    CHECK_ERROR(maximum(f32(Shape::of({5})), f32(Shape::of({6}))), "'maximum'", "(5)", "(6)");
}

TEST_CASE("errors: reshape by transform") {
    Array a = f32(Shape::of({2, 3}));
    CHECK_ERROR(Transform(1, {{0, 0, 0}}), "invalid transform", "scale 0");
    CHECK_ERROR(Transform(2, {{0, 1, 0}}), "invalid transform", "input axis 1");
    CHECK_ERROR(reshape(a, Transform::identity(3)), "reshape", "rank 3", "(2,3)", "created at");
    CHECK_ERROR(reshape(a, Transform(2, {{0, 1, 0}}, {std::nullopt, 0})), "reshape", "pinned",
                "(2,3)");
    CHECK_ERROR(reshape(a, Transform::permutation({0, 0})), "invalid transform");
}

TEST_CASE("errors: reshape by shape") {
    Array a = f32(Shape::of({3, 4}));
    CHECK_ERROR(reshape(a, Shape::of({3, 5})), "reshape", "(3,4)", "(3,5)", "axis 1", "[0,4)");
    CHECK_ERROR(reshape(f32(Shape{range(0, 10, 2)}), Shape{range(1, 5)}), "reshape", "[0,10):2",
                "[1,5)");
    CHECK_ERROR(reshape(a, Shape::of({12})), "reshape", "fewer axes");
    CHECK_ERROR(broadcast_to(a, Shape::of({2, 3, 5})), "broadcast_to", "(3,4)", "(2,3,5)",
                "axis 2");
}

TEST_CASE("errors: view outside its input") {
    Array x = f32(Shape::of({5}));
    CHECK_ERROR(view(x, Shape::of({4, 3}), AffineMap(2, 1, {1, 1}, {0})), "view", "(4,3)",
                "not inside (5)", "axis 0", "[0,5]", "created at test_bad_input.cpp:");
    CHECK_ERROR(view(x, Shape::of({3}), AffineMap(1, 1, {1}, {-1})), "view", "not inside",
                "[-1,1]");
    Array s = f32(Shape{range(0, 10, 2)});
    CHECK_ERROR(view(s, Shape::of({3}), AffineMap(1, 1, {1}, {0})), "view", "off the lattice",
                "[0,10):2");
    CHECK_ERROR(view(x, Shape::of({2, 2}), AffineMap(1, 1, {1}, {0})), "view", "rank");
}

TEST_CASE("errors: reduce axes and combiners") {
    Array a = f32(Shape::of({2, 3}));
    CHECK_ERROR(reduce(ReduceOp::Sum, a, {3}), "reduce: axis 3 out of range for shape (2,3)");
    CHECK_ERROR(sum(a, {-3}), "axis -3 out of range for shape (2,3)");
    CHECK_ERROR(sum(a, {1, 1}), "reduce", "axis 1 appears twice", "[1,1]", "(2,3)");
    CHECK_ERROR(max(a, {1, -1}), "reduce", "axis 1 appears twice");
    CHECK_ERROR(reduce(ReduceOp::Custom, a), "reduce", "combiner");
    CHECK_ERROR(reduce([](Sym acc, Sym x) { return acc + x * 2.5; }, 0.0, i32(Shape::of({4}))),
                "reduce", "combiner returns f32", "i32");
    CHECK_ERROR(mean(a, {2}), "mean: axis 2 out of range");
}

TEST_CASE("errors: fuse, overwrite and stack") {
    Array l = f32(Shape{range(0, 4)}), r = f32(Shape{range(2, 6)});
    CHECK_ERROR(fuse({l, r}), "fuse", "pieces 0 (4) and 1 ([2,6)) overlap in ([2,4))", "overwrite");
    Array far = f32(Shape{range(5, 8)});
    CHECK_ERROR(fuse({l, far}), "fuse", "gap", "hull (8)", "e.g. index [4]");
    CHECK_ERROR(fuse({l, f32(Shape::of({4, 1}))}), "fuse", "rank");
    CHECK_ERROR(fuse({l, i32(Shape{range(4, 6)})}), "fuse", "dtype i32", "f32");
    CHECK_ERROR(fuse({}), "fuse", "no pieces");
    CHECK_ERROR(overwrite({l, far}), "overwrite", "gap", "(4), ([5,8))");
    Array a = f32(Shape::of({3, 4})), b = f32(Shape::of({3, 5}));
    CHECK_ERROR(stack(0, {a, b}), "stack", "different shapes", "(3,4)", "(3,5)");
    CHECK_ERROR(stack(0, {a, i32(Shape::of({3, 4}))}), "stack", "dtypes");
    CHECK_ERROR(stack(3, {a, a}), "stack: axis 3 out of range");
    CHECK_ERROR(stack(0, {}), "stack", "no arrays");
}

TEST_CASE("errors: rank above the maximum") {
    std::vector<Range> nine(9, range(1));
    CHECK_ERROR(Shape(nine), "rank 9", "maximum rank 8");
    Array r8 = f32(Shape(std::vector<Range>(8, range(1))));
    CHECK_ERROR(stack(0, {r8, r8}), "stack", "rank 9", "maximum rank 8");
    CHECK_ERROR(unflatten(f32(Shape(std::vector<Range>(8, range(2)))), 0, {1, 2}), "unflatten",
                "rank 9");
    CHECK_ERROR(reshape(r8, Transform(8, {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {-1, 1, 0}})),
                "reshape", "rank 9");
}

TEST_CASE("errors: empty handles and bad leaves") {
    Array e;
    CHECK_ERROR(e + 1.0f, "empty hedra::Array handle");
    CHECK_ERROR(sum(e), "empty hedra::Array handle");
    CHECK_ERROR(e.shape(), "empty hedra::Array handle");
    CHECK_ERROR(compute(e), "empty hedra::Array handle");
    CHECK_ERROR(array(std::vector<float>(5), Shape::of({2, 3})), "array", "5 elements", "(2,3)");
    CHECK_ERROR(index_components(Shape::of({2, 3}), 2), "index_components",
                "axis 2 out of range for shape (2,3)");
    CHECK_ERROR(range(0, 5, 0), "step 0");
}

TEST_CASE("errors: placeholders and compiled programs") {
    ComputeOptions opts = zeros_backend();
    Array x = placeholder(Shape::of({3, 4}), DType::F32, "x");
    Array y = x * 2.0f + 1.0f;
    CHECK_ERROR(compute(y, opts), "compute", "placeholder 'x'", "(3,4)", "compile()",
                "created at test_bad_input.cpp:");
    Array z = placeholder(Shape::of({4}), DType::F32, "z");
    CHECK_ERROR(compile({y + z}, {x}, opts), "compile", "placeholder 'z'", "not among");
    CHECK_ERROR(compile({y}, {y}, opts), "compile", "input 0 is a map", "not a placeholder");
    CHECK_ERROR(compile({y}, {x, x}, opts), "compile", "given twice");
    CompiledProgram prog = compile({y}, {x}, opts);
    CHECK(prog.num_inputs() == 1);
    CHECK_ERROR(prog({}), "compiled program", "expected 1 inputs", "got 0");
    CHECK_ERROR(prog({HostArray({3, 5}, DType::F32)}), "compiled program", "shape (3,5)",
                "placeholder 'x'", "(3,4)");
    CHECK_ERROR(prog({HostArray({3, 4}, DType::I32)}), "compiled program", "dtype i32", "f32");
    auto out = prog({HostArray({3, 4}, DType::F32)});
    CHECK(out.at(0).sizes() == std::vector<std::int64_t>{3, 4});
}

TEST_CASE("errors: backends") {
    CHECK_ERROR(get_backend("no_such_backend"), "unknown backend 'no_such_backend'",
                "registered backends");
    ComputeOptions o;
    o.backend = "no_such_backend";
    CHECK_ERROR(compute(f32(Shape::of({2})) + 1.0f, o), "unknown backend 'no_such_backend'");
    CHECK_ERROR(register_backend("", [] { return std::make_shared<ZerosBackend>(); }),
                "register_backend", "empty");
    CHECK_ERROR(register_backend("x", nullptr), "register_backend", "no factory");
}

TEST_CASE("errors: matmul") {
    Array a = f32(Shape::of({3, 4})), b = f32(Shape::of({5, 6}));
    CHECK_ERROR(matmul(a, b), "matmul: inner sizes differ", "4", "5", "(3,4)", "(5,6)",
                "a created at test_bad_input.cpp:", "b at test_bad_input.cpp:");
    CHECK_ERROR(matmul(f32(Shape::of({2, 3, 4})), f32(Shape::of({5, 4, 6}))),
                "cannot broadcast in 'matmul'", "(2,3,4)", "(5,4,6)");
    CHECK_ERROR(matmul(constant(1.0), a), "matmul", "at least one axis");
    CHECK_ERROR(matmul(f32(Shape::of({4})), f32(Shape::of({3}))), "matmul: inner sizes differ");
}

TEST_CASE("errors: library shape functions") {
    Array a = f32(Shape::of({3, 4}));
    CHECK_ERROR(pad(a, {{-1, 0}, {0, 0}}), "pad: negative padding (-1, 0) on axis 0", "(3,4)");
    CHECK_ERROR(pad(a, {{1, 1}}), "pad", "1 (before, after) pairs", "(3,4)", "rank 2");
    CHECK_ERROR(unflatten(a, 1, {2, 3}), "unflatten", "(2,3)", "6 elements", "axis 1", "has 4");
    CHECK_ERROR(unflatten(a, 1, {-2, -2}), "unflatten", "negative");
    CHECK_ERROR(unflatten(f32(Shape{range(1, 7)}), 0, {2, 3}), "unflatten", "[1,7)", "rebase");
    CHECK_ERROR(unflatten(a, 2, {4}), "unflatten: axis 2 out of range");
    Array big = f32(Shape::of({300, 300, 2}));
    CHECK_ERROR(flatten(big), "flatten", "90000 pieces", "65536", "contract");
    CHECK_ERROR(flatten(f32(Shape{range(1, 3), range(2)})), "flatten", "axis 0", "[1,3)", "rebase");
    CHECK_ERROR(flatten(a, 1, 0), "flatten", "first axis 1 comes after last axis 0");
    CHECK_ERROR(transpose(a, {0, 0}), "transpose", "[0,0]", "not a permutation", "(3,4)");
    CHECK_ERROR(transpose(a, {0, 1, 2}), "transpose", "not a permutation");
}

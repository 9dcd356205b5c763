// Test programs for graph files and dumps: hedra-dump's built-in examples plus small graphs
// that use every node kind, every reduction, every dtype, host data, odd constants (inf, nan,
// -0) and strided or non-zero-based shapes. Each comes with inputs for its placeholders.
#pragma once

#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hedra.hpp"
#include "tools/dump_examples.hpp"

namespace hedra::test {

struct TestProgram {
    std::string name;
    tools::ExampleGraph graph;
    std::vector<HostArray> inputs; // one per placeholder
};

inline HostArray random_input(const Array& p, std::mt19937& rng) {
    HostArray h(p.shape().sizes(), p.dtype());
    std::uniform_real_distribution<double> u(-2.0, 2.0);
    for (std::int64_t i = 0; i < h.size(); ++i) {
        double v = u(rng);
        if (p.dtype() == DType::I64 || p.dtype() == DType::I32) v = std::floor((v + 2.0) * 2.4);
        if (p.dtype() == DType::Bool) v = v > 0;
        h.set_flat(i, v);
    }
    return h;
}

inline TestProgram with_inputs(std::string name, tools::ExampleGraph g, unsigned seed = 7) {
    std::mt19937 rng(seed);
    TestProgram p{std::move(name), std::move(g), {}};
    for (const Array& a : p.graph.placeholders)
        p.inputs.push_back(random_input(a, rng));
    return p;
}

inline std::vector<float> ramp(std::int64_t n, float scale = 0.25f, float shift = -1.0f) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
        v[static_cast<std::size_t>(i)] = shift + scale * static_cast<float>((i * 7) % 13);
    return v;
}

inline std::vector<TestProgram> test_programs() {
    std::vector<TestProgram> all;
    for (const tools::Example& e : tools::examples())
        all.push_back(with_inputs(e.name, e.build()));

    { // elementwise maps over host data and a placeholder, with broadcasting and casts
        Array a = array(ramp(12), Shape::of({3, 4}));
        Array b = placeholder(Shape::of({4}), DType::F32, "b");
        Array c = where(a > b, exp(a) - b, sqrt(abs(a)) * 2.0);
        Array d =
            cast(c, DType::F64) / 3.0 + cast(index_components(Shape::of({3, 4}), 0), DType::F64);
        all.push_back(with_inputs("elementwise", {{c, d, tanh(a) * sigmoid(b)}, {b}}));
    }
    { // every reduction, keepdims, all axes, a custom combiner
        Array x = placeholder(Shape::of({4, 5, 6}), DType::F32, "x");
        Array custom = reduce([](Sym acc, Sym v) { return select(acc > v, acc, v); },
                              -std::numeric_limits<double>::infinity(), x, {1});
        Array positive = x > 0.0;
        all.push_back(with_inputs(
            "reductions", {{sum(x, {1}), reduce(ReduceOp::Prod, x, {0, 2}, true), max(x),
                            min(x, {-1}), custom, reduce(ReduceOp::And, positive, {0}),
                            reduce(ReduceOp::Or, positive, {2}), sum(positive), mean(x, {0, 1})},
                           {x}}));
    }
    { // integers and bools: division by zero, comparisons, pow, index components
        Array i = index_components(Shape::of({5, 6}), 1);
        Array j = placeholder(Shape::of({5, 6}), DType::I32, "j");
        Array q = cast(i, DType::I32) / (j - 2);
        Array m = lazy([](Sym x, Sym y) { return x && y; }, i < 3, j != 4);
        all.push_back(
            with_inputs("integers", {{q, m, pow(j, 2), -j, where(m, q, j), i * 3 - 1}, {j}}));
    }
    { // fuse, overwrite, stack, pad, strided and shifted shapes
        Array a = placeholder(Shape::of({4, 3}), DType::F64, "a");
        Array even = reshape(a, Shape{range(0, 4, 2), range(3)});
        Array odd = reshape(a, Shape{range(1, 4, 2), range(3)}) * 10.0;
        Array fused = fuse({even, odd});
        Array shifted = reshape(a, Transform::shift({1, 5}));
        Array stacked = stack(1, {a, a * 2.0, a + 1.0});
        Array padded = pad(a, {{1, 2}, {0, 1}}, -1.0);
        Array ow = overwrite({padded, reshape(a * 0.5, Shape{range(1, 3), range(0, 2)})});
        all.push_back(with_inputs("fuse_stack", {{fused, shifted, stacked, padded, ow}, {a}}));
    }
    { // views: transpose, general affine maps (diagonal, window), broadcasting, flatten
        Array a = placeholder(Shape::of({6, 6}), DType::F32, "a");
        Array diag = view(a, Shape::of({6}), AffineMap(1, 2, {1, 1}, {0, 0}));
        Array window =
            view(a, Shape::of({2, 2, 3, 3}), AffineMap(4, 2, {2, 0, 1, 0, 0, 2, 0, 1}, {0, 0}));
        Array flat = flatten(a);
        Array back = unflatten(flat * 2.0, 0, {3, 12});
        all.push_back(with_inputs("views", {{transpose(a), diag, sum(window, {2, 3}),
                                             broadcast_to(diag, Shape::of({2, 6})), back},
                                            {a}}));
    }
    { // constants that JSON cannot write as numbers, and -0
        Array a = placeholder(Shape::of({5}), DType::F32, "a");
        double inf = std::numeric_limits<double>::infinity();
        Array big = minimum(a, inf) + maximum(a, -inf);
        Array nan = where(a > 100.0, std::numeric_limits<double>::quiet_NaN(), a);
        Array negzero = a * -0.0;
        Array third = cast(a, DType::F64) + constant(1.0 / 3.0, DType::F64);
        all.push_back(with_inputs("constants", {{big, nan, negzero, third}, {a}}));
    }
    { // host data only (no placeholder), bool and i64 data
        Array a = array(ramp(20, 0.5f), Shape::of({4, 5}));
        Array b = array(ramp(15, -0.25f, 1.0f), Shape::of({5, 3}));
        Array flags = array(std::vector<bool>{true, false, true, true}, Shape::of({4}));
        Array ids = array(std::vector<std::int64_t>{3, -1, 7, 0}, Shape::of({4}));
        Array c = matmul(a, b);
        all.push_back(
            with_inputs("host_data", {{c, where(flags, cast(ids, DType::F32), sum(c, {1}))}, {}}));
    }
    return all;
}

// The program run on the reference backend with its inputs.
inline std::vector<HostArray> run_reference(const std::vector<Array>& outputs,
                                            const std::vector<Array>& placeholders,
                                            const std::vector<HostArray>& inputs) {
    ComputeOptions options;
    options.backend = "reference";
    return compile(outputs, placeholders, options)(inputs);
}

} // namespace hedra::test

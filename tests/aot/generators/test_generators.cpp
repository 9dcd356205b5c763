// Generators for tests/aot: a small program with a symbolic size and an output that aliases an
// input, and one that throws (hedra-aot must exit non-zero naming it).
#include <stdexcept>

#include "aot/generator.hpp"
#include "hedra.hpp"

hedra::aot::Generated scale_and_sum(const hedra::aot::GeneratorParams& params) {
    using namespace hedra;
    Array x =
        placeholder(Shape{dynamic("n", params.integer("max", 1000)), range(3)}, DType::F32, "x");
    Array k = placeholder(Shape(), DType::F32, "k");
    return {{x, k}, {x * k, sum(x, {0, 1}), k}, {"scaled", "total", "k_again"}};
}
HEDRA_AOT_GENERATOR(scale_and_sum)

hedra::aot::Generated always_throws(const hedra::aot::GeneratorParams&) {
    throw std::runtime_error("this generator always fails");
}
HEDRA_AOT_GENERATOR(always_throws)

// Static sizes, for the cuda target: relu(x·w) and a sum.
hedra::aot::Generated cuda_demo(const hedra::aot::GeneratorParams&) {
    using namespace hedra;
    Array x = placeholder(Shape::of({8, 16}), DType::F32, "x");
    Array w = placeholder(Shape::of({16, 4}), DType::F32, "w");
    Array y = lazy([](auto v) { return max(v, 0.0f); }, matmul(x, w));
    return {{x, w}, {y, sum(x, {0, 1})}, {"y", "total"}};
}
HEDRA_AOT_GENERATOR(cuda_demo)

// Host data in the graph (weights the library embeds): y = x · weights, elementwise.
hedra::aot::Generated with_weights(const hedra::aot::GeneratorParams&) {
    using namespace hedra;
    Array x = placeholder(Shape::of({4}), DType::F32, "x");
    Array weights = array(std::vector<float>{0.5f, -1.0f, 2.0f, 4.0f}, Shape::of({4}));
    return {{x}, {x * weights}, {"y"}};
}
HEDRA_AOT_GENERATOR(with_weights)

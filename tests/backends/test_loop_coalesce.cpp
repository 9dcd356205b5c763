// loop_coalesce: contiguous loop nests printed as one loop, and the nests that must not be.
#include <doctest/doctest.h>

#include "backends/openmp/lower.hpp"
#include "hedra.hpp"
#include "scheduler/partition.hpp"

using namespace hedra;

namespace {

std::string code_of(const std::vector<Array>& outputs, const std::vector<Array>& inputs) {
    std::vector<NodePtr> out, in;
    for (const Array& a : outputs)
        out.push_back(a.node());
    for (const Array& a : inputs)
        in.push_back(a.node());
    backend::LowerOptions options;
    options.min_parallel_work = 1 << 30; // one sequential nest, easy to read
    return backend::lower(sched::partition(out, in), options).source;
}

} // namespace

TEST_CASE("loop coalescing: image rows under a channel bias become one loop per channel") {
    Array x = placeholder(Shape::of({8, 3, 14, 14}), DType::F32, "x");
    Array b = placeholder(Shape::of({3}), DType::F32, "b");
    Array bias = reshape(b, Transform(1, {TransformAxis{0, 1, 0}, TransformAxis{-1, 1, 0},
                                          TransformAxis{-1, 1, 0}}));
    std::string code = code_of({relu(x + bias)}, {x, b});
    CHECK(code.find("hd_f0 < 196L") != std::string::npos); // (14, 14) coalesced, not (3, 14, 14)
    // Without the bias every axis is contiguous: one loop over all elements.
    CHECK(code_of({relu(x)}, {x}).find("< 4704L") != std::string::npos);
}

TEST_CASE("loop coalescing: strided and index-reading nests keep their loops; values agree") {
    Array x = placeholder(Shape::of({6, 10, 10}), DType::F32, "x");
    Array every_other = reshape(x, Shape{range(6), range(0, 10, 2), range(0, 10, 2)});
    std::string code = code_of({every_other * 2.0f}, {x});
    CHECK(code.find("long hd_f0") == std::string::npos);
    Array iota = index_components(Shape::of({6, 10, 10}), 2);
    CHECK(code_of({x * iota}, {x}).find("long hd_f0") == std::string::npos);

    std::vector<float> xv(600);
    for (std::size_t i = 0; i < xv.size(); ++i)
        xv[i] = static_cast<float>(i % 17) - 8.0f;
    HostArray xin = HostArray::from(xv, {6, 10, 10});
    CompiledProgram p = compile({relu(x) + 1.0f, x * iota}, {x});
    std::vector<HostArray> got = p({xin});
    for (std::int64_t i = 0; i < 600; ++i) {
        CHECK(got[0].flat(i) == std::max(0.0f, xv[i]) + 1.0f);
        CHECK(got[1].flat(i) == xv[i] * static_cast<float>(i % 10));
    }
}

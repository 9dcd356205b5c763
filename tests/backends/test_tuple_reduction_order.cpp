// The openmp schedule of a reduction of several values: its step folds along the reduced axis
// innermost, so the accumulators stay in registers (scheduler/stride_order.cpp), rather than
// running over the kept axis with a load and a store of every accumulator per element.
#include <doctest/doctest.h>

#include "backends/openmp/lower.hpp"
#include "hedra.hpp"
#include "scheduler/partition.hpp"

using namespace hedra;

TEST_CASE("a reduction of several values folds along its reduced axis innermost") {
    Array x = placeholder(Shape::of({64, 100}), DType::F32, "x");
    Array best = argmax(x, 1);
    backend::LowerOptions options;
    options.min_parallel_work = 1 << 30;
    std::string code = backend::lower(sched::partition({best.node()}, {x.node()}), options).source;
    // The loop around the step is the last `for` before the step binds the reduced counter i1.
    std::size_t step = code.find("const long i1 = ");
    REQUIRE(step != std::string::npos);
    std::size_t loop = code.rfind("for (", step);
    REQUIRE(loop != std::string::npos);
    std::string header = code.substr(loop, code.find('\n', loop) - loop);
    CAPTURE(code);
    CHECK(header.find("<= 99L)") != std::string::npos); // over the 100 reduced elements
    CHECK(code.find("#pragma omp simd", loop) > step);  // not a vector loop over the rows
}

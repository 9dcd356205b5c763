// The work of compiling grows linearly with the program: counted (kernels, kernels through
// isl, printed source), not timed, so the checks are deterministic.
#include <doctest/doctest.h>

#include "backends/openmp/lower.hpp"
#include "hedra.hpp"
#include "scheduler/partition.hpp"

using namespace hedra;

namespace {

struct Work {
    double kernels = 0, source = 0; // kernels, characters of printed source
};

Work work_of(const Array& out, const std::vector<Array>& inputs) {
    std::vector<NodePtr> nodes;
    for (const Array& a : inputs)
        nodes.push_back(a.node());
    poly::ProgramIR ir = sched::partition({out.node()}, nodes);
    backend::LoweredProgram lowered = backend::lower(ir, {});
    return {double(ir.kernels.size()), double(lowered.source.size())};
}

// A chain of n elementwise operations on one array, a math function every fourth.
Work chain(int n) {
    Array x = placeholder(Shape::of({64, 32}), DType::F32, "x");
    Array h = x;
    for (int i = 0; i < n; ++i)
        h = i % 4 == 3 ? tanh(h) : h * 0.5f + float(i % 7);
    return work_of(h, {x});
}

} // namespace

TEST_CASE("compile work: a chain of N elementwise operations costs O(N)") {
    Work w200 = chain(200), w400 = chain(400), w800 = chain(800);
    CHECK(w800.kernels <= 2.2 * w400.kernels);
    CHECK(w400.kernels <= 2.2 * w200.kernels);
    // The printed source (what clang compiles) grows with the chain, not its square: one
    // kernel's parallel parts each take only the buffers they use (all of the kernel's made
    // it quadratic: 100 -> 200 -> 400 operations gave 15 -> 21 -> 47 KB, now 15 -> 21 -> 36).
    CHECK(w800.source - w400.source <= 2.2 * (w400.source - w200.source));
    CHECK(w800.source <= 2.2 * w400.source);
}

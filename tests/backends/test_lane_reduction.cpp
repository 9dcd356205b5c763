// Row reductions with one accumulator per vector lane (scheduler/lane_reduction.hpp chooses, the
// C renderer prints): a
// float max, min or sum along an innermost loop into one element. Max and min must equal the
// reference bit for bit (any order gives the same value, NaN included); sums within rounding.
// Rows of every length around the lane count exercise the remainder loop.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "backends/openmp/lower.hpp"
#include "hedra.hpp"
#include "scheduler/lane_reduction.hpp"
#include "scheduler/lower.hpp"
#include "scheduler/partition.hpp"

using namespace hedra;

TEST_CASE("lane reductions: a row max prints lane accumulators") {
    Array x = placeholder(Shape::of({64, 100}), DType::F32, "x");
    backend::LowerOptions options;
    options.min_parallel_work = 1 << 30;
    std::string code =
        backend::lower(sched::partition({max(x, {1}).node()}, {x.node()}), options).source;
    CHECK(code.find("lane reduction") != std::string::npos);
    // A reduction over the outer axis keeps its loops (the write moves with the inner loop).
    std::string cols =
        backend::lower(sched::partition({max(x, {0}).node()}, {x.node()}), options).source;
    CHECK(cols.find("lane reduction") == std::string::npos);
}

namespace {

// The lane counts the pass put on the loops of kernel 0, for `cpu`.
std::vector<int> lanes_chosen(const sched::AstNode& n) {
    std::vector<int> out;
    if (n.kind == sched::AstNode::Kind::For && n.reduction_lanes > 0)
        out.push_back(n.reduction_lanes);
    for (const auto* list : {&n.body, &n.else_body})
        for (const sched::AstNode& c : *list)
            for (int l : lanes_chosen(c))
                out.push_back(l);
    return out;
}

std::vector<int> lanes_for(const poly::ProgramIR& ir, const sched::CpuTarget& cpu) {
    sched::KernelPassOptions options;
    options.cpu = cpu;
    return lanes_chosen(sched::lower_kernels(ir, options).asts.at(0));
}

} // namespace

TEST_CASE("lane reductions: the pass chooses the lanes from the CpuTarget it is given") {
    Array x = placeholder(Shape::of({64, 1000}), DType::F32, "x");
    poly::ProgramIR ir = sched::partition({sum(x, {1}).node()}, {x.node()});
    // Two vectors of f32 lanes.
    CHECK(lanes_for(ir, sched::cpu_target_named("avx2")) == std::vector<int>{16});
    CHECK(lanes_for(ir, sched::cpu_target_named("avx512")) == std::vector<int>{32});
    // A short row takes fewer lanes (halved down to 32 bytes while the row is under 4 x lanes).
    Array s = placeholder(Shape::of({64, 84}), DType::F32, "s");
    poly::ProgramIR short_rows = sched::partition({max(s, {1}).node()}, {s.node()});
    CHECK(lanes_for(short_rows, sched::cpu_target_named("avx512")) == std::vector<int>{16});
    // None where the pass is off (the GPU path turns it off).
    sched::KernelPassOptions off;
    off.lane_reductions = false;
    CHECK(lanes_chosen(sched::lower_kernels(ir, off).asts.at(0)).empty());
}

TEST_CASE("lane reductions: max, min and sum of rows of every length against the reference") {
    std::mt19937 gen(3);
    std::uniform_real_distribution<float> dist(-50.0f, 50.0f);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (int cols : {1, 7, 15, 16, 17, 31, 33, 48, 100}) {
        CAPTURE(cols);
        const int rows = 5;
        std::vector<float> v(static_cast<std::size_t>(rows * cols));
        for (float& f : v)
            f = dist(gen);
        v[static_cast<std::size_t>(2 * cols + cols / 2)] = nan; // row 2 has a NaN
        v[static_cast<std::size_t>(3 * cols)] = -std::numeric_limits<float>::infinity();
        Array x = array(v, Shape::of({rows, cols}));
        std::vector<Array> outs{max(x, {1}), min(x, {1}), sum(x, {1})};
        ComputeOptions ref, omp;
        ref.backend = "reference";
        omp.backend = "openmp";
        std::vector<HostArray> want = compute(outs, ref), got = compute(outs, omp);
        for (int r = 0; r < rows; ++r) {
            CAPTURE(r);
            for (int k = 0; k < 2; ++k) {
                double w = want[k].flat(r), g = got[k].flat(r);
                CHECK((std::memcmp(&w, &g, sizeof w) == 0 || (std::isnan(w) && std::isnan(g))));
            }
            double w = want[2].flat(r), g = got[2].flat(r);
            if (std::isnan(w))
                CHECK(std::isnan(g));
            else if (std::isinf(w))
                CHECK(g == w);
            else
                CHECK(g == doctest::Approx(w).epsilon(1e-5));
        }
    }
}

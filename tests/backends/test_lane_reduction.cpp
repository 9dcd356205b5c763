// Row reductions with one accumulator per vector lane (c_renderer.hpp, lane_reductions): a
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

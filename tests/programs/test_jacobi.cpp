// Whole program: 2D Jacobi sweeps. The interior is replaced by the mean of its 4 neighbours,
// each a selection (reshape by shape) shifted back onto the interior (reshape by transform),
// and written back with overwrite. Checked against a naive loop.
#include <doctest/doctest.h>

#include <cmath>

#include "hedra.hpp"

using namespace hedra;

namespace {

constexpr int kRows = 6, kCols = 7;

Array jacobi_sweep(const Array& u) {
    std::int64_t n = u.shape()[0].size, m = u.shape()[1].size;
    auto neighbour = [&](std::int64_t di, std::int64_t dj) {
        Shape source{range(1 + di, n - 1 + di), range(1 + dj, m - 1 + dj)};
        return reshape(reshape(u, source), Transform::shift({-di, -dj}));
    };
    Array interior =
        (neighbour(-1, 0) + neighbour(1, 0) + neighbour(0, -1) + neighbour(0, 1)) * 0.25;
    return overwrite({u, interior});
}

std::vector<double> initial_grid() {
    std::vector<double> g(kRows * kCols);
    for (int i = 0; i < kRows; ++i)
        for (int j = 0; j < kCols; ++j) {
            bool boundary = i == 0 || j == 0 || i == kRows - 1 || j == kCols - 1;
            g[i * kCols + j] = boundary ? 1.0 + i + 0.5 * j : std::cos(0.3 * i * j);
        }
    return g;
}

std::vector<double> naive_sweep(const std::vector<double>& u) {
    std::vector<double> v = u;
    for (int i = 1; i < kRows - 1; ++i)
        for (int j = 1; j < kCols - 1; ++j)
            v[i * kCols + j] = 0.25 * (u[(i - 1) * kCols + j] + u[(i + 1) * kCols + j] +
                                       u[i * kCols + j - 1] + u[i * kCols + j + 1]);
    return v;
}

void check_grid(const HostArray& h, const std::vector<double>& expect, double eps) {
    REQUIRE(h.sizes() == std::vector<std::int64_t>{kRows, kCols});
    auto got = h.to_doubles();
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i);
        CHECK(got[i] == doctest::Approx(expect[i]).epsilon(eps));
    }
}

} // namespace

TEST_CASE("program: jacobi sweeps chained lazily") {
    auto g = initial_grid();
    Array u = array(g, Shape::of({kRows, kCols}));
    auto expect = g;
    for (int s = 0; s < 4; ++s) {
        u = jacobi_sweep(u);
        expect = naive_sweep(expect);
    }
    check_grid(compute(u), expect, 1e-12);
}

TEST_CASE("program: jacobi sweeps computed one at a time in f32") {
    auto g = initial_grid();
    std::vector<float> gf(g.begin(), g.end());
    Array u = array(gf, Shape::of({kRows, kCols}));
    std::vector<double> expect(gf.begin(), gf.end());
    for (int s = 0; s < 3; ++s) {
        u = jacobi_sweep(u);
        expect = naive_sweep(expect);
        HostArray h = compute(u);
        CHECK(h.dtype() == DType::F32);
        check_grid(h, expect, 1e-5);
        CHECK(u.value().has_value());
    }
}

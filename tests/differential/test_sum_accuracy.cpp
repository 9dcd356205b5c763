// Long f32 reductions accumulate with bounded error on every backend: sums of 10^7 and 10^8
// values, row and column sums, and a matmul with K = 10^5, each against a double-precision sum
// computed here. A naive f32 loop is off by ~5e-4 at 10^7 (each addition rounds against a
// running total that is 10^7 times larger than the addend); blocked accumulation keeps the
// error near K_block * eps instead.
#include "differential/differential.hpp"

#include <chrono>
#include <cmath>
#include <random>

using namespace hedra;

namespace {

std::vector<float> uniform(std::int64_t n, unsigned seed) {
    std::vector<float> v(static_cast<std::size_t>(n));
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> d(0.0f, 1.0f);
    for (float& x : v)
        x = d(g);
    return v;
}

double relative_error(double got, double want) {
    return std::abs(got - want) / std::abs(want);
}

} // namespace

TEST_CASE("f32 sums of 10^7 and 10^8 elements are accurate to 1e-6") {
    for (std::int64_t n : {std::int64_t{10'000'000}, std::int64_t{100'000'000}}) {
        std::vector<float> v = uniform(n, 7);
        double exact = 0;
        for (float x : v)
            exact += x;
        for (std::string backend : {"reference", "openmp"}) {
            CAPTURE(n);
            CAPTURE(backend);
            Array a = array(v.data(), Shape::of({n}), Ownership::Borrow);
            auto t0 = std::chrono::steady_clock::now();
            HostArray s = compute(sum(a), test::on_backend(backend));
            double seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            double err = relative_error(s.flat(0), exact);
            MESSAGE(backend << " n=" << n << ": relative error " << err << " in " << seconds
                            << " s");
            CHECK(err <= 1e-6);
        }
    }
}

TEST_CASE("f32 row and column sums are accurate to 1e-6") {
    const std::int64_t rows = 8, cols = 2'000'000;
    std::vector<float> v = uniform(rows * cols, 8);
    Array m = array(v.data(), Shape::of({rows, cols}), Ownership::Borrow);
    Array t = transpose(m);
    for (std::string backend : {"reference", "openmp"}) {
        CAPTURE(backend);
        auto r = compute(std::vector<Array>{sum(m, {1}), sum(t, {0}), mean(m, {1})},
                         test::on_backend(backend));
        for (std::int64_t i = 0; i < rows; ++i) {
            double e = 0;
            for (std::int64_t j = 0; j < cols; ++j)
                e += v[static_cast<std::size_t>(i * cols + j)];
            CHECK(relative_error(r[0].flat(i), e) <= 1e-6);
            CHECK(relative_error(r[1].flat(i), e) <= 1e-6);
            CHECK(relative_error(r[2].flat(i), e / static_cast<double>(cols)) <= 1e-6);
        }
    }
}

TEST_CASE("a matmul with K = 10^5 is accurate to 1e-6") {
    const std::int64_t m = 4, k = 100'000, n = 8;
    std::vector<float> a = uniform(m * k, 9), b = uniform(k * n, 10);
    Array A = array(a, Shape::of({m, k})), B = array(b, Shape::of({k, n}));
    for (std::string backend : {"reference", "openmp"}) {
        CAPTURE(backend);
        HostArray c = compute(matmul(A, B), test::on_backend(backend));
        for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j) {
                double e = 0;
                for (std::int64_t q = 0; q < k; ++q)
                    e += static_cast<double>(a[static_cast<std::size_t>(i * k + q)]) *
                         b[static_cast<std::size_t>(q * n + j)];
                CHECK(relative_error(c.flat(i * n + j), e) <= 1e-6);
            }
    }
}

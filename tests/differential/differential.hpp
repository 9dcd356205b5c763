// The differential harness: evaluate the same graph on "openmp" and on "reference" (the oracle)
// and compare, at 1 and 2 threads and several tile sizes (default, 1, 3, mixed). Integer, bool
// and non-reduction results must agree bit for bit; float reductions within a tolerance
// (summation order is the schedule's choice).
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

#include "backends/openmp/openmp_backend.hpp"
#include "hedra.hpp"

namespace hedra::test {

inline std::shared_ptr<Backend> openmp_backend() {
    static const bool registered = [] {
        // Parallel regions even for the tests' small kernels, so 2 threads really run 2.
        setenv("HEDRA_MIN_PARALLEL_WORK", "0", 1);
        bool known = false;
        for (const std::string& n : backend_names())
            known = known || n == "openmp";
        if (!known)
            register_backend("openmp", [] { return std::make_shared<backend::OpenMPBackend>(); });
        return true;
    }();
    (void)registered;
    return get_backend("openmp");
}

enum class Compare { Exact, Tolerance };

struct Tolerance {
    double rtol = 2e-5;
    double atol = 1e-5;
};

inline void compare_arrays(const HostArray& got, const HostArray& want, Compare mode,
                           Tolerance tol) {
    REQUIRE(got.sizes() == want.sizes());
    REQUIRE(got.dtype() == want.dtype());
    bool exact = mode == Compare::Exact || !is_float(want.dtype());
    int reported = 0;
    for (std::int64_t i = 0; i < want.size(); ++i) {
        double g = got.flat(i), w = want.flat(i);
        bool ok;
        if (exact && is_float(want.dtype()))
            ok = (std::isnan(g) && std::isnan(w)) || std::memcmp(&g, &w, sizeof g) == 0 ||
                 (g == 0 && w == 0 && std::signbit(g) == std::signbit(w));
        else if (exact)
            ok = g == w;
        else
            ok = (std::isnan(g) && std::isnan(w)) ||
                 std::fabs(g - w) <= tol.atol + tol.rtol * std::fabs(w);
        if (!ok && reported++ < 5) {
            INFO("element " << i << ": openmp " << g << ", reference " << w);
            CHECK(ok);
        }
    }
    CHECK(reported == 0);
}

struct RunConfig {
    int threads;
    std::vector<std::int64_t> tiles;
};

inline std::vector<RunConfig> run_configs() {
    return {{1, {}}, {2, {}}, {2, {1}}, {1, {3}}, {2, {16, 8, 5}}};
}

// Evaluates `outputs` on both backends (never memoizing) and compares every configuration.
inline void check_differential(const std::vector<Array>& outputs, Compare mode = Compare::Exact,
                               Tolerance tol = {}) {
    std::vector<NodePtr> nodes;
    for (const Array& a : outputs)
        nodes.push_back(a.node());
    std::vector<HostArray> want = get_backend("reference")->evaluate(nodes, {});
    auto omp = openmp_backend();
    for (const RunConfig& rc : run_configs()) {
        CAPTURE(rc.threads);
        CAPTURE(rc.tiles.size());
        CompileOptions options;
        options.num_threads = rc.threads;
        options.tile_sizes = rc.tiles;
        std::vector<HostArray> got = omp->evaluate(nodes, options);
        REQUIRE(got.size() == want.size());
        for (std::size_t k = 0; k < want.size(); ++k) {
            CAPTURE(k);
            compare_arrays(got[k], want[k], mode, tol);
        }
    }
}

// Every element of `h` as a double, in row-major order.
inline std::vector<double> flat_values(const HostArray& h) {
    std::vector<double> v;
    for (std::int64_t i = 0; i < h.size(); ++i)
        v.push_back(h.flat(i));
    return v;
}

inline ComputeOptions on_backend(const std::string& name) {
    ComputeOptions o;
    o.backend = name;
    return o;
}

inline std::vector<float> random_values(std::size_t n, unsigned seed, float lo = -1, float hi = 1) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float& x : v)
        x = dist(gen);
    return v;
}

inline std::vector<std::int32_t> random_ints(std::size_t n, unsigned seed, int lo, int hi) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> dist(lo, hi);
    std::vector<std::int32_t> v(n);
    for (auto& x : v)
        x = dist(gen);
    return v;
}

inline Array random_array(const Shape& shape, unsigned seed) {
    return array(random_values(static_cast<std::size_t>(shape.size()), seed), shape);
}

} // namespace hedra::test

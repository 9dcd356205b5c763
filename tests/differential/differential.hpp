// The differential harness: evaluate the same graph on every registered code-generating backend
// and on "reference" (the oracle) and compare: openmp at 1 and 2 threads and several tile sizes
// (default, 1, 3, mixed); the other backends (c: a system compiler run per program) at the
// default and one tile size; cuda where a device is present (without one, tests/cuda emulates it).
// Integer, bool and non-reduction results must agree bit for bit; float reductions within a
// tolerance (summation order is the schedule's choice).
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

// Whether a backend can run here (cuda throws "no CUDA device" on a machine without one).
inline bool backend_runs(const std::string& name) {
    try {
        get_backend(name)->evaluate({full(Shape::of({2}), 1.0).node()}, {});
        return true;
    } catch (const Error&) {
        return false;
    }
}

// Every registered backend but the reference interpreter that can run here, openmp first.
inline std::vector<std::string> generating_backends() {
    static const std::vector<std::string> names = [] {
        openmp_backend();
        std::vector<std::string> out{"openmp"};
        for (const std::string& n : backend_names())
            if (n != "reference" && n != "openmp" && backend_runs(n)) out.push_back(n);
        return out;
    }();
    return names;
}

enum class Compare { Exact, Tolerance };

struct Tolerance {
    double rtol = 2e-5;
    double atol = 1e-5;
};

inline void compare_arrays(const HostArray& got, const HostArray& want, Compare mode, Tolerance tol,
                           const std::string& backend = "openmp") {
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
            INFO("element " << i << ": " << backend << " " << g << ", reference " << w);
            CHECK(ok);
        }
    }
    CHECK(reported == 0);
}

struct RunConfig {
    int threads;
    std::vector<std::int64_t> tiles;
};

inline std::vector<RunConfig> run_configs(const std::string& backend = "openmp") {
    if (backend != "openmp") return {{1, {}}, {1, {3}}};
    return {{1, {}}, {2, {}}, {2, {1}}, {1, {3}}, {2, {16, 8, 5}}};
}

// Evaluates `outputs` on both backends (never memoizing) and compares every configuration.
inline void check_differential(const std::vector<Array>& outputs, Compare mode = Compare::Exact,
                               Tolerance tol = {}) {
    std::vector<NodePtr> nodes;
    for (const Array& a : outputs)
        nodes.push_back(a.node());
    std::vector<HostArray> want = get_backend("reference")->evaluate(nodes, {});
    for (const std::string& name : generating_backends()) {
        CAPTURE(name);
        auto backend = get_backend(name);
        for (const RunConfig& rc : run_configs(name)) {
            CAPTURE(rc.threads);
            CAPTURE(rc.tiles.size());
            CompileOptions options;
            options.num_threads = rc.threads;
            options.tile_sizes = rc.tiles;
            std::vector<HostArray> got = backend->evaluate(nodes, options);
            REQUIRE(got.size() == want.size());
            for (std::size_t k = 0; k < want.size(); ++k) {
                CAPTURE(k);
                compare_arrays(got[k], want[k], mode, tol, name);
            }
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

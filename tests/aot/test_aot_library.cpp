// Libraries built at build time by hedra_add_aot_library (tests/CMakeLists.txt), called as a
// consumer calls them: from a generator (a symbolic size, an output that is an input) and from
// a graph file; each against the JIT's results, bit for bit.
#include <doctest/doctest.h>

#include <cstdlib>
#include <vector>

#include "hedra.hpp"
#include "scale_and_sum.h"
#include "sum_twice.h"
#include "with_weights.h"

TEST_CASE("a generator's library: symbolic size, workspace inside or the caller's") {
    using namespace hedra;
    const std::int64_t n = 37;
    std::vector<float> x(static_cast<std::size_t>(n * 3));
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = 0.25f * static_cast<float>(i) - 3.0f;
    const float k = 1.5f;
    std::vector<float> scaled(x.size(), -1.0f);
    float total = 0, k_again = 0;
    hedra_aot::scale_and_sum(n, x.data(), &k, scaled.data(), &total, &k_again);

    Array xp = placeholder(Shape{dynamic("n", 1000), range(3)}, DType::F32, "x");
    Array kp = placeholder(Shape(), DType::F32, "k");
    CompiledProgram jit = compile({xp * kp, sum(xp, {0, 1})}, {xp, kp});
    auto r = jit({HostArray::from(x, {n, 3}), HostArray::from(std::vector<float>{k}, {})});
    auto jit_scaled = r[0].values<float>();
    CHECK(std::vector<float>(jit_scaled.begin(), jit_scaled.end()) == scaled);
    CHECK(r[1].values<float>()[0] == total);
    CHECK(k_again == k);

    void* workspace = std::aligned_alloc(64, scale_and_sum_workspace_bytes() + 64);
    float again = 0;
    hedra_aot::scale_and_sum(n, x.data(), &k, scaled.data(), &again, &k_again, workspace, 1);
    CHECK(again == total);
    std::free(workspace);

    CHECK(scale_and_sum_c(0, x.data(), &k, scaled.data(), &total, &k_again, nullptr, 0) != 0);
    CHECK_THROWS_WITH(hedra_aot::scale_and_sum(1001, x.data(), &k, scaled.data(), &total, &k_again),
                      "scale_and_sum: n is outside 1..1000");
}

TEST_CASE("a graph file's library") {
    const float x[3] = {1.0f, 2.5f, -4.0f};
    float y = 0;
    hedra_aot::sum_twice(x, &y);
    CHECK(y == -1.0f);
}

TEST_CASE("host data in the graph is embedded in the library") {
    const float x[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    float y[4] = {};
    hedra_aot::with_weights(x, y);
    CHECK(y[0] == 0.5f);
    CHECK(y[1] == -2.0f);
    CHECK(y[2] == 6.0f);
    CHECK(y[3] == 16.0f);
}

// The pass list (scheduler/lower.hpp) is the list a compile runs: every pass a compile times
// under HEDRA_TIME_PASSES is in pass_list(), and they run in its order.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "core/dump.hpp"
#include "hedra.hpp"
#include "scheduler/lower.hpp"
#include "support/pass_timers.hpp"

using namespace hedra;

TEST_CASE("the pass list names every pass once, each with a unit and a description") {
    const auto& passes = sched::pass_list();
    REQUIRE(passes.size() > 10);
    for (std::size_t i = 0; i < passes.size(); ++i) {
        CAPTURE(passes[i].name);
        CHECK(test::pass_position(std::string(passes[i].name)) == static_cast<int>(i));
        CHECK((passes[i].unit == "program" || passes[i].unit == "gpu" ||
               passes[i].unit == "kernel" || passes[i].unit == "backend"));
        CHECK(!passes[i].what.empty());
    }
}

TEST_CASE("an openmp compile runs the passes of the list, in its order") {
    setenv("HEDRA_TIME_PASSES", "1", 1);
    dump::reset_pass_times();
    // A Jacobi sweep of a shape no other test compiles (the program cache misses): an
    // overwrite, so the dead-writes pass runs too.
    Array u = placeholder(Shape::of({13, 9}), DType::F32, "u");
    auto neighbour = [&](std::int64_t di, std::int64_t dj) {
        Shape source{range(1 + di, 12 + di), range(1 + dj, 8 + dj)};
        return reshape(reshape(u, source), Transform::shift({-di, -dj}));
    };
    Array c = overwrite(
        {u, (neighbour(-1, 0) + neighbour(1, 0) + neighbour(0, -1) + neighbour(0, 1)) * 0.25});
    ComputeOptions o;
    o.backend = "openmp";
    compile({c}, {u}, o);
    std::vector<std::string> names = test::timed_passes();
    unsetenv("HEDRA_TIME_PASSES");
    dump::reset_pass_times();
    test::check_in_list_order(names, {"canonicalize", "partition.decide", "partition.kernels",
                                      "narrow-domains", "scop", "dependences", "dead-writes",
                                      "schedule", "ast", "print", "jit"});
}

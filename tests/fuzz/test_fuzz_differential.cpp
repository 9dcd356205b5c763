// The fixed-seed differential fuzz batch: random programs on the reference and openmp backends
// (1 and 2 threads, default and random tile sizes); a failure prints the seed, the message and
// a shrunk C++ reproducer. Longer soaks: `hedra-fuzz --count N --seed S --shrink`.
#include <doctest/doctest.h>

#include "fuzz/lib/fuzz_generator.hpp"
#include "fuzz/lib/fuzz_runner.hpp"
#include "fuzz/lib/fuzz_shrink.hpp"

using namespace hedra;
using namespace hedra::fuzz;

namespace {

constexpr std::uint64_t kFirstSeed = 1;
constexpr std::uint64_t kPrograms = 120;

void run_batch(std::uint64_t first, std::uint64_t count) {
    for (std::uint64_t seed = first; seed < first + count; ++seed) {
        Generated g = generate(seed);
        RunResult r = run_differential(g.program, configs_for(seed));
        if (r.outcome == Outcome::Pass) continue;
        std::vector<RunConfig> failing = {r.config};
        Outcome kind = r.outcome;
        FuzzProgram small = shrink(
            g.program,
            [&](const FuzzProgram& p) { return run_differential(p, failing, {false, false}).outcome == kind; },
            80);
        FAIL_CHECK("fuzz seed " << seed << ": " << outcome_name(r.outcome) << " ["
                                << r.config.to_string() << "]: " << r.message << "\n"
                                << to_cpp(small, "fuzz seed " + std::to_string(seed)));
    }
}

} // namespace

TEST_CASE("fuzz: fixed-seed differential batch, reference vs openmp") {
    run_batch(kFirstSeed, kPrograms);
}

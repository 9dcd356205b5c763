// The fixed-seed differential fuzz batch: random programs on the reference and openmp backends
// (1 and 2 threads, default and random tile sizes); a failure prints the seed, the message and
// a shrunk C++ reproducer. Longer soaks: `hedra-fuzz --count N --seed S --shrink`.
#include <doctest/doctest.h>

#include <algorithm>

#include "fuzz/lib/fuzz_generator.hpp"
#include "fuzz/lib/fuzz_runner.hpp"
#include "fuzz/lib/fuzz_shrink.hpp"

using namespace hedra;
using namespace hedra::fuzz;

namespace {

constexpr std::uint64_t kFirstSeed = 1;
constexpr std::uint64_t kPrograms = 120;

void run_batch(std::uint64_t first, std::uint64_t count, std::uint64_t batch) {
    for (std::uint64_t k = first; k < first + count; k += batch) {
        std::vector<FuzzProgram> programs;
        for (std::uint64_t seed = k; seed < k + batch; ++seed)
            programs.push_back(generate(seed).program);
        std::vector<RunResult> results = run_differential_batch(programs, configs_for(k));
        for (std::size_t j = 0; j < programs.size(); ++j) {
            const RunResult& r = results[j];
            if (r.outcome == Outcome::Pass) continue;
            std::vector<RunConfig> failing = {r.config};
            Outcome kind = run_differential(programs[j], failing, {false, false}).outcome;
            FuzzProgram small =
                kind == Outcome::Pass
                    ? programs[j]
                    : shrink(
                          programs[j],
                          [&](const FuzzProgram& p) {
                              return run_differential(p, failing, {false, false}).outcome == kind;
                          },
                          80);
            FAIL_CHECK("fuzz seed " << k + j << ": " << outcome_name(r.outcome) << " ["
                                    << r.config.to_string() << "]: " << r.message << "\n"
                                    << to_cpp(small, "fuzz seed " + std::to_string(k + j)));
        }
    }
}

} // namespace

TEST_CASE("fuzz: fixed-seed differential batch, reference vs openmp") {
    run_batch(kFirstSeed, kPrograms, 8);
}

TEST_CASE("fuzz: symbolic sizes, one openmp program at three values vs the reference") {
    int drawn = 0;
    for (std::uint64_t seed = kFirstSeed; seed < kFirstSeed + 3 * kPrograms; ++seed) {
        FuzzProgram p = generate(seed).program;
        bool symbolic = false;
        RunResult r = run_symbolic(p, symbolic);
        drawn += symbolic;
        if (r.outcome == Outcome::BuildError || r.outcome == Outcome::Invalid) continue;
        CHECK_MESSAGE(r.outcome == Outcome::Pass,
                      "fuzz seed " << seed << ": " << std::string(outcome_name(r.outcome)) << ": "
                                   << r.message);
    }
    CHECK(drawn >= 20); // enough programs take a symbolic axis to mean something
    MESSAGE(drawn << " of " << 3 * kPrograms << " programs took a symbolic axis");
}

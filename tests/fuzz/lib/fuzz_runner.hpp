// The differential runner: a FuzzProgram evaluated by the reference interpreter (the oracle)
// and by the openmp backend at several thread counts and tile sizes, through evaluate() or,
// for programs with placeholders, compile() and a run; each output compared by its exactness
// class (fuzz_analysis.hpp). Also re-runs a compiled program (arena reuse) and evaluates after
// memoizing an intermediate array (memoized nodes become leaves).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/lib/fuzz_program.hpp"

namespace hedra::fuzz {

struct RunConfig {
    int threads = 1;
    std::vector<std::int64_t> tiles; // empty: the backend's default
    std::string to_string() const;   // "threads 2, tiles {16,8,5}"
};

enum class Outcome : std::uint8_t {
    Pass,
    Mismatch,       // openmp differs from the reference beyond what the analysis allows
    BackendError,   // openmp threw on a valid program
    ReferenceError, // the reference threw on a valid program
    BuildError,     // hedra rejected building the program
    Invalid,        // the analysis rejects the program (only after shrinker edits)
};
const char* outcome_name(Outcome o);

struct RunResult {
    Outcome outcome = Outcome::Pass;
    std::string message;
    RunConfig config; // the failing configuration
};

// Thread and tile configurations for program `seed`: 1 and 2 threads with default tiles and
// one random tile setting.
std::vector<RunConfig> configs_for(std::uint64_t seed);

struct RunnerOptions {
    bool rerun = true;              // run the first configuration's program twice
    bool memo_check = true;         // evaluate again after memoizing an intermediate (reference)
    std::string backend = "openmp"; // the backend under test
};

RunResult run_differential(const FuzzProgram& p, const std::vector<RunConfig>& configs,
                           const RunnerOptions& options = {});

// Several programs evaluated together (one openmp compile per configuration for all of them;
// the scheduler may also fuse across them). Programs with placeholders, or that fail to build,
// run alone. A failure of the shared evaluation is attributed by running the programs alone;
// one that only fails together is reported on every program of the batch. One result per
// program.
std::vector<RunResult> run_differential_batch(const std::vector<FuzzProgram>& programs,
                                              const std::vector<RunConfig>& configs,
                                              const RunnerOptions& options = {});

// The program with a symbolic leading axis on one of its data arrays (build_symbolic): one
// openmp program called at the full size, about half and 1, against the reference interpreter
// (which compiles the graph specialized to each value). `drawn` tells whether any data array
// could take the symbolic axis; if none, the result is a pass.
RunResult run_symbolic(const FuzzProgram& p, bool& drawn);

// The openmp backend, registered under "openmp" if it is not already (and
// HEDRA_MIN_PARALLEL_WORK=0 so that 2 threads really run 2).
std::shared_ptr<Backend> openmp_backend();

} // namespace hedra::fuzz

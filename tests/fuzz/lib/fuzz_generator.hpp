// The random program generator: from a seed, a well-typed FuzzProgram that uses every
// primitive (maps of random scalar expressions, reshapes by random transforms and shapes,
// views including convolution-like windows, reductions over random axes, fuse/overwrite/stack,
// broadcasting) and the library functions built on them, over shapes with sizes 0, 1 and
// primes, non-zero starts and strides. Every op is built with hedra as it is generated, so the
// generator knows the shapes it composes; an op hedra rejects is dropped and remembered (a
// rejection of a valid op is a hedra bug, reported by the soak tool).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/lib/fuzz_program.hpp"

namespace hedra::fuzz {

struct GeneratorOptions {
    int min_ops = 3; // generated steps (each adds one or a few ops)
    int max_ops = 16;
    std::int64_t max_elements = 3000; // per array
    double placeholder_probability = 0.15;
    bool differentiable = false; // float64 smooth programs for gradient fuzzing
    bool linear = false;         // with differentiable: linear maps, sums only, zero padding
    bool scans = true;           // off for graph files, which cannot hold a scan yet
};

struct Generated {
    FuzzProgram program;
    std::vector<std::string> rejections; // hedra errors on ops the generator built
    std::vector<std::string> dropped;    // ops dropped as invalid (analysis) or too large
};

Generated generate(std::uint64_t seed, const GeneratorOptions& options = {});

} // namespace hedra::fuzz

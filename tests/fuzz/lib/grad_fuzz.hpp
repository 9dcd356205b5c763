// Gradient fuzzing: random differentiable float64 programs (the generator's differentiable
// mode), their data leaves as parameters and loss = Σ sum(output · W) with random weights W.
// - check_gradient_program: hedra::grad's directional derivative ⟨∇loss, v⟩ against a central
//   difference of the loss along a random direction v (computed here, with the reference
//   backend, not with ad/check.hpp), and the gradient graph on openmp against the reference.
// - check_linear_program: the dot-product identity ⟨L x, y⟩ = ⟨x, vjp(L)(y)⟩ on random linear
//   programs (views, reshapes, sums, fuse/overwrite/stack, zero padding, linear maps).
// A central difference that changes with the step size marks a kink (a max, abs or min at a
// tie), reported as such and not as a failure.
#pragma once

#include <cstdint>
#include <string>

#include "fuzz/lib/fuzz_generator.hpp"

namespace hedra::fuzz {

enum class GradStatus : std::uint8_t { Pass, Kink, Skipped, Fail, Error };
const char* grad_status_name(GradStatus s);

struct GradResult {
    GradStatus status = GradStatus::Pass;
    std::string message;
    std::string reproducer; // the program as C++ (for failures)
};

// The generator options of the programs checked for `seed` (generate(seed, these)).
GeneratorOptions grad_generator_options(bool linear);

GradResult check_gradient_program(std::uint64_t seed);
GradResult check_linear_program(std::uint64_t seed);

} // namespace hedra::fuzz

// reduction_init: which reduction inits leave the reduction's loop nest. A reduction is an
// Assign of the identity followed by an Update over a larger domain; scheduled together, isl
// may fuse the init into the reduction band, which puts `if (k == 0)` guards into the hot loop
// (measured: 0.6 vs 5.3 GFLOP/s on matmul). An init is hoisted into its own nest, ahead of the
// rest of the kernel, when no other statement of the kernel must run before it.
#pragma once

#include <vector>

#include "polyhedral/dependences.hpp"
#include "polyhedral/scop.hpp"

namespace hedra::sched {

// Indices of the kernel's statements that are reduction inits (an Assign to a buffer that an
// Update of the kernel also writes) and depend on no other statement of the kernel, in program
// order. Inits of row-local buffers (kernel_ir.hpp) are not hoisted.
std::vector<int> hoistable_reduction_inits(const poly::Scop& scop, const poly::Dependences& deps);

} // namespace hedra::sched

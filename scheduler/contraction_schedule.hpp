// contraction_schedule: the loop order and tiles of a contraction, chosen by a cost model
// instead of isl's scheduler. A contraction is a sum-reduction Update whose value is a
// sum/product of reads (matmul in any transposition, a convolution and its two gradients, a
// dense layer over several feature axes): every order of its output counters is legal, and its
// reduction counters may be reordered up to float reassociation (the same license the
// register tile takes). isl's scheduler treats such a statement as a nest in DSL order and
// splits its band (a 7-deep convolution became bands of 5+1+1 with a 5-wide reduction
// innermost: 1.5 GFLOP/s); this pass instead builds
//   outer band:  [P] [A-tile] [V-tile] [K-tiles]      (permutable; P and the tiles coincide)
//     mark "permutable"
//       inner band: [other output counters] A [K counters] V
// the form the register tile (backends/openmp/register_tile.hpp) turns into a micro-kernel:
// V is the vector loop (an output counter; operands that run along it without depending on A
// are packed into a contiguous panel, so V need not be stride-1 anywhere), A the row loop
// (operands that depend on it are broadcast), K the reduction counters in DSL order (the
// outermost ones tiled so a packed panel of K x V fits the cache), P one other output counter
// kept outside as the parallel loop unless the panels would be refilled for each of its
// iterations (a weight gradient's panel of the output gradient); without P the rows are split
// in two for parallelism. (V, A) is the pair that wastes the fewest lanes and rows and touches
// the result least per product.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "polyhedral/isl_ptr.hpp"
#include "polyhedral/scop.hpp"

namespace hedra::sched {

struct ContractionPlan {
    int statement = -1;               // in the kernel
    int a = -1, v = -1;               // row and vector counters
    int parallel = -1;                // P: an output counter outside the mark, or -1
    std::vector<int> others;          // other output counters, inside the mark, in order
    std::vector<int> reduction;       // K counters, in DSL order
    std::vector<std::int64_t> tile;   // per counter: tile size (== extent: untiled)
};

// The plan for statement `statement` of `kernel`, or nothing when it is not a contraction the
// register tile can use (or is too small to be worth one).
std::optional<ContractionPlan> plan_contraction(const poly::ProgramIR& program,
                                                const poly::Kernel& kernel, int statement);

// The schedule of the plan's statement alone (its domain only), as described above.
poly::IslPtr<isl_schedule> contraction_schedule(const poly::Scop& scop,
                                                const ContractionPlan& plan);

} // namespace hedra::sched

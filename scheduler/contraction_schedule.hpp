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
// the form the register tile (backends/common/register_tile.hpp) turns into a micro-kernel:
// V is the vector loop (an output counter; operands that run along it without depending on A
// are packed into a contiguous panel, so V need not be stride-1 anywhere), A the row loop
// (operands that depend on it are broadcast), K the reduction counters with the ones along
// which the broadcast operands move least innermost (the outermost ones tiled so a packed panel
// of K x V fits the cache), P one other output counter
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
#include "scheduler/target.hpp"

namespace hedra::sched {

struct ContractionPlan {
    int statement = -1;             // in the kernel
    int a = -1, v = -1;             // row and vector counters
    int parallel = -1;              // P: an output counter outside the mark, or -1
    std::vector<int> others;        // other output counters, inside the mark, in order
    std::vector<int> reduction;     // K counters, outermost first
    std::vector<std::int64_t> tile; // per counter: tile size (== extent: untiled)
    // V's tile loop runs under the mark, above A (not in the outer band, so inside the K
    // tiles): the register tile then copies a broadcast operand whose K steps are far apart
    // (dZ[b, o] in a weight gradient dZᵀ·X) into contiguous row panels once per A tile and
    // K tile, for all V tiles.
    bool v_tiles_inside = false;
};

// Whether `e` (of dtype t) prints as an expression of the vector types (+, -, *, / of inputs and
// constants, at most 64 nodes as one term): what the register tile can fold (plan_contraction)
// and apply as an epilogue.
bool vector_expression(const ScalarExpr& e, DType t);

// The plan for statement `statement` of `kernel`, or nothing when it is not a contraction the
// register tile can use (or is too small to be worth one).
// Every machine fact read comes from `cpu`.
std::optional<ContractionPlan> plan_contraction(const poly::ProgramIR& program,
                                                const poly::Kernel& kernel, int statement,
                                                const CpuTarget& cpu = cpu_target());

// Among `inits` (statements that assign the reduction's identity ahead of it), the one this
// plan can absorb: it assigns 0 to exactly the elements the update accumulates into, and no
// reduction counter is tiled (each result is complete inside one block); -1 if none.
int absorbable_init(const poly::Scop& scop, const ContractionPlan& plan,
                    const std::vector<int>& inits);

// The schedule of the plan's statement (its domain only), as described above. With `init`
// (from absorbable_init) the init joins the nest: inside the row loop A, the row's columns are
// set to 0 and then accumulated, a sequence the register tile turns into accumulators that
// start at 0 (no pass that zeroes the result ahead, no loads of it in the micro-kernel); any
// other printing of that nest is still correct.
// With `epilogue` (an Assign reading the result at the same element, partition.hpp; only
// together with `init`) the row's epilogue follows its accumulation inside the row loop, so the
// register tile applies it to the accumulators before they are stored.
poly::IslPtr<isl_schedule> contraction_schedule(const poly::Scop& scop, const ContractionPlan& plan,
                                                int init = -1, int epilogue = -1);

} // namespace hedra::sched

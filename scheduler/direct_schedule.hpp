// direct_schedule: schedules built without isl's scheduler for kernels whose best loop nest is
// known from their shape (isl's Pluto-style search optimizes dependence distances, not memory
// strides, and on these it skewed a 2x2 pooling reduction and ran the four pieces of a pooling
// gradient as four passes over memory):
// - a lone contraction: contraction_schedule.hpp;
// - a lone assignment with independent instances: its counters in order, the contiguous one
//   innermost, untiled (a memory-bound pass gains nothing from tiles, and contiguous loops
//   then print as one flat loop);
// - a lone reduction otherwise (followed by its epilogue, if it has one): one band of all counters, the output counters outside, the
//   reduction counters inside them, and the counter along which the accesses are contiguous
//   innermost (a sum over rows vectorizes over the row; a 2x2 window reduction runs its
//   window counters outside the output row);
// - a row-fused kernel (row_fusion.hpp): one parallel band over the rows, the statements in
//   sequence inside it, each over the rest of its counters in program order;
// - a stencil stream (stencil_stream.hpp): one sequential loop over steps, each statement's
//   rows shifted by its stage, the statements in sequence inside, each over the rest of its
//   counters;
// - several assignments over one box with no dependences among them (the pieces of a fuse):
//   one band over the shared counters with the statements in sequence inside, so they share
//   one pass over their inputs.
// The band is marked ("direct"), so tiling leaves it alone. Reduction counters keep their
// relative order (the dependences, and the per-loop parallelism test on them, are computed for
// the program order: moving a reduction counter inward would let a loop that accumulates into
// one element pass that test); contractions only tile them (contraction_schedule.hpp).
#pragma once

#include <vector>

#include "polyhedral/dependences.hpp"
#include "polyhedral/isl_ptr.hpp"
#include "polyhedral/scop.hpp"
#include "scheduler/target.hpp"

namespace hedra::sched {

inline constexpr const char* kDirectMark = "direct";

// The schedule of `statements` (kernel statement indices, in program order), or null when
// none of the cases above applies. `inits` are the reduction inits hoisted ahead of them; a
// contraction may absorb its own (contraction_schedule.hpp), reported in `absorbed` (else -1).
poly::IslPtr<isl_schedule> direct_schedule(const poly::Scop& scop, const poly::Dependences& deps,
                                           const std::vector<int>& statements,
                                           const std::vector<int>& inits, int& absorbed,
                                           const CpuTarget& cpu = cpu_target());

} // namespace hedra::sched

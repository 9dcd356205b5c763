// lane_reduction: the CPU pass that gives a row reduction independent accumulators per lane.
// An innermost unit-step loop whose one statement folds a float sum, max or min into one
// element (the write does not move with the loop: a reduction along the row) keeps one
// accumulator per lane of two vector registers, combined as a tree at the end of the row; max
// and min are exact in any order, a sum is reassociated (the C renderers allow it). The pass
// chooses the number of accumulators from the CpuTarget (AstNode::reduction_lanes), fewer on a
// short row; the renderer prints them.
#pragma once

#include "polyhedral/kernel_ir.hpp"
#include "scheduler/loop_ast.hpp"
#include "scheduler/target.hpp"

namespace hedra::sched {

// The accumulators for `loop` (0: not a row reduction of that form).
int reduction_lanes(const poly::ProgramIR& program, const poly::Kernel& kernel,
                    const AstNode& loop, const CpuTarget& cpu);

// The pass: sets AstNode::reduction_lanes on every such loop of `root`.
void choose_lane_reductions(const poly::ProgramIR& program, const poly::Kernel& kernel,
                            AstNode& root, const CpuTarget& cpu);

} // namespace hedra::sched

// loop_coalesce: the pass that marks nested loops walking memory as one contiguous run, which
// the C renderer prints as one loop (AstNode::coalesce).
// Image tensors make short rows: an elementwise kernel over (64, 32, 14, 14) has an innermost
// loop of 14, where vector loops spend more time in their prologue and remainder than in their
// body, and a bias gradient sums 28 elements per inner loop before a horizontal reduction.
// When every access of the statements inside a perfect nest of constant-bound loops moves by
// (trip of the inner loop) x (its own step) along the outer loop, as dense row-major arrays do
// across their trailing axes, the nest is one loop over the product of the trips: the outer
// iterators stay at their first value and the innermost one runs over the flat range (the
// element addresses are the same; the printer only binds the iterators differently).
// Every loop that heads such a nest is marked, inner ones too: a renderer that runs the outer
// loop in parallel can still print the loops inside it as one.
#pragma once

#include <vector>

#include "polyhedral/kernel_ir.hpp"
#include "scheduler/loop_ast.hpp"

namespace hedra::sched {

// The chain of loops from `loop` down to the innermost one when it can be printed as one loop
// (at least two loops); empty otherwise. Statements that read index values, and bodies with
// conditions or marks, are left alone.
std::vector<const AstNode*> coalescible_chain(const poly::ProgramIR& program,
                                              const poly::Kernel& kernel, const AstNode& loop);

// Sets AstNode::coalesce on every loop of `root` that heads such a nest (its length).
void mark_coalescible_loops(const poly::ProgramIR& program, const poly::Kernel& kernel,
                            AstNode& root);

// The trip count of a loop with constant bounds and step 1 (0 when it is not one).
std::int64_t constant_trip(const AstNode& loop);

} // namespace hedra::sched

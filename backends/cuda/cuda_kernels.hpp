// The CUDA kernel templates, one file each (see cuda_lower.hpp for the mapping rules):
// cuda_map.cpp, cuda_reduction.cpp, cuda_contraction.cpp, cuda_generic.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "backends/cuda/cuda_source.hpp"

namespace hedra::backend::cuda {

// A kernel of the form partition() gives a reduction: an Assign of a constant over the whole
// result buffer, then an Update over (output members × reduction members) whose write access
// keeps each output member once (keepdims axes pinned to 0).
struct ReductionForm {
    const poly::Statement* init = nullptr;
    const poly::Statement* update = nullptr;
    std::vector<int> outputs;             // the update's coincident counters, in counter order
    std::vector<int> reductions;          // its reduction counters, in counter order
    std::vector<std::int64_t> extents;    // per counter of the update
    std::vector<std::int64_t> out_stride; // per counter: its stride in the result (0: reduced)
    std::int64_t num_outputs = 1;         // product of the output extents
    std::int64_t reduction_size = 1;      // product of the reduction extents
    // The result is a box of its buffer at this flat offset (a sum into a padded buffer's
    // interior); `whole`: the box is the whole buffer.
    std::int64_t result_offset = 0;
    bool whole = true;
    // Epilogues (partition.hpp): the kernel's further Assigns, each over the result's box,
    // reading the result (or an earlier epilogue's) element for element, and otherwise only
    // buffers that exist before the kernel.
    std::vector<int> epilogues; // statement indices
};
std::optional<ReductionForm> reduction_form(const poly::ProgramIR& program,
                                            const poly::Kernel& kernel);

// C index of the result element at the update's counters (i0, i1, ...).
std::string result_index(const ReductionForm& f);
// The accumulator's starting value: the init statement's (constant) value.
std::string init_value(const SourceBuilder& b, const ReductionForm& f, const std::string& indent,
                       std::string& out);

// The epilogues (cuda_epilogue.cpp): the parameters they add to a launch; epilogue statement
// `e` with the result's counters i0.. defined and the sum's value in `acc`; all of them, in
// order, at the result element of the update's counters i<c>.
void add_epilogue_params(const SourceBuilder& b, int kernel, const ReductionForm& f,
                         KernelParams& params);
void print_epilogue_value(const SourceBuilder& b, int kernel, const ReductionForm& f, int e,
                          const std::string& prefix, const std::string& acc, const std::string& in,
                          std::string& out);
void print_epilogues(const SourceBuilder& b, int kernel, const ReductionForm& f,
                     const std::string& acc, const std::string& in, std::string& out);

// The contraction's members (M, N) of a reduction form, if it is one: two coincident output
// members with a read independent of each; and a tile {BM, BN, ...} narrowed to their extents.
std::optional<std::array<int, 2>> contraction_members(const ReductionForm& f);
std::vector<std::int64_t> narrowed_tile(const ReductionForm& f, std::vector<std::int64_t> tile);

// A kernel of Assigns in launches: consecutive statements share one when none reads what
// another writes and each later write to the same buffer is provably disjoint from the earlier
// ones (a fuse's non-overlapping pieces) or a box they test and skip (a pad's interior);
// otherwise, in order, one each (a later piece overwrites an earlier one).
std::vector<std::vector<int>> map_launch_groups(const poly::Kernel& kernel);
// One launch for these Assign statements (one of map_launch_groups).
void emit_maps(SourceBuilder& b, int kernel, const std::vector<int>& statements);
// One launch: the TM×TN register-tiled, shared-memory-staged contraction, if the form has two
// coincident members with reuse, with the epilogues applied to the accumulators (the result is
// stored only if something else reads it); false (nothing emitted) otherwise.
bool emit_contraction(SourceBuilder& b, int kernel, const ReductionForm& f);
// Serial, block or split reduction launches, the epilogues applied where each result element
// is stored.
void emit_reduction(SourceBuilder& b, int kernel, const ReductionForm& f);
// A reduction of several values (reduce_multiple_value) as partition() gives it: one Assign of
// a constant per component over the whole result, then the tuple step (an Assign with
// tuple_writes over output × reduction counters that reads every accumulator at its write
// access). Emitted with the block template when the reduction is long enough.
struct TupleReductionForm {
    const poly::Statement* step = nullptr;
    std::vector<const poly::Statement*> inits; // per component
    std::vector<int> buffers;                  // per component: its accumulator (and result)
    std::vector<int> outputs, reductions;      // the step's counters, in counter order
    std::int64_t num_outputs = 1, reduction_size = 1;
};
std::optional<TupleReductionForm> tuple_reduction_form(const poly::ProgramIR& program,
                                                       const poly::Kernel& kernel);
// One launch, one block per result element, or false (nothing emitted) for a short reduction,
// which the generic mapping runs serially per element.
bool emit_tuple_reduction(SourceBuilder& b, int kernel, const TupleReductionForm& f);
// isl schedule and loop AST, outer parallel loops mapped to threads.
void emit_generic(SourceBuilder& b, int kernel);

} // namespace hedra::backend::cuda

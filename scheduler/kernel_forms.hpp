// kernel_forms: the forms of a kernel of the IR that the GPU mapping passes recognize
// (gpu_mapping.hpp) and the renderers print: a reduction as partition() gives it, a reduction
// of several values, a contraction's two tiled members, and the launch groups of a kernel of
// maps. Pure analyses of the kernel IR: no machine facts, no printing.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "polyhedral/kernel_ir.hpp"

namespace hedra::sched {

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

// A reduction of several values (reduce_multiple_value) as partition() gives it: one Assign of
// a constant per component over the whole result, then the tuple step (an Assign with
// tuple_writes over output × reduction counters that reads every accumulator at its write
// access).
struct TupleReductionForm {
    const poly::Statement* step = nullptr;
    std::vector<const poly::Statement*> inits; // per component
    std::vector<int> buffers;                  // per component: its accumulator (and result)
    std::vector<int> outputs, reductions;      // the step's counters, in counter order
    std::int64_t num_outputs = 1, reduction_size = 1;
};
std::optional<TupleReductionForm> tuple_reduction_form(const poly::ProgramIR& program,
                                                       const poly::Kernel& kernel);

// Whether read r's access depends on counter `counter`.
bool depends(const poly::Read& r, int counter);

// The contraction's members (M, N) of a reduction form, if it is one: two coincident output
// members with a read independent of each. N is the member contiguous in the result; M the one
// that best splits the reads into "independent of N" and "independent of M" (matmul's A and
// B; a convolution's input and weights).
std::optional<std::array<int, 2>> contraction_members(const ReductionForm& f);

// Every statement an Assign that reads nothing it writes: a kernel of maps.
bool all_assigns(const poly::Kernel& kernel);

// The values o + a·i, 0 <= i < count, of one output row of a write whose row depends on one
// counter at most; false when the row mixes counters (no simple test then).
struct Progression {
    std::int64_t offset = 0, step = 0, count = 1;
};
bool row_progression(const poly::Statement& st, int row, Progression& p);
// Whether two Assigns provably write disjoint elements: along some buffer axis their values
// never meet (each row a progression of at most 4096 terms, checked term by term).
bool disjoint_writes(const poly::Statement& s, const poly::Statement& t);
// Whether `t` writes a product of progressions (each buffer axis walked by one counter at
// most, no counter on two axes), so whether it writes an element can be tested per axis.
bool box_write(const poly::Statement& t);

// A kernel of Assigns in launches: consecutive statements share one when none reads what
// another writes and each later write to the same buffer is provably disjoint from the earlier
// ones (a fuse's non-overlapping pieces) or a box they test and skip (a pad's interior);
// otherwise, in order, one each (a later piece overwrites an earlier one).
std::vector<std::vector<int>> map_launch_groups(const poly::Kernel& kernel);

} // namespace hedra::sched

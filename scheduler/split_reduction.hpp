// split_reduction: a long reduction over the leading axis into a small row of results (W5b's
// column sums: 4096 rows into 1024 sums) runs its rows one after another, since every row adds
// into the same accumulators; only the short inner loop over the results could be shared by
// threads, which is not worth a parallel region per row. Split in two kernels, as split-K
// does for matmul: P blocks of rows each reduce into a row of partial results (a temporary
// [P, results...], the blocks in parallel, each streaming whole rows), then the P partials are
// reduced into the result. Applies to a kernel of one init and one update (sum, max or min)
// whose only reduced counter is the first, with at least kMinSplitRows rows, divisible into 4
// to 16 blocks, and at most kMaxSplitResults results. Sums are reassociated (as a tiled sum
// is); max and min are exact in any order.
#pragma once

#include <cstdint>

#include "polyhedral/kernel_ir.hpp"

namespace hedra::sched {

inline constexpr std::int64_t kMinSplitRows = 2048;
inline constexpr std::int64_t kMaxSplitResults = 65536;

void split_outer_reductions(poly::ProgramIR& program);

} // namespace hedra::sched

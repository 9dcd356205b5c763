// stride_order: inside a permutable band, which member should be the innermost loop. The member
// along which most accesses move by one element (stride 1), or stay put, goes innermost, the
// others keep isl's order (Pluto's intra-tile reordering). For matmul C[i,j] += A[i,k]*B[k,j]
// the band (i, j, k) becomes (i, k, j): C and B are contiguous in j, A is invariant.
// Only members that are a single counter of each statement (i_d + constant) are scored.
#pragma once

#include <cstdint>
#include <vector>

#include "core/affine_map.hpp"
#include "polyhedral/isl_ptr.hpp"
#include "polyhedral/scop.hpp"

namespace hedra::sched {

// How far (in elements of the row-major `buffer`) the element read or written through `access`
// moves when counter `counter` steps by one.
std::int64_t element_stride(const poly::Buffer& buffer, const AffineMap& access, int counter);

// The member order (a permutation of 0..n-1) for the band at `band` (__isl_keep); the
// identity when no member scores better than the current innermost one.
std::vector<int> stride_one_innermost_order(const poly::Scop& scop, isl_schedule_node* band);

// Reorders the members of the band at `band` (__isl_take) to `order`, keeping the permutable
// and coincident flags; returns the new band node (__isl_give).
isl_schedule_node* permute_band_members(isl_schedule_node* band, const std::vector<int>& order);

} // namespace hedra::sched

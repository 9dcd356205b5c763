// row_fusion: consecutive kernels that work row by row on the same rows become one kernel, so
// a row is read from memory once and its later passes find it in cache. Softmax is three
// kernels after partition (the row's max; the sum of exp(x - max); exp(x - max) / sum), each a
// pass over the whole matrix; fused, the schedule runs the three loops inside one loop over
// rows. Kernels B (right after A) joins A when, for the leading r >= 1 counters of every
// statement of both (the row):
// - each statement writes its buffer's leading r axes at exactly those counters, over the same
//   extents (one row of results per row);
// - each read of a buffer reads its leading r axes at those counters (row-private data: no
//   operand shared across rows, so no contraction, whose reuse across rows wants tiles), or
//   is a scalar, or (in an assignment) a broadcast of at most kMaxRowElements (a bias row)
//   of a buffer neither kernel writes;
// - the rest of a row is at most kMaxRowElements per statement (it stays in cache);
// - B writes nothing A reads or writes; neither has a reduction of several values.
// The dependences then allow the rows to run in parallel and the passes within a row in order;
// direct_schedule.hpp gives such a kernel one parallel band over the rows with the statements
// in sequence inside.
// Then array contraction: a temporary that one fused kernel alone writes and reads, always at
// its row counters, is row-local (poly::Buffer::row_local): one row per thread, never in
// memory. Softmax's exp(x - max) is computed once into such a row, summed from it and divided
// from it; the row's max and sum become row-local scalars.
#pragma once

#include <cstddef>
#include <cstdint>

#include "polyhedral/kernel_ir.hpp"

namespace hedra::sched {

inline constexpr std::int64_t kMaxRowElements = 16384;
inline constexpr std::size_t kMaxRowLocalBytes = 65536; // on a thread's stack

void fuse_row_kernels(poly::ProgramIR& program);

// Whether rows 0..r-1 of `access` are exactly counters 0..r-1: an access of the row a
// statement instance is in (direct_schedule.hpp keeps a row kernel's rows to those).
bool leading_identity(const AffineMap& access, int r);

} // namespace hedra::sched

// narrow_domains: compute only the part of a temporary that is read. After partitioning, a
// temporary buffer is written over its whole shape even when every reader looks at a sub-box:
// the gradient of a padded convolution input is a reduction over the padded (18x18) image of
// which the un-padding view keeps the 14x14 interior, so 40% of that contraction was thrown
// away. This pass takes the bounding box of every read of each temporary (each read is an
// affine map over a box of counters, so its image is bounded per axis by interval arithmetic)
// and shrinks the domains of the statements that write it, shifting their counters so that
// domains still start at 0. Elements outside the box are left unwritten; no one reads them.
// It applies to a kernel whose statements all write one temporary through accesses whose rows
// are each a constant or a single counter with coefficient 1 (reductions, maps, and the pieces
// of a fuse); a piece that falls outside the box is dropped.
#pragma once

#include "polyhedral/kernel_ir.hpp"

namespace hedra::sched {

void narrow_domains(poly::ProgramIR& program);

} // namespace hedra::sched

// The C text of a scan's loop head (poly::ScanLoop) in a program's entry: the loop over steps,
// the step t of iteration i (t = i, or T - 1 - i in reverse), and the pointer of each StepSlice
// set to its row of its parent (or its edge buffer on the last iteration) in the entry's table
// of buffer pointers. The c_renderer prints the loop's kernels' calls after it.
#pragma once

#include <string>

#include "polyhedral/kernel_ir.hpp"

namespace hedra::backend {

// Opens the loop (the caller closes it with "}"); `depth` numbers nested loops' variables,
// `table` names the pointer table.
std::string scan_loop_head(const poly::ProgramIR& program, const poly::ScanLoop& loop, int depth,
                           const std::string& table);

} // namespace hedra::backend

// donate_inputs: outputs written into the memory of inputs their caller gave up
// (CompileOptions::donate), so that a training step updates its parameters and optimizer state
// in place instead of keeping the old and the new values both. An output takes a donated input
// when Assigns of one kernel compute it element for element (one, or the pieces of a fuse, the
// later winning), the first of them alone reading the input and only at the element it writes,
// and every other read of the input runs in an earlier kernel: the input is then dead once the
// write starts. A piece that only copies the input's elements is then dropped (a sweep that
// overwrites a donated grid's interior writes only the interior). The output's buffer is folded
// into the input's (marked `donated`), so the kernels, their dependences and their loops see one
// buffer read and written; elsewhere the output keeps a buffer of its own. Pairs are tried in
// output order, then donation order.
#pragma once

#include <vector>

#include "core/node.hpp"
#include "polyhedral/kernel_ir.hpp"

namespace hedra::sched {

// `donated`: the placeholder nodes given up. Returns how many outputs took an input's memory.
int donate_inputs(poly::ProgramIR& program, const std::vector<NodePtr>& donated);

} // namespace hedra::sched

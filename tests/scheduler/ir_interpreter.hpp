// A naive interpreter of the kernel IR, the test oracle for partition: kernels in order, each
// statement over its whole domain in lexicographic order, Updates combining per reduce_op.
// Every access is bounds-checked, so a wrong access map fails loudly instead of reading junk.
#pragma once

#include <vector>

#include "core/host_array.hpp"
#include "polyhedral/kernel_ir.hpp"

namespace hedra::test {

// Runs `program`. program.inputs[k] is bound to placeholder_values[k] for k < the number of
// values given; the remaining inputs take their node's host data or memoized value. Returns
// one HostArray per program output. Throws std::runtime_error on an out-of-bounds access.
std::vector<HostArray> interpret_ir(const poly::ProgramIR& program,
                                    const std::vector<HostArray>& placeholder_values = {});

} // namespace hedra::test

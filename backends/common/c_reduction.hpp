// c_reduction: a reduction kernel's pieces (sched::ReductionForm) printed at the update's
// counters i0, i1, ...: the result element, the accumulator's start, and the epilogues, maps
// of the sum's result at the same element (partition.hpp), applied where a result element is
// complete. Each reads the sum's value from a register; an earlier epilogue's result (a chain:
// SGD's momentum, then the weight) is read back from where this thread just stored it.
#pragma once

#include <string>

#include "backends/common/c_kernel.hpp"
#include "scheduler/kernel_forms.hpp"

namespace hedra::backend {

// C index of the result element at the update's counters.
std::string result_index(const sched::ReductionForm& f);
// `result[index] = acc;` at the update's counters.
std::string store_result(const KernelBuffers& b, const sched::ReductionForm& f,
                         const std::string& acc, const std::string& in);
// The accumulator's starting value: the init statement's (constant) value.
std::string init_value(const KernelBuffers& b, const sched::ReductionForm& f,
                       const std::string& indent, std::string& out);

// The parameters the epilogues of kernel `kernel` add to a launch.
void add_epilogue_params(const KernelBuffers& b, int kernel, const sched::ReductionForm& f,
                         KernelParams& params);
// Epilogue statement `e` with the result's counters i0.. defined and the sum's value in `acc`.
void print_epilogue_value(const KernelBuffers& b, int kernel, const sched::ReductionForm& f, int e,
                          const std::string& prefix, const std::string& acc, const std::string& in,
                          std::string& out);
// All of them, in order, at the result element of the update's counters.
void print_epilogues(const KernelBuffers& b, int kernel, const sched::ReductionForm& f,
                     const std::string& acc, const std::string& in, std::string& out);

// A complete result element at the update's counters, its value in `acc`: stored (unless
// only the epilogues read it), then the epilogues applied.
void print_result_element(const KernelBuffers& b, int kernel, const sched::ReductionForm& f,
                          const std::string& acc, const std::string& in, std::string& out,
                          bool store = true);
// The parameters of a launch that folds the update and completes result elements: the
// update's buffers, then the epilogues'.
KernelParams reduction_params(const KernelBuffers& b, int kernel, const sched::ReductionForm& f);
// The parameters of a launch that combines the partial results in buffer `partials` into the
// result elements: the result, the partials, then the epilogues' buffers.
KernelParams partials_params(const KernelBuffers& b, int kernel, const sched::ReductionForm& f,
                             int partials);
// The whole reduction of one result element in one thread: loops over the reduction counters
// i<c> (from 0, in counter order: any combiner, also a custom one), each point folded into
// `acc`.
void print_serial_fold(const KernelBuffers& b, const sched::ReductionForm& f,
                       const std::string& acc, const std::string& in, std::string& out);

} // namespace hedra::backend

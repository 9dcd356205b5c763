// The CUDA kernel templates, one file each, printing what the GPU mapping passes decided
// (scheduler/gpu_mapping.hpp; cuda_lower.hpp for the forms): cuda_map.cpp, cuda_reduction.cpp,
// cuda_tuple_reduction.cpp, cuda_contraction*.cpp, cuda_generic.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/render/cuda_source.hpp"
#include "scheduler/gpu_mapping.hpp"
#include "scheduler/kernel_forms.hpp"
#include "scheduler/loop_ast.hpp"

namespace hedra::backend::cuda {

using sched::reduction_form;
using sched::ReductionForm;
using sched::tuple_reduction_form;
using sched::TupleReductionForm;

// C index of the result element at the update's counters (i0, i1, ...).
std::string result_index(const ReductionForm& f);
// `result[index] = acc;` at the update's counters.
std::string store_result(const SourceBuilder& b, const ReductionForm& f, const std::string& acc,
                         const std::string& in);
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

// One launch of `threads` per block for these Assign statements (one of the mapping's groups).
void emit_maps(SourceBuilder& b, int kernel, const std::vector<int>& statements,
               std::int64_t threads);
// The TM×TN register-tiled, shared-memory-staged contraction of the mapping (and a split's
// final launch), with the epilogues applied to the accumulators (the result is stored only if
// something else reads it).
void emit_contraction(SourceBuilder& b, const sched::GpuKernelMapping& mapping);
// Serial, block or split reduction launches as the mapping says, the epilogues applied where
// each result element is stored.
void emit_reduction(SourceBuilder& b, int kernel, const ReductionForm& f,
                    const sched::GpuReductionMapping& mapping);
// One launch, one block of `threads` per result element.
void emit_tuple_reduction(SourceBuilder& b, int kernel, const TupleReductionForm& f,
                          std::int64_t threads);
// The kernel's loop AST (the kernel passes without tiling), outer parallel loops mapped to
// threads.
void emit_generic(SourceBuilder& b, const sched::GpuKernelMapping& m, const sched::AstNode& ast);

} // namespace hedra::backend::cuda

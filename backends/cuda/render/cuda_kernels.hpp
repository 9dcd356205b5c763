// The CUDA kernel templates, one file each, printing what the GPU mapping passes decided
// (scheduler/gpu_mapping.hpp) in CUDA's dialect (cuda_source.hpp): cuda_map.cpp,
// cuda_reduction.cpp, cuda_tuple_reduction.cpp, cuda_contraction.cpp, cuda_mma.cpp,
// cuda_generic.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/common/c_reduction.hpp"
#include "backends/cuda/render/cuda_source.hpp"
#include "scheduler/gpu_mapping.hpp"
#include "scheduler/kernel_forms.hpp"
#include "scheduler/loop_ast.hpp"

namespace hedra::backend::cuda {

using sched::ReductionForm;
using sched::TupleReductionForm;

// One launch of `blocks` of `threads` for these Assign statements (one of the mapping's
// groups).
void emit_maps(SourceBuilder& b, int kernel, const std::vector<int>& statements,
               std::int64_t threads, std::int64_t blocks);
// The TM×TN register-tiled, shared-memory-staged contraction of the mapping (and a split's
// final launch), with the epilogues applied to the accumulators (the result is stored only if
// something else reads it).
void emit_contraction(SourceBuilder& b, const sched::GpuKernelMapping& mapping);
// The tensor-core contraction of the mapping (its mma tile set): warps of mma.sync fragments
// over operand tiles staged in shared memory, the epilogues applied to the accumulators.
void emit_mma_contraction(SourceBuilder& b, const sched::GpuKernelMapping& mapping);
// Serial, block or split reduction launches as the mapping says, the epilogues applied where
// each result element is stored.
void emit_reduction(SourceBuilder& b, int kernel, const ReductionForm& f,
                    const sched::GpuReductionMapping& mapping);
// One launch, one block per result element (grid-stride over the mapping's blocks).
void emit_tuple_reduction(SourceBuilder& b, int kernel, const TupleReductionForm& f,
                          const sched::GpuReductionMapping& mapping);
// The kernel's loop AST (the kernel passes without tiling), outer parallel loops mapped to
// threads.
void emit_generic(SourceBuilder& b, const sched::GpuKernelMapping& m, const sched::AstNode& ast);

} // namespace hedra::backend::cuda

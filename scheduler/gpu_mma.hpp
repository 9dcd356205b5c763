// gpu_mma: the tensor-core mapping of a contraction, part of the GPU mapping passes
// (gpu_mapping.hpp). gpu.tile asks tile_mma first: a sum of products of two reads, one over
// M × K and one over K × N (either may also walk the z members), K the reduction members
// flattened (a convolution is an implicit GEMM), an f32 sum, and operands both bf16 or both
// f16 (m16n8k16), or both f32 when allow_tf32 is set (m16n8k8, the operands rounded to TF32),
// on sm_80 or later, becomes warps of mma.sync fragments; every other contraction keeps the
// SIMT tiles. gpu.stage asks stage_mma for the shared layout of the two operand tiles and the
// pipeline's depth.
#pragma once

#include "scheduler/gpu_mapping.hpp"

namespace hedra::sched {

// Fills c (members, tiles, grid, chunks, c.mma) and returns true when the contraction takes
// tensor cores; otherwise leaves c as it was and returns false.
bool tile_mma(const poly::ProgramIR& program, const GpuTarget& target,
              const GpuMappingOptions& options, const ReductionForm& f, GpuContractionMapping& c);

// The staged tiles of a tensor-core contraction: their row pitches (padded so that the eight
// 16-byte rows an ldmatrix reads, or a warp's fragment loads, fall in distinct banks), the
// pipeline's stages within the target's shared memory per block, the launch's shared bytes
// and blocks per multiprocessor (after the index width, which proposes them).
void stage_mma(const GpuTarget& target, GpuContractionMapping& c);

} // namespace hedra::sched

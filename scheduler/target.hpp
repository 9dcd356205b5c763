// target: the machine facts that scheduling and rendering decisions read, in one place. The CPU
// description is the one generated code is written for, read from the machine once (the vector
// width of the renderer's vector types and the register count of the register tile): AVX-512
// where the CPU has it, else AVX2; HEDRA_CPU_TARGET=avx2|avx512 chooses instead. The GPU
// description is filled from the device by the cuda backend (cuda_driver.hpp: Device::target)
// and defaults to an H100/H200; the GPU mapping passes (gpu_mapping.hpp) are its only readers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hedra::sched {

struct CpuTarget {
    std::string name = "avx2";
    int vector_bytes = 32;     // one vector register (AVX2 ymm, AVX-512 zmm: 64)
    int vector_registers = 16; // ymm0-15 (zmm0-31): the register tile's accumulators and operands
    // The register tile's rows R at most: 6 rows x 2 vectors = 12 accumulators, leaving 4
    // registers for operands (register_tile.hpp). (8 rows on AVX-512 measured slower on the
    // GPT step: 53 against 49 ms.)
    int register_tile_rows = 6;
    // Packed K x V panels of one contraction tile, all together: half of a 256 KiB L2 slice
    // leaves room for the result rows and the broadcast operand (contraction_schedule.hpp).
    std::int64_t panel_bytes = 128 * 1024;
    std::int64_t l1d_bytes = 32 * 1024;
};

struct GpuTarget {
    int warp_size = 32;
    std::size_t shared_memory_per_block = 48 * 1024; // without the opt-in carve-out
    int registers_per_thread = 255;
    int multiprocessors = 132; // to size grids (H100/H200 SXM)
    int max_threads_per_block = 1024;
    // Blocks per launch along each grid dimension (CUDA's: 2^31 - 1 along x, 65535 along y, z).
    int max_grid_x = 2147483647, max_grid_y = 65535, max_grid_z = 65535;
    // Compute capability, major * 10 + minor: tensor-core mma.sync needs 80 (sm_80) or more.
    int compute_capability = 90;
};
// "warp 32, shared 49152 B/block, ...": every field, for cache keys and dumps.
std::string to_string(const GpuTarget& target);

// The described targets: "avx2" and "avx512".
CpuTarget cpu_target_named(const std::string& name);
// The CPU description every CPU decision reads: HEDRA_CPU_TARGET's, else this machine's.
const CpuTarget& cpu_target();
// The vector width in bytes of a register tile over `v_extent` columns of `element_bytes`
// each: the target's, halved (not below 32) while one vector is wider than the columns, so
// that a matmul with 8 columns keeps 8-wide vectors, and their blocked sums, on AVX-512.
int tile_vector_bytes(const CpuTarget& cpu, std::int64_t v_extent, std::size_t element_bytes);
int tile_vector_bytes(std::int64_t v_extent, std::size_t element_bytes); // cpu_target()'s

} // namespace hedra::sched

// target: the machine facts that scheduling and rendering decisions read, in one place. The CPU
// description is the one generated code is written for (AVX2: the renderer's 32-byte vector
// types, 16 vector registers); the GPU description is filled from the device by the cuda
// backend (cuda_driver.hpp) and defaults to an H100/H200.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hedra::sched {

struct CpuTarget {
    int vector_bytes = 32;     // one vector register (AVX2 ymm)
    int vector_registers = 16; // ymm0-15: the register tile's accumulators and operands
    // The register tile's rows R at most: 6 rows x 2 vectors = 12 accumulators, leaving 4
    // registers for operands (register_tile.hpp).
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
};

// The CPU description every CPU decision reads.
inline const CpuTarget& cpu_target() {
    static const CpuTarget target{};
    return target;
}

} // namespace hedra::sched

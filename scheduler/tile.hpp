// tile: rectangular tiling of the permutable bands of a schedule (isl_schedule_node_band_tile)
// with at least two members, followed by the intra-tile loop order of stride_order.hpp (the
// stride-1 member innermost among the point loops; the tile loops keep isl's order so the
// outer, parallel tile loop stays outermost).
#pragma once

#include <cstdint>
#include <vector>

#include "polyhedral/isl_ptr.hpp"
#include "polyhedral/scop.hpp"

namespace hedra::sched {

struct TileOptions {
    // Per band member, outermost first; the last size repeats. Empty: the defaults below.
    std::vector<std::int64_t> sizes;
    // Measured on matmul 1024 (f32, 1 thread, CPU time): 64x256x64 38 GFLOP/s, 32x256x32 35,
    // 32x1024x32 31.
    std::int64_t default_size = 64;
    std::int64_t default_innermost_size = 256; // the stride-1 member (long vector loops)
    bool tile = true;
    bool reorder = true;
};

poly::IslPtr<isl_schedule> tile_schedule(const poly::Scop& scop,
                                         poly::IslPtr<isl_schedule> schedule,
                                         const TileOptions& options = {});

} // namespace hedra::sched

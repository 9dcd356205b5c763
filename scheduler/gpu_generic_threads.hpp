// gpu_generic_threads: the GPU mapping pass for kernels of no known form (GpuForm::Generic),
// over the loop AST the kernel passes built for them (without tiling). Each top-level nest is
// one launch: its outer loops that passed the dependence test and have constant bounds (up to
// three, perfectly nested; marks around one node are transparent) are flattened over a
// grid-stride thread index, everything inside runs sequentially in the thread, and a nest whose
// outer loop is not parallel runs on one thread. The pass chooses those loops, the threads per
// block (whole warps, at most kGenericThreads and the target's limit) and the blocks
// (grid_stride_blocks); the renderer prints them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/loop_ast.hpp"
#include "scheduler/target.hpp"

namespace hedra::sched {

inline constexpr std::int64_t kGenericThreads = 256;

// The blocks of a 1-D launch whose threads walk their range grid-stride: `blocks`, at most
// 2^20 (and the target's grid along x); the loop covers the rest.
std::int64_t grid_stride_blocks(std::int64_t blocks, const GpuTarget& target);

struct GpuGenericNest {
    int thread_loops = 0;            // outer loops over the threads (0: one thread runs the nest)
    std::vector<std::int64_t> trips; // of those loops
    std::int64_t points = 1;         // their product: the flat thread index's range
    std::int64_t threads = 1;        // per block
    std::int64_t blocks = 1;
    std::int64_t max_threads = kGenericThreads; // the kernel's launch bound
};

// The top-level nests of a generic kernel's loop AST, in the order they run.
std::vector<const AstNode*> generic_nests(const AstNode& root);

// A mark around a single node, seen through.
const AstNode* unwrap_marks(const AstNode* n);

// The trip count of `for (it = init; it <= ub or it < ub; it += inc)` with constant bounds.
std::optional<std::int64_t> constant_trip_count(const AstNode& loop);

// The pass over one generic kernel: one GpuGenericNest per nest of generic_nests(root).
std::vector<GpuGenericNest> map_generic_threads(const AstNode& root, const GpuTarget& target);

std::string to_string(const GpuGenericNest& nest);

} // namespace hedra::sched

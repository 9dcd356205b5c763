// lower_cuda: the CUDA code generator's pass list for a partitioned program (kernel IR). Each
// kernel of the IR becomes one or more __global__ functions of one CUDA C++ translation unit
// and a list of launches, run in order on one stream. The mapping follows PPCG: tile the band,
// blocks = outer coincident tile members, threads = coincident point members; here the bands
// are the kernel IR's box domains, so the mapping is computed in closed form per kernel form:
// - map (one Assign; fuse pieces are one launch each, in order, so the later piece wins):
//   every point of the domain is one thread (1-D grid-stride over the flattened box);
// - contraction (a reduction whose output has two coincident members with a read independent
//   of each, e.g. matmul, batched matmul, conv, weight gradients): an output tile per block
//   (grid = (⌈N/BN⌉, ⌈M/BM⌉, batch)), a TM×TN register tile of accumulators per thread,
//   reduction members tiled by a chunk; the box hull of every reused read over (tile × chunk)
//   is staged in __shared__ memory (bounded by 48 KiB);
// - reduction: one thread per output (a sequential fold, any combiner), or one block per
//   output (threads over the reduction, a shared-memory tree) when the reduction runs along
//   contiguous memory or the outputs are few, or split-K (partials, then a second block
//   reduction) when very few outputs have very long reductions;
// - reduction of several values (reduce_multiple_value): one block per output, each thread
//   folding a contiguous chunk, partial tuples combined in index order in shared memory;
// - anything else: isl's schedule (compute_schedule) and loop AST, outer parallel loops with
//   constant bounds mapped to threads, the rest sequential in each thread.
// The source ends with the list of launches as comments. Every stage is shown to a
// CompileObserver (scheduler/compile_observer.hpp): the partition, the isl stages of kernels on
// the generic path, and the emitted source (extension "cu"); by default HEDRA_DUMP's observer.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "polyhedral/kernel_ir.hpp"
#include "scheduler/partition.hpp"
#include "scheduler/target.hpp"

namespace hedra::sched {
class CompileObserver;
}

namespace hedra::backend {

struct CudaLaunch {
    std::string function; // the __global__ function (extern "C")
    std::string strategy; // "map", "contraction", "serial_reduction", "block_reduction",
                          // "split_partial", "split_final", "tuple_block_reduction",
                          // "generic", "generic_serial"
    int kernel = -1;      // index in ProgramIR::kernels
    std::array<unsigned, 3> grid{1, 1, 1};
    std::array<unsigned, 3> block{1, 1, 1};
    // Kernel arguments in order: program buffer indices, then scratch buffers numbered
    // program.buffers.size() + s.
    std::vector<int> buffers;
    std::size_t shared_bytes = 0; // static __shared__ memory of the function
};

struct ScratchBuffer {
    DType dtype = DType::F32;
    std::int64_t elements = 0;
    std::size_t bytes() const { return static_cast<std::size_t>(elements) * dtype_size(dtype); }
};

struct CudaLoweredProgram {
    std::string source;
    std::vector<CudaLaunch> launches;
    std::vector<ScratchBuffer> scratch; // device temporaries the launches need besides buffers
};

// One tiling of a contraction: the tile {BM, BN, reduction chunk} (empty: the policy's, from the
// problem size) and the split-K slices (0: the policy's for that tile; 1: unsplit).
struct ContractionTiling {
    std::vector<std::int64_t> tile;
    std::int64_t splits = 0;
    bool operator==(const ContractionTiling&) const = default;
};

struct CudaLowerOptions {
    // Contraction tile (BM, BN, reduction chunk) for every contraction, never split; empty:
    // chosen from the problem size.
    std::vector<std::int64_t> tile_sizes;
    // Per kernel (its index in the IR): the tiling the autotuner chose (cuda_autotune.hpp).
    std::map<int, ContractionTiling> contraction_tilings;
    int only_kernel = -1;      // >= 0: lower this kernel only (the autotuner's candidates)
    bool generic_only = false; // every kernel through the isl path (tests)
    // Sees every stage; null: the HEDRA_DUMP observer, if HEDRA_DUMP is set.
    sched::CompileObserver* observer = nullptr;
    // The device's facts (the backend fills them from the device when one is present): shared
    // memory bounds the contraction's staging, multiprocessors size grids and split-K.
    sched::GpuTarget gpu;
};

// How the cuda backend partitions a graph (the backend, hedra-dump and the tests alike): a chain
// of maps after a sum (SGD with momentum: the momentum, then the weight) joins its kernel; the
// contraction applies them all to its accumulators, one after the other.
sched::PartitionOptions cuda_partition_options();

CudaLoweredProgram lower_cuda(const poly::ProgramIR& program, const CudaLowerOptions& options = {});

// The tilings worth timing for kernel `kernel` (the autotuner's candidates): the policy's first,
// then other tiles (narrowed to the output) with the policy's split and unsplit. Empty when the
// kernel is not a contraction. Candidates may lower to the same code (the caller compares).
std::vector<ContractionTiling> contraction_candidates(const poly::ProgramIR& program, int kernel);

// One launch per line ("k0_0 contraction grid(2,2,1) block(16,16,1) smem 8704 args b0 b1 b2").
std::string to_string(const CudaLaunch& launch, const poly::ProgramIR& program);

} // namespace hedra::backend

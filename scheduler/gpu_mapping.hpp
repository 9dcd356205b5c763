// gpu_mapping: the GPU mapping passes of the pass list (lower.hpp), run for the cuda backend
// after the program passes. They decide everything about a kernel's launches that is not
// printing, and write it into a GpuMapping that the CUDA renderer only reads:
//   gpu.forms      which form each kernel has (kernel_forms.hpp): maps (with their launch
//                  groups), a contraction, a reduction, a reduction of several values, or none
//                  (the generic mapping: isl's loop AST, outer parallel loops over threads)
//   gpu.autotune   with a measurement (the backend's autotuner), the fastest of a
//                  contraction's candidate tilings (contraction_candidates below)
//   gpu.tile       a contraction on tensor cores (gpu_mma.hpp) where it can, else its block
//                  tile (BM×BN over M and N, a chunk of the reduction members), its thread
//                  tile (TM×TN accumulators per thread, in groups of consecutive rows and
//                  columns), the members over blockIdx.z, and split K (slices of the chunks
//                  over blockIdx.z); and the launch's grid
//   gpu.stage      which reads of a contraction are staged in shared memory: their hulls,
//                  layouts and padding, 16-byte loads and stores, register fragments, double
//                  buffering, whether the fold needs a bounds test (on tensor cores: the
//                  operand tiles' layouts and the cp.async pipeline); 32-bit index arithmetic
//                  and blocks per multiprocessor; whether the sum is stored or lives only in
//                  the accumulators its epilogues read
//   gpu.reduction  a reduction's strategy (a thread per output, a block per output, or split
//                  into partials and a final launch), threads and blocks; a tuple
//                  reduction's threads and blocks
//   gpu.launch     the threads per block and blocks of every launch of maps
//   gpu.generic-threads  after the kernel passes built the generic kernels' loop ASTs: each
//                  nest's loops over threads, threads and blocks (gpu_generic_threads.hpp)
// Every machine fact comes from the GpuTarget passed in (warp size, shared memory per block,
// multiprocessors, threads per block, grid dimensions). Every grid is decided here: a 1-D
// launch whose threads walk their range grid-stride has grid_stride_blocks' blocks. Each pass has
// its HEDRA_TIME_PASSES timer and writes its HEDRA_DUMP stage (the mapping so far, one line per
// kernel: to_string below).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/gpu_generic_threads.hpp"

#include "polyhedral/kernel_ir.hpp"
#include "scheduler/kernel_forms.hpp"
#include "scheduler/target.hpp"

namespace hedra::sched {

// One tiling of a contraction: the tile {BM, BN, reduction chunk} (empty: the policy's, from the
// problem size) and the split-K slices (0: the policy's for that tile; 1: unsplit).
struct ContractionTiling {
    std::vector<std::int64_t> tile;
    std::int64_t splits = 0;
    bool operator==(const ContractionTiling&) const = default;
};

enum class GpuForm { Map, Contraction, Reduction, TupleReduction, Generic };
const char* gpu_form_name(GpuForm form); // "map", "contraction", ...

enum class GpuReductionStrategy { Serial, Block, Split };
const char* gpu_reduction_name(GpuReductionStrategy s); // "serial", "block", "split"

// A contraction's block tile BM×BN, thread tile TM×TN (BM/TM × BN/TN threads) and reduction
// chunk KB (points of the reduction members per step). A thread's TM rows (TN columns) come in
// groups of VM (VN) consecutive ones, 4, 2 or 1: group g of thread t starts at g·T·V + t·V (T
// threads along that member), so one 16-byte shared load fetches V of a thread's operands, the
// 8 threads of a quarter warp read 128 consecutive bytes, and stores of a row stay coalesced.
struct GpuTile {
    std::int64_t bm = 0, bn = 0, tm = 0, tn = 0, kb = 0;
    std::int64_t vm = 1, vn = 1;
    std::int64_t ty() const { return bm / tm; }
    std::int64_t tx() const { return bn / tn; }
    std::int64_t threads() const { return tx() * ty(); }
};

// A read of the contraction staged in shared memory, per chunk: the box hull of its access over
// (block tile × chunk). A read that depends on one of M, N (the vector member v) through one
// buffer axis alone, with coefficient 1, is staged with that axis innermost ("counter-major":
// A of a row-major matmul is stored transposed, k-major), so a thread's operands along v are
// consecutive and each thread loads them into a register fragment with vector loads.
struct GpuStagedRead {
    int read = -1;                            // in the update statement
    std::vector<std::int64_t> hull, pitch;    // pitch: element strides in shared memory
    std::int64_t elements = 0, stored = 0;    // hull points, shared elements (with padding)
    int vector_counter = -1, vector_row = -1; // v and its buffer axis; -1: no fragment
    bool in_bounds = false; // every hull element of every block is inside the buffer
    int load_width = 1;     // elements per global load along the buffer's last axis (1 or 4)
    // A 16-byte load is stored as one 16-byte store: its four elements are adjacent in shared
    // memory and every group starts on a 16-byte boundary (four scalar stores would hit the
    // same banks when consecutive threads are 4 words apart).
    bool store_vector = false;
};

// A contraction on tensor cores (gpu_mma.hpp): warp-level mma.sync of bf16 or f16 operands
// (m16n8k16), or of f32 operands rounded to TF32 (m16n8k8, only with allow_tf32), always
// accumulating in f32. A block of warps_m × warps_n warps computes (warps_m·frags_m·16) ×
// (warps_n·frags_n·8) results, each warp frags_m × frags_n fragments of 16×8. Per chunk of kb
// reduction points, A's tile (M × K) and B's (K × N) are staged in shared memory, each with the
// axis that is contiguous in its buffer innermost, so a copy moves runs of memory: rows of the
// member with the reduction innermost (k_inner), or rows of the reduction with the member
// innermost (ldmatrix .trans, or the transposed fragment loads of TF32). `stages` chunks are
// in flight (cp.async on sm_80+: the copies of the next chunks overlap this one's products).
// Off (None) for every other contraction.
enum class GpuMma { None, Bf16, F16, Tf32 };
const char* gpu_mma_name(GpuMma mma); // "none", "bf16", "f16", "tf32"

struct GpuMmaTile {
    GpuMma kind = GpuMma::None;
    int a_read = -1, b_read = -1; // the update's reads of A (over M × K) and B (over K × N)
    int k = -1; // the innermost reduction member (all of them one flattened K, it fastest)
    // The output members flattened into M (those A reads and B does not) and into N (those B
    // reads and A does not), outermost in the result first; the last of each is c.m, c.n. A
    // convolution's batch × rows × columns is one N, a batched projection's batch × tokens
    // one M, so the blocks tile them together instead of looping over them in blockIdx.z.
    std::vector<int> m_members, n_members;
    std::int64_t warps_m = 1, warps_n = 1, frags_m = 1, frags_n = 1;
    std::int64_t kb = 0;   // reduction points per chunk (a multiple of the mma's k)
    bool ldmatrix = false; // fragments loaded by ldmatrix (16-bit operands)
    int stages = 1;        // chunks in shared memory at once (cp.async's pipeline depth)
    // Per operand (A, B): the reduction innermost in shared memory; its row pitch in elements;
    // the elements one cp.async copies (8, 4 or 2 halves, 4, 2 or 1 floats: 16, 8 or 4 bytes,
    // aligned in global and shared memory), 0: plain loads and stores.
    std::array<bool, 2> k_inner{true, true};
    std::array<std::int64_t, 2> pitch{0, 0};
    std::array<int, 2> copy{0, 0};
    std::int64_t m_extent = 0, n_extent = 0; // M's and N's flattened extents
    std::int64_t mma_k() const { return kind == GpuMma::Tf32 ? 8 : 16; }
    std::int64_t block_m() const { return warps_m * frags_m * 16; }
    std::int64_t block_n() const { return warps_n * frags_n * 8; }
    std::int64_t threads() const { return warps_m * warps_n * 32; }
    std::size_t element_bytes() const { return kind == GpuMma::Tf32 ? 4 : 2; }
    // Elements of operand w's shared tile per stage.
    std::int64_t tile_elements(int w) const {
        const std::int64_t rows = w == 0 ? block_m() : block_n();
        return (k_inner[w] ? rows : kb) * pitch[w];
    }
};

struct GpuContractionMapping {
    int m = -1, n = -1; // the tiled output members (N contiguous in the result)
    std::vector<int> z; // the other output members, over blockIdx.z
    GpuTile tile;       // block and thread tiles (tensor cores: a warp's), reduction chunk
    std::vector<std::int64_t> block_tile; // per counter: its extent in the block tile
    std::int64_t splits = 1;              // split K: slices of the chunks (1: unsplit)
    // Blocks along x (N's tiles), y (M's tiles), z (the z members times the slices, at most
    // the grid's z: the kernel walks the rest).
    std::array<std::int64_t, 3> grid{1, 1, 1};
    std::int64_t chunks = 1;           // chunks of KB points of the reduction members
    std::vector<GpuStagedRead> staged; // gpu.stage
    bool double_buffer = false;        // two shared copies, the next chunk prefetched
    // The fold tests that its element is inside M × N: a read that is not staged depends on M
    // or N, and the last tile's rows and columns may lie outside the buffer.
    bool guard_fold = false;
    std::size_t shared_bytes = 0; // static shared memory of the launch
    bool index32 = false;         // every buffer and counter range fits in int
    int min_blocks_per_sm = 0;    // __launch_bounds__'s second argument (0: none)
    // The sum itself is stored: false when only the kernel's epilogues read it (they take it
    // from the accumulators), so it never reaches memory.
    bool store_result = true;
    // Split K's final launch (per result element, init ⊕ the partials, then the epilogues):
    // its threads per block and index width.
    std::int64_t final_threads = 0;
    std::int64_t final_blocks = 0;
    bool final_index32 = false;
    GpuMmaTile mma; // tensor cores (gpu.tile); kind None: the SIMT tiles above
};

struct GpuReductionMapping {
    GpuReductionStrategy strategy = GpuReductionStrategy::Serial;
    std::int64_t threads = 0;       // per block (serial: outputs per block)
    std::int64_t blocks = 0;        // of the (first) launch, walked grid-stride
    std::int64_t slices = 1;        // split: partial blocks per output
    std::int64_t final_threads = 0; // split: the final launch's threads per block
    std::int64_t final_blocks = 0;  // split: the final launch's blocks
};

struct GpuKernelMapping {
    int kernel = -1; // in ProgramIR::kernels
    GpuForm form = GpuForm::Generic;
    std::optional<ReductionForm> reduction;   // Contraction, Reduction
    std::optional<TupleReductionForm> tuple;  // TupleReduction
    std::vector<std::vector<int>> map_groups; // Map: statements per launch
    std::vector<std::int64_t> map_threads;    // Map: threads per block of each group's launch
    std::vector<std::int64_t> map_blocks;     // Map: blocks of each group's launch
    GpuContractionMapping contraction;        // Contraction
    GpuReductionMapping reduction_mapping;    // Reduction, TupleReduction (threads)
    std::vector<GpuGenericNest> generic;      // Generic: per nest of its loop AST
};

struct GpuMapping {
    std::vector<GpuKernelMapping> kernels; // the kernels mapped, in program order
};

struct GpuMappingOptions {
    // Contraction tile (BM, BN, reduction chunk) for every contraction, never split; empty:
    // chosen from the problem size.
    std::vector<std::int64_t> tile_sizes;
    // Per kernel (its index in the IR): the tiling the autotuner chose.
    std::map<int, ContractionTiling> contraction_tilings;
    int only_kernel = -1;      // >= 0: map this kernel only (the autotuner's candidates)
    bool generic_only = false; // every kernel on the generic mapping (tests)
    // f32 contractions on tensor cores with their inputs rounded to TF32 (10 mantissa bits),
    // as PyTorch's allow_tf32; off: f32 contractions stay exact f32 (SIMT).
    bool allow_tf32 = false;
    // Contractions on the SIMT tiles only, never tensor cores (tests, comparisons).
    bool no_tensor_cores = false;
    // The autotuner's measurement (the backend's: it compiles and times each candidate on the
    // device): of kernel `kernel`'s candidate tilings, the fastest, or nothing to keep the
    // policy's. When set, gpu.autotune asks it for every contraction that has no tiling yet.
    std::function<std::optional<ContractionTiling>(
        int kernel, const std::vector<ContractionTiling>& candidates)>
        measure;
};

// The GPU mapping passes over every kernel (or options.only_kernel), in pass-list order, each
// timed and dumped.
GpuMapping map_gpu_kernels(const poly::ProgramIR& program, const GpuTarget& target,
                           const GpuMappingOptions& options = {});

// The tilings worth timing for kernel `kernel` (the autotuner's candidates): the policy's first,
// then other tiles (narrowed to the output) with the policy's split and unsplit. Empty when the
// kernel is not a contraction. Candidates may map to the same code (the caller compares).
std::vector<ContractionTiling> contraction_candidates(const poly::ProgramIR& program, int kernel);

// The mapping as the dump stages show it, one line per kernel and one per staged read
// ("k3 contraction m=1 n=2 z=0 tile=128x128/8x8 kb=16 splits=1 smem=16896 double index32
// blocks/sm=2"; " unstored" when the sum is not stored; on tensor cores " mma=bf16.m16n8k16
// warps=2x2 frags=2x4 stages=3 ldmatrix" and a line per operand, "A read 0 k-inner pitch=40
// copy=8").
std::string to_string(const GpuMapping& mapping, const poly::ProgramIR& program);

} // namespace hedra::sched

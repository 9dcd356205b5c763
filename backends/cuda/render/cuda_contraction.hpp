// The contraction template's state, shared by its three files: cuda_contraction.cpp (the kernel
// body), cuda_contraction_staging.cpp (the staging loops and register fragments) and
// cuda_contraction_epilogue.cpp (epilogues and the split-K final launch). What it prints was
// decided by the mapping passes (scheduler/gpu_mapping.hpp: gpu.tile, gpu.stage). Internal to
// backends/cuda.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/render/cuda_kernels.hpp"

namespace hedra::backend::cuda {

using Tile = sched::GpuTile;
using sched::depends;

// A thread's TM rows (TN columns) come in groups of V consecutive ones, V in {4, 2, 1}: group g
// of thread t starts at g·T·V + t·V (T threads along that member). So one 16-byte shared load
// fetches V of a thread's operands, and the 8 threads of a quarter warp read 128 consecutive
// bytes (no bank conflict); stores of a row stay coalesced across the warp.
inline std::int64_t vector_width(std::int64_t per_thread) {
    return per_thread % 4 == 0 ? 4 : per_thread % 2 == 0 ? 2 : 1;
}

// A staged read (gpu.stage) and the name of its shared copy.
struct Staged : sched::GpuStagedRead {
    std::string name;
};

// "k1·(v1) + k2·(v2) + c" for the nonzero terms.
std::string lin(const std::vector<std::pair<std::int64_t, std::string>>& terms,
                std::int64_t constant);

class Contraction {
public:
    // The contraction as the mapping passes decided it (gpu.tile, gpu.stage).
    Contraction(SourceBuilder& b, const sched::GpuKernelMapping& mapping);

    // Appends the launch (and a split's final launch) to the source builder.
    void emit();

private:
    std::int64_t chunk_count() const { return c_.chunks; }
    std::int64_t chunks_per_split() const { return ceil_div(chunk_count(), splits_); }
    std::int64_t result_elements() const { return product(b_.buffer_sizes(u_.write_buffer)); }

    // The second launch of a split contraction: per result element, init ⊕ the S partials,
    // then the result (if read elsewhere) and the epilogues, as the unsplit store does.
    void emit_final();

    std::string counter(int c) const { return "i" + std::to_string(c); }

    static std::string local_offset(const std::string& index, const std::string& thread,
                                    std::int64_t threads, std::int64_t v);

    bool contiguous_in_shared(const Staged& s) const;

    // The fragment of staged read s: a thread's T operands along v, loaded V at a time.
    std::string fragment_name(const Staged& s) const { return "hd_f" + s.name.substr(4); }

    void print_fragment(const Staged& s, const std::string& in, std::string& out) const;

    // The tile's lowest counter value of c for a coefficient of sign `negative`.
    std::string base(int c, bool negative) const;
    bool is_z(int c) const { return std::find(z_.begin(), z_.end(), c) != z_.end(); }

    // The offset in s's shared copy of the element the tile's counters read, leaving out
    // counter `skip` (-1: none).
    std::string shared_offset(const Staged& s, int skip) const;

    std::string shared_read(const Staged& s) const;

    std::int64_t threads() const { return t_.tx() * t_.ty(); }
    std::string registers_name(const Staged& s) const { return "hd_r" + s.name.substr(4); }
    // s's shared copy; in double-buffered kernels, buffer `buffer` of the two.
    std::string shared_array(const Staged& s, const std::string& buffer) const {
        return double_ ? s.name + "[" + buffer + "]" : s.name;
    }

    // How staging moves a chunk of s: global memory straight to shared (Direct), global to the
    // thread's registers (Load: the next chunk, in flight during the fold), or those registers
    // to shared (Store). Consecutive threads take consecutive elements of the hull in buffer
    // order, so global reads are coalesced along the buffer's last axis.
    enum class StageMode { Direct, Load, Store };

    void print_stage(const Staged& s, StageMode mode, const std::string& target,
                     const std::string& in, std::string& out) const;

    // Declares the chunk's reduction bases hd_k<c> for chunk number `q` (innermost fastest).
    void print_chunk_bases(const std::string& q, const std::string& in, std::string& out) const;

    bool needs_guard() const;

    std::string tile_loops(const std::string& in, const std::string& inner_body) const;

    std::string guard() const;

    std::string body(std::int64_t zt) const;

    SourceBuilder& b_;
    const sched::GpuContractionMapping& c_;
    int kernel_;
    const ReductionForm& f_;
    const poly::Statement& u_;
    int m_, n_;
    Tile t_;
    const std::vector<std::int64_t>& tile_; // per counter: its extent in the block tile
    std::vector<std::string> local_;        // per counter: its offset within the tile (C)
    const std::vector<int>& z_;             // output members over blockIdx.z
    std::vector<Staged> staged_;
    std::size_t shared_bytes_;
    bool double_;         // two shared buffers per staged read, the next chunk prefetched
    std::int64_t splits_; // split K: slices of the chunks, combined by a second launch
    int partials_ = -1;   // their scratch buffer: splits_ × the result's elements
};

} // namespace hedra::backend::cuda

// The contraction template's state, shared by its three files: cuda_contraction.cpp (the
// mapping, the kernel body, split K), cuda_contraction_staging.cpp (shared-memory staging and
// register fragments) and cuda_contraction_epilogue.cpp (epilogues and the split-K final
// launch). See cuda_contraction.cpp for the design. Internal to backends/cuda.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/cuda_kernels.hpp"

namespace hedra::backend::cuda {

struct Tile {
    std::int64_t bm, bn, tm, tn, kb;
    std::int64_t ty() const { return bm / tm; }
    std::int64_t tx() const { return bn / tn; }
};

// A thread's TM rows (TN columns) come in groups of V consecutive ones, V in {4, 2, 1}: group g
// of thread t starts at g·T·V + t·V (T threads along that member). So one 16-byte shared load
// fetches V of a thread's operands, and the 8 threads of a quarter warp read 128 consecutive
// bytes (no bank conflict); stores of a row stay coalesced across the warp.
inline std::int64_t vector_width(std::int64_t per_thread) {
    return per_thread % 4 == 0 ? 4 : per_thread % 2 == 0 ? 2 : 1;
}

inline bool depends(const poly::Read& r, int counter) {
    for (int row = 0; row < r.access.out_rank(); ++row)
        if (r.access.coeff(row, counter) != 0) return true;
    return false;
}

// A read that depends on one of M, N (the vector member v) through one buffer axis alone, with
// coefficient 1, is staged with that axis innermost ("counter-major": A of a row-major matmul
// is stored transposed, k-major), so a thread's operands along v are consecutive and each
// thread loads them into a register fragment with vector loads once per reduction step.
struct Staged {
    int read = -1;
    std::vector<std::int64_t> hull, pitch; // pitch: element strides in shared memory
    std::int64_t elements = 0, stored = 0; // hull points, shared elements (with padding)
    std::string name;
    int vector_counter = -1, vector_row = -1; // v and its buffer axis; -1: no fragment
    bool in_bounds = false; // every hull element of every block is inside the buffer
    int load_width = 1;     // elements per global load along the buffer's last axis (1 or 4)
};

// "k1·(v1) + k2·(v2) + c" for the nonzero terms.
std::string lin(const std::vector<std::pair<std::int64_t, std::string>>& terms,
                std::int64_t constant);

class Contraction {
public:
    Contraction(SourceBuilder& b, int kernel, const ReductionForm& f, int m, int n, Tile t);

    // Chooses the staged reads and their shared layout within `limit` bytes, and whether to
    // double-buffer them.
    void stage(std::size_t limit);
    // Appends the launch (and a split's final launch) to the source builder.
    void emit();

    // Split K: S slices per tile (blockIdx.z) when the tiles alone would leave most
    // multiprocessors idle, or give them few warps, and the reduction is long (each slice
    // keeps >= 4 chunks).
    void choose_splits(int multiprocessors);
    // S slices (at most one per chunk); not for custom combiners or narrowed result boxes.
    void set_splits(std::int64_t s);

private:
    std::int64_t chunks_per_split() const { return ceil_div(chunk_count(), splits_); }
    std::int64_t result_elements() const { return product(b_.buffer_sizes(u_.write_buffer)); }

    // The second launch of a split contraction: per result element, init ⊕ the S partials,
    // then the result (if read elsewhere) and the epilogues, as the unsplit store does.
    void emit_final();

    std::string counter(int c) const { return "i" + std::to_string(c); }

    bool fits_in_int(const KernelParams& params, std::int64_t zt) const;

    static std::string local_offset(const std::string& index, const std::string& thread,
                                    std::int64_t threads, std::int64_t v);

    // Sets s.vector_counter/row if read r reaches M or N (not both) through exactly one axis,
    // with coefficient 1, and that axis depends on no other tiled counter.
    void find_vector_axis(const poly::Read& r, Staged& s) const;

    // The counter's extent rounded up to whole tiles (the staging of the last tile reads
    // that far); z members run over their extent.
    std::int64_t padded_extent(int c) const;

    // Sets s.in_bounds (no bounds test in the staging loop) and s.load_width: 4 when the hull's
    // rows along the buffer's last axis are whole, 16-byte aligned runs of a 4-byte dtype in
    // every block (the row's coefficients non-negative, each tile base a multiple of 4 there,
    // the offset and the buffer's row length too), so each thread loads a float4/int4.
    void find_load_width(const poly::Read& r, Staged& s) const;
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

    std::int64_t chunk_count() const;

    // The sum's result must be stored: it is an output, or read outside this kernel's
    // epilogues.
    bool result_needed() const;

    bool needs_guard() const;

    std::string tile_loops(const std::string& in, const std::string& inner_body) const;

    std::string guard() const;

    std::string body(std::int64_t zt) const;

    SourceBuilder& b_;
    int kernel_;
    const ReductionForm& f_;
    const poly::Statement& u_;
    int m_, n_;
    Tile t_;
    std::vector<std::int64_t> tile_;
    // per counter: its extent in the block tile
    std::vector<std::string> local_;
    // per counter: its offset within the tile (C)
    std::vector<int> z_;
    // output members over blockIdx.z
    std::vector<Staged> staged_;
    std::size_t shared_bytes_ = 0;
    bool double_ = false;
    // two shared buffers per staged read, the next chunk prefetched
    std::int64_t splits_ = 1;
    // split K: slices of the chunks, combined by a second launch
    int partials_ = -1;
    // their scratch buffer: splits_ × the result's elements
};

} // namespace hedra::backend::cuda

// The GPU mapping passes (see gpu_mapping.hpp). The contraction's mapping follows PPCG: tile the
// band, blocks = outer coincident tile members, threads = coincident point members, reused
// reads promoted to shared memory; here the bands are the kernel IR's box domains, so it is
// computed in closed form per kernel form. docs/cuda.md has the measurements behind the
// policies.
#include "scheduler/gpu_mapping.hpp"

#include <algorithm>
#include <cstdlib>

#include "core/dump.hpp"
#include "scheduler/gpu_mma.hpp"

namespace hedra::sched {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
    return (a + b - 1) / b;
}

std::int64_t product(const std::vector<std::int64_t>& v) {
    std::int64_t p = 1;
    for (std::int64_t x : v)
        p *= x;
    return p;
}

// ---- gpu.forms ----

GpuKernelMapping form_of(const poly::ProgramIR& program, int k, const GpuMappingOptions& options) {
    const poly::Kernel& kernel = program.kernels[static_cast<std::size_t>(k)];
    GpuKernelMapping m;
    m.kernel = k;
    if (options.generic_only) return m;
    if (auto form = reduction_form(program, kernel)) {
        m.form = contraction_members(*form) ? GpuForm::Contraction : GpuForm::Reduction;
        m.reduction = std::move(form);
    } else if (auto tuple = tuple_reduction_form(program, kernel)) {
        // Shorter reductions run serially per element on the generic mapping.
        if (tuple->reduction_size >= 32 && tuple->num_outputs > 0) {
            m.form = GpuForm::TupleReduction;
            m.tuple = std::move(tuple);
        }
    } else if (all_assigns(kernel)) {
        m.form = GpuForm::Map;
        m.map_groups = map_launch_groups(kernel);
    }
    return m;
}

// ---- gpu.tile ----

GpuTile fit(std::int64_t bm, std::int64_t bn, std::int64_t kb) {
    std::int64_t ty = std::min<std::int64_t>(bm, 16), tx = std::min<std::int64_t>(bn, 16);
    std::int64_t tm = ceil_div(bm, ty), tn = ceil_div(bn, tx);
    return {tm * ty, tn * tx, tm, tn, std::max<std::int64_t>(kb, 1)};
}

// `tile` cut to the next power of two of `extent`.
std::int64_t narrowed(std::int64_t tile, std::int64_t extent) {
    std::int64_t p = 1;
    while (p < extent)
        p *= 2;
    return std::min(tile, p);
}

GpuTile policy_tile(const GpuTarget& target, const GpuMappingOptions& options, std::int64_t m,
                    std::int64_t n, std::int64_t z, std::int64_t reduction) {
    const std::vector<std::int64_t>& ts = options.tile_sizes;
    if (!ts.empty()) {
        std::int64_t bm = std::max<std::int64_t>(ts[0], 1);
        std::int64_t bn = ts.size() > 1 ? std::max<std::int64_t>(ts[1], 1) : bm;
        return fit(bm, bn, ts.size() > 2 ? ts[2] : 16);
    }
    // 2x2 accumulators per thread spend as many shared loads as FMAs; 4x4 a quarter; 8x8 an
    // eighth. 128x128 tiles (two blocks per multiprocessor) from one block per multiprocessor
    // up: measured on an H200 (132 SMs), N = 2048 takes 0.39 ms with them against 0.55 ms
    // with 64x64, and chunks of 16 beat 8 at N = 4096 (2.94 against 3.04 ms). 64x64 tiles are
    // used down to a quarter of a block per multiprocessor when split K (slices of >= 4
    // chunks of 16) can make up the rest: a 256x1024 result over 784 is 64 blocks x 4
    // slices, not 256 blocks of 2x2.
    auto blocks = [&](std::int64_t t) { return ceil_div(m, t) * ceil_div(n, t) * z; };
    const int sms = target.multiprocessors;
    if (blocks(128) >= sms) return {128, 128, 8, 8, 16};
    std::int64_t slices = ceil_div(reduction, 16) / 4;
    if (blocks(64) >= sms || (4 * blocks(64) >= sms && slices * blocks(64) >= sms))
        return {64, 64, 4, 4, 16};
    return {32, 32, 2, 2, 16};
}

// The policy's tile, narrowed to the output where M or N is smaller than it: a conv's 16
// channels by a 28-wide row in a 128x128 tile would leave 97% of the threads' accumulators
// idle; 16x32 is two per thread, 87% of them used.
GpuTile choose_tile(const GpuTarget& target, const GpuMappingOptions& options, std::int64_t m,
                    std::int64_t n, std::int64_t z, std::int64_t reduction) {
    GpuTile t = policy_tile(target, options, m, n, z, reduction);
    if (!options.tile_sizes.empty()) return t;
    std::int64_t bm = narrowed(t.bm, m), bn = narrowed(t.bn, n);
    return bm == t.bm && bn == t.bn ? t : fit(bm, bn, t.kb);
}

std::int64_t z_extent(const ReductionForm& f, const GpuContractionMapping& c) {
    std::int64_t zt = 1;
    for (int d : c.z)
        zt *= f.extents[d];
    return zt;
}

// S slices (at most one per chunk); not for custom combiners or narrowed result boxes.
void set_splits(const GpuTarget& target, const ReductionForm& f, GpuContractionMapping& c,
                std::int64_t s) {
    if (f.update->reduce_op == ReduceOp::Custom || !f.whole) return;
    const std::int64_t chunks = c.chunks;
    s = std::min<std::int64_t>({s, chunks, target.max_grid_z / z_extent(f, c)});
    if (s < 2) return;
    c.splits = ceil_div(chunks, ceil_div(chunks, s)); // no empty slice
}

// Split K: slices to give about two blocks per multiprocessor when fewer than half have one;
// else, for tiles narrowed below 256 threads, about 16 warps per multiprocessor when there are
// fewer than 8: a conv's weight gradient (32x16x5x5 over 64x14x14 in the MNIST CNN) is 80
// blocks of 4 warps, each folding 12544 products per element, which took 57% of the step's
// GPU time on an H200 unsplit. Each slice keeps >= 4 chunks.
void choose_splits(const GpuTarget& target, const ReductionForm& f, GpuContractionMapping& c) {
    const std::int64_t blocks =
        ceil_div(f.extents[c.m], c.tile.bm) * ceil_div(f.extents[c.n], c.tile.bn) * z_extent(f, c);
    const std::int64_t threads = c.tile.threads(), sms = target.multiprocessors;
    const std::int64_t warps = blocks * ceil_div(threads, target.warp_size);
    std::int64_t want = 1;
    if (blocks * 2 <= sms)
        want = 2 * sms / blocks;
    else if (threads < 256 && warps < 8 * sms)
        want = ceil_div(16 * sms, warps);
    if (want < 2) return;
    set_splits(target, f, c, std::min<std::int64_t>({want, c.chunks / 4, 64}));
}

// The contraction's block and thread tiles and split K; false when the tiles exceed the grid
// or a block's threads (the kernel is then mapped as a reduction).
bool tile_contraction(const GpuTarget& target, const GpuMappingOptions& options,
                      const std::map<int, ContractionTiling>& tilings, int kernel,
                      const ReductionForm& f, GpuContractionMapping& c) {
    auto [m, n] = *contraction_members(f);
    const std::int64_t z = f.num_outputs / (f.extents[m] * f.extents[n]);
    auto tuned = tilings.find(kernel);
    const ContractionTiling* tiling = tuned == tilings.end() ? nullptr : &tuned->second;
    GpuTile t =
        tiling && !tiling->tile.empty()
            ? fit(tiling->tile[0], tiling->tile.size() > 1 ? tiling->tile[1] : tiling->tile[0],
                  tiling->tile.size() > 2 ? tiling->tile[2] : 16)
            : choose_tile(target, options, f.extents[m], f.extents[n], z, f.reduction_size);
    if (ceil_div(f.extents[m], t.bm) > target.max_grid_y ||
        ceil_div(f.extents[n], t.bn) > target.max_grid_x ||
        t.threads() > target.max_threads_per_block)
        return false;
    c.m = m;
    c.n = n;
    c.tile = t;
    auto group = [](std::int64_t per_thread) -> std::int64_t {
        return per_thread % 4 == 0 ? 4 : per_thread % 2 == 0 ? 2 : 1;
    };
    c.tile.vm = group(t.tm);
    c.tile.vn = group(t.tn);
    // The reduction members are tiled by a chunk of KB points, innermost members first.
    c.block_tile.assign(f.extents.size(), 1);
    c.block_tile[m] = t.bm;
    c.block_tile[n] = t.bn;
    std::int64_t budget = t.kb;
    for (std::size_t k = f.reductions.size(); k-- > 0;) {
        int d = f.reductions[k];
        std::int64_t chunk = std::min(f.extents[d], budget);
        c.block_tile[d] = std::max<std::int64_t>(chunk, 1);
        budget = std::max<std::int64_t>(budget / c.block_tile[d], 1);
    }
    for (int d : f.reductions)
        c.chunks *= ceil_div(f.extents[d], c.block_tile[d]);
    for (int d : f.outputs)
        if (d != m && d != n) c.z.push_back(d);
    if (tiling && tiling->splits > 0)
        set_splits(target, f, c, tiling->splits);
    else if (options.tile_sizes.empty() || tiling)
        choose_splits(target, f, c);
    c.grid = {ceil_div(f.extents[n], t.bn), ceil_div(f.extents[m], t.bm),
              std::min<std::int64_t>(z_extent(f, c) * c.splits, target.max_grid_z)};
    return true;
}

// ---- gpu.stage ----

bool is_z(const GpuContractionMapping& c, int d) {
    return std::find(c.z.begin(), c.z.end(), d) != c.z.end();
}

// The counter's extent rounded up to whole tiles (the staging of the last tile reads that
// far); z members run over their extent.
std::int64_t padded_extent(const ReductionForm& f, const GpuContractionMapping& c, int d) {
    std::int64_t t = c.block_tile[static_cast<std::size_t>(d)];
    return is_z(c, d) ? f.extents[d] : ceil_div(f.extents[d], t) * t;
}

// Sets s.vector_counter/row if read r reaches M or N (not both) through exactly one axis,
// with coefficient 1, and that axis depends on no other tiled counter.
void find_vector_axis(const GpuContractionMapping& c, const poly::Read& r, GpuStagedRead& s) {
    int v = depends(r, c.m) ? c.m : c.n;
    if (depends(r, c.m) == depends(r, c.n)) return;
    int found = -1;
    for (int row = 0; row < r.access.out_rank(); ++row) {
        if (r.access.coeff(row, v) == 0) continue;
        if (found >= 0 || r.access.coeff(row, v) != 1) return;
        for (std::size_t d = 0; d < c.block_tile.size(); ++d)
            if (int(d) != v && c.block_tile[d] > 1 && r.access.coeff(row, int(d)) != 0) return;
        found = row;
    }
    s.vector_counter = v;
    s.vector_row = found;
}

// Sets s.in_bounds (no bounds test in the staging loop) and s.load_width: 4 when the hull's
// rows along the buffer's last axis are whole, 16-byte aligned runs of a 4-byte dtype in every
// block (the row's coefficients non-negative, each tile base a multiple of 4 there, the offset
// and the buffer's row length too), so each thread loads a float4/int4.
void find_load_width(const poly::ProgramIR& program, const ReductionForm& f,
                     const GpuContractionMapping& c, const poly::Read& r, GpuStagedRead& s) {
    const poly::Buffer& buffer = program.buffers.at(static_cast<std::size_t>(r.buffer));
    const std::vector<std::int64_t>& sizes = buffer.sizes;
    int rank = r.access.out_rank();
    s.in_bounds = true;
    for (int row = 0; row < rank; ++row) {
        std::int64_t lo = r.access.offset(row), hi = lo;
        for (std::size_t d = 0; d < c.block_tile.size(); ++d) {
            std::int64_t a = r.access.coeff(row, int(d)), top = padded_extent(f, c, int(d)) - 1;
            (a > 0 ? hi : lo) += a * top;
        }
        s.in_bounds = s.in_bounds && lo >= 0 && hi < sizes[static_cast<std::size_t>(row)];
    }
    DType dt = buffer.dtype;
    int last = rank - 1;
    bool aligned = s.in_bounds && (dt == DType::F32 || dt == DType::I32) &&
                   s.hull.back() % 4 == 0 && r.access.offset(last) % 4 == 0 &&
                   (rank == 1 || sizes.back() % 4 == 0);
    for (std::size_t d = 0; d < c.block_tile.size() && aligned; ++d) {
        std::int64_t a = r.access.coeff(last, int(d));
        aligned = a >= 0 && (a * (is_z(c, int(d)) ? 1 : c.block_tile[d])) % 4 == 0;
    }
    s.load_width = aligned ? 4 : 1;
}

// The staged reads and their shared layout within the target's shared memory per block, and
// whether to double-buffer them.
void stage_contraction(const poly::ProgramIR& program, const GpuTarget& target,
                       const ReductionForm& f, GpuContractionMapping& c) {
    const poly::Statement& u = *f.update;
    const std::size_t limit = target.shared_memory_per_block;
    std::size_t used = 0;
    for (std::size_t q = 0; q < u.reads.size(); ++q) {
        const poly::Read& r = u.reads[q];
        if (r.buffer < 0 || r.access.out_rank() == 0) continue;
        if (depends(r, c.m) && depends(r, c.n)) continue; // no reuse across the block
        GpuStagedRead s;
        s.read = static_cast<int>(q);
        int rank = r.access.out_rank();
        for (int row = 0; row < rank; ++row) {
            std::int64_t h = 1;
            for (std::size_t d = 0; d < c.block_tile.size(); ++d)
                h += std::llabs(r.access.coeff(row, int(d))) * (c.block_tile[d] - 1);
            s.hull.push_back(h);
        }
        find_vector_axis(c, r, s);
        find_load_width(program, f, c, r, s);
        // Shared layout: the buffer's axes in order, the vector axis moved innermost.
        std::vector<int> order;
        for (int row = 0; row < rank; ++row)
            if (row != s.vector_row) order.push_back(row);
        if (s.vector_row >= 0) order.push_back(s.vector_row);
        std::int64_t inner = s.hull[static_cast<std::size_t>(order.back())], padded = inner;
        if (s.vector_row >= 0) {
            // 16-byte rows; a pitch of 4 mod 32 words keeps the transposed stores of the
            // staging loop (consecutive threads walk the other axis) free of bank conflicts.
            padded = (inner + 3) / 4 * 4;
            if (rank >= 2 && padded % 32 == 0) padded += 4;
        } else if (rank >= 2 && inner % 2 == 0) {
            ++padded; // odd row pitch: no bank conflicts
        }
        s.pitch.assign(s.hull.size(), 1);
        std::int64_t stride = padded;
        for (std::size_t k = order.size() - 1; k-- > 0;) {
            s.pitch[static_cast<std::size_t>(order[k])] = stride;
            stride *= s.hull[static_cast<std::size_t>(order[k])];
        }
        s.elements = product(s.hull);
        s.stored = stride;
        s.store_vector = s.load_width == 4 && s.pitch.back() == 1 && s.stored % 4 == 0;
        for (std::size_t row = 0; row + 1 < s.pitch.size(); ++row)
            s.store_vector = s.store_vector && s.pitch[row] % 4 == 0;
        std::size_t bytes =
            static_cast<std::size_t>(s.stored) *
            dtype_size(program.buffers.at(static_cast<std::size_t>(r.buffer)).dtype);
        if (used + bytes > limit) continue;
        used += bytes;
        c.staged.push_back(std::move(s));
    }
    // Double buffering (one __syncthreads per chunk; the next chunk's global loads are in
    // flight while this one is folded) when twice the staged bytes fit and the prefetched
    // elements fit in a few registers per thread.
    std::int64_t registers = 0;
    for (const GpuStagedRead& st : c.staged)
        registers += ceil_div(st.elements / st.load_width, c.tile.threads()) * st.load_width;
    c.double_buffer = !c.staged.empty() && 2 * used <= limit && registers <= 32;
    c.shared_bytes = used * (c.double_buffer ? 2 : 1);
    for (std::size_t q = 0; q < u.reads.size(); ++q) {
        const poly::Read& r = u.reads[q];
        bool staged = std::any_of(c.staged.begin(), c.staged.end(),
                                  [&](const GpuStagedRead& s) { return s.read == int(q); });
        if (r.buffer >= 0 && !staged && (depends(r, c.m) || depends(r, c.n))) c.guard_fold = true;
    }
}

// 32-bit index arithmetic when every buffer the launch touches and every counter range fits in
// int: it frees enough registers (141 -> 128 on the 8x8 tile) for two blocks per
// multiprocessor. (Not with 8-byte accumulators: 64 of them alone take 128 registers.)
void choose_index_width(const GpuTarget& target, const poly::ProgramIR& program, int kernel,
                        const ReductionForm& f, GpuContractionMapping& c) {
    const std::int64_t limit = (std::int64_t{1} << 31) - 1;
    auto fits = [&](int b) {
        return product(program.buffers.at(static_cast<std::size_t>(b)).sizes) < limit;
    };
    const poly::Statement& u = *f.update;
    const std::int64_t result = product(program.buffers.at(u.write_buffer).sizes);
    bool epilogues = true;
    for (int e : f.epilogues) {
        const poly::Statement& st = program.kernels.at(static_cast<std::size_t>(kernel))
                                        .statements.at(static_cast<std::size_t>(e));
        epilogues = epilogues && fits(st.write_buffer);
        for (const poly::Read& r : st.reads)
            if (r.buffer >= 0) epilogues = epilogues && fits(r.buffer);
    }
    bool counters = true;
    for (std::size_t d = 0; d < c.block_tile.size(); ++d)
        counters = counters && padded_extent(f, c, int(d)) + c.block_tile[d] < limit;
    if (c.mma.kind != GpuMma::None) // the flattened M and N indices too
        counters = counters && c.mma.m_extent + c.mma.block_m() < limit &&
                   c.mma.n_extent + c.mma.block_n() < limit;
    bool update = fits(u.write_buffer);
    for (const poly::Read& r : u.reads)
        if (r.buffer >= 0) update = update && fits(r.buffer);
    const bool partials = c.splits * result < limit;
    c.index32 =
        update && counters && z_extent(f, c) < limit && (c.splits > 1 ? partials : epilogues);
    const DType t = program.buffers.at(static_cast<std::size_t>(u.write_buffer)).dtype;
    const bool two_blocks = c.index32 && (dtype_size(t) <= 4 || c.tile.tm * c.tile.tn <= 16);
    c.min_blocks_per_sm = two_blocks ? 2 : 0;
    if (c.splits > 1) {
        c.final_index32 = fits(u.write_buffer) && partials && epilogues && counters;
        c.final_threads =
            std::min<std::int64_t>(256, ceil_div(result, target.warp_size) * target.warp_size);
        c.final_blocks = grid_stride_blocks(ceil_div(result, c.final_threads), target);
    }
}

// Whether the sum must be stored: it is an output, has no epilogue, or some statement other
// than its kernel's init, update and epilogues reads it. Otherwise the epilogues take it from
// the accumulators and it never reaches memory.
bool result_needed(const poly::ProgramIR& program, int kernel, const ReductionForm& f) {
    const int sum = f.update->write_buffer;
    if (program.buffers.at(static_cast<std::size_t>(sum)).role == poly::BufferRole::Output ||
        f.epilogues.empty())
        return true;
    for (std::size_t k = 0; k < program.kernels.size(); ++k)
        for (std::size_t s = 0; s < program.kernels[k].statements.size(); ++s) {
            const bool own = int(k) == kernel;
            if (own && (s < 2 || std::find(f.epilogues.begin(), f.epilogues.end(), int(s)) !=
                                     f.epilogues.end()))
                continue;
            for (const poly::Read& r : program.kernels[k].statements[s].reads)
                if (r.buffer == sum) return true;
        }
    return false;
}

// ---- gpu.reduction ----

std::int64_t next_pow2(std::int64_t n, std::int64_t lo, std::int64_t hi) {
    std::int64_t out = lo;
    while (out < n && out < hi)
        out *= 2;
    return out;
}

// Whether some read walks memory contiguously along a reduction counter (its last axis moves
// by ±1 with a reduction counter): then threads should stride over the reduction.
bool contiguous_reduction(const ReductionForm& f) {
    for (const poly::Read& r : f.update->reads) {
        if (r.buffer < 0 || r.access.out_rank() == 0) continue;
        int last = r.access.out_rank() - 1;
        for (int c : f.reductions)
            if (r.access.coeff(last, c) == 1 || r.access.coeff(last, c) == -1) return true;
    }
    return false;
}

// Split (partials, then a final launch) for very few outputs with very long reductions; a
// block per output when the reduction runs along contiguous memory or the outputs are few
// (built-in ops only: the tree reassociates); else a thread per output, any combiner.
GpuReductionMapping choose_reduction(const GpuTarget& target, const ReductionForm& f) {
    GpuReductionMapping r;
    const bool custom = f.update->reduce_op == ReduceOp::Custom;
    const std::int64_t warp = target.warp_size, max_threads = 256;
    if (!custom && f.num_outputs <= 64 && f.reduction_size >= 32768) {
        r.strategy = GpuReductionStrategy::Split;
        r.slices = std::min<std::int64_t>(ceil_div(f.reduction_size, 4096), 256);
        r.threads = max_threads;
        r.final_threads = next_pow2(r.slices, warp, max_threads);
        r.blocks = grid_stride_blocks(f.num_outputs * r.slices, target);
        r.final_blocks = grid_stride_blocks(f.num_outputs, target);
    } else if (!custom && ((f.reduction_size >= 128 && contiguous_reduction(f)) ||
                           (f.reduction_size >= 32 && f.num_outputs < 2048))) {
        r.strategy = GpuReductionStrategy::Block;
        r.threads = next_pow2(f.reduction_size, warp, max_threads);
        r.blocks = grid_stride_blocks(f.num_outputs, target);
    } else {
        r.strategy = GpuReductionStrategy::Serial;
        r.threads = std::min<std::int64_t>(max_threads, ceil_div(f.num_outputs, warp) * warp);
        r.blocks =
            r.threads > 0 ? grid_stride_blocks(ceil_div(f.num_outputs, r.threads), target) : 0;
    }
    return r;
}

// ---- gpu.launch ----

std::int64_t group_points(const poly::Kernel& kernel, const std::vector<int>& group) {
    std::int64_t total = 0;
    for (int s : group)
        total += product(kernel.statements.at(static_cast<std::size_t>(s)).extents);
    return total;
}

// One thread per point, 256 per block (fewer, in whole warps, for small boxes).
std::int64_t map_threads(const GpuTarget& target, std::int64_t points) {
    const std::int64_t warp = target.warp_size;
    return std::min<std::int64_t>(256, ceil_div(points, warp) * warp);
}

void write_stage(const char* pass, const GpuMapping& mapping, const poly::ProgramIR& program) {
    if (dump::enabled()) dump::write_stage(pass, "txt", to_string(mapping, program));
}

std::string dims(const std::vector<int>& v) {
    std::string s;
    for (int x : v)
        s += (s.empty() ? "" : ",") + std::to_string(x);
    return s.empty() ? "-" : s;
}

std::string sizes(const std::vector<std::int64_t>& v, char sep) {
    std::string s;
    for (std::int64_t x : v)
        s += (s.empty() ? "" : std::string(1, sep)) + std::to_string(x);
    return s;
}

} // namespace

const char* gpu_form_name(GpuForm form) {
    switch (form) {
    case GpuForm::Map:
        return "map";
    case GpuForm::Contraction:
        return "contraction";
    case GpuForm::Reduction:
        return "reduction";
    case GpuForm::TupleReduction:
        return "tuple_reduction";
    case GpuForm::Generic:
        return "generic";
    }
    return "?";
}

const char* gpu_reduction_name(GpuReductionStrategy s) {
    switch (s) {
    case GpuReductionStrategy::Serial:
        return "serial";
    case GpuReductionStrategy::Block:
        return "block";
    case GpuReductionStrategy::Split:
        return "split";
    }
    return "?";
}

GpuMapping map_gpu_kernels(const poly::ProgramIR& program, const GpuTarget& target,
                           const GpuMappingOptions& options) {
    GpuMapping mapping;
    {
        dump::PassTimer timer("gpu.forms");
        for (std::size_t k = 0; k < program.kernels.size(); ++k)
            if (options.only_kernel < 0 || options.only_kernel == static_cast<int>(k))
                mapping.kernels.push_back(form_of(program, static_cast<int>(k), options));
    }
    write_stage("gpu.forms", mapping, program);
    // The given tilings, and the measured ones.
    std::map<int, ContractionTiling> tilings = options.contraction_tilings;
    if (options.measure && options.tile_sizes.empty()) {
        dump::PassTimer timer("gpu.autotune");
        for (const GpuKernelMapping& m : mapping.kernels) {
            if (m.form != GpuForm::Contraction || tilings.count(m.kernel)) continue;
            std::vector<ContractionTiling> candidates = contraction_candidates(program, m.kernel);
            if (candidates.size() < 2) continue;
            if (std::optional<ContractionTiling> fastest = options.measure(m.kernel, candidates))
                tilings[m.kernel] = *fastest;
        }
    }
    {
        dump::PassTimer timer("gpu.tile");
        for (GpuKernelMapping& m : mapping.kernels)
            if (m.form == GpuForm::Contraction &&
                !tile_mma(program, target, options, *m.reduction, m.contraction) &&
                !tile_contraction(target, options, tilings, m.kernel, *m.reduction,
                                  m.contraction)) {
                m.form = GpuForm::Reduction;
                m.contraction = {};
            }
    }
    write_stage("gpu.tile", mapping, program);
    {
        dump::PassTimer timer("gpu.stage");
        for (GpuKernelMapping& m : mapping.kernels)
            if (m.form == GpuForm::Contraction) {
                const bool mma = m.contraction.mma.kind != GpuMma::None;
                if (!mma) stage_contraction(program, target, *m.reduction, m.contraction);
                choose_index_width(target, program, m.kernel, *m.reduction, m.contraction);
                if (mma) stage_mma(target, m.contraction); // also its blocks per multiprocessor
                m.contraction.store_result = result_needed(program, m.kernel, *m.reduction);
            }
    }
    write_stage("gpu.stage", mapping, program);
    {
        dump::PassTimer timer("gpu.reduction");
        for (GpuKernelMapping& m : mapping.kernels) {
            if (m.form == GpuForm::Reduction)
                m.reduction_mapping = choose_reduction(target, *m.reduction);
            if (m.form == GpuForm::TupleReduction) {
                m.reduction_mapping.strategy = GpuReductionStrategy::Block;
                m.reduction_mapping.threads =
                    next_pow2(m.tuple->reduction_size, target.warp_size, 256);
                m.reduction_mapping.blocks = grid_stride_blocks(m.tuple->num_outputs, target);
            }
        }
    }
    write_stage("gpu.reduction", mapping, program);
    {
        dump::PassTimer timer("gpu.launch");
        for (GpuKernelMapping& m : mapping.kernels)
            for (const std::vector<int>& group : m.map_groups) {
                const std::int64_t points =
                    group_points(program.kernels[static_cast<std::size_t>(m.kernel)], group);
                const std::int64_t threads = map_threads(target, points);
                m.map_threads.push_back(threads);
                m.map_blocks.push_back(
                    threads > 0 ? grid_stride_blocks(ceil_div(points, threads), target) : 0);
            }
    }
    write_stage("gpu.launch", mapping, program);
    return mapping;
}

std::vector<ContractionTiling> contraction_candidates(const poly::ProgramIR& program, int kernel) {
    const poly::Kernel& k = program.kernels.at(static_cast<std::size_t>(kernel));
    std::optional<ReductionForm> form = reduction_form(program, k);
    if (!form) return {};
    auto mn = contraction_members(*form);
    if (!mn) return {};
    const std::vector<std::vector<std::int64_t>> tiles = {
        {128, 128, 16}, {128, 128, 8}, {128, 64, 8}, {64, 128, 8},
        {64, 64, 8},    {64, 64, 16},  {32, 32, 16}};
    std::vector<ContractionTiling> out{{}};
    for (std::vector<std::int64_t> tile : tiles) {
        tile[0] = narrowed(tile[0], form->extents[(*mn)[0]]);
        tile[1] = narrowed(tile[1], form->extents[(*mn)[1]]);
        for (std::int64_t splits : {0, 1})
            out.push_back({tile, splits});
    }
    return out;
}

std::string to_string(const GpuMapping& mapping, const poly::ProgramIR& program) {
    std::string s;
    for (const GpuKernelMapping& m : mapping.kernels) {
        s += program.kernels.at(static_cast<std::size_t>(m.kernel)).name + " " +
             gpu_form_name(m.form);
        switch (m.form) {
        case GpuForm::Map:
            for (std::size_t g = 0; g < m.map_groups.size(); ++g) {
                s += " [" + dims(m.map_groups[g]) + "]";
                if (g < m.map_threads.size()) s += "x" + std::to_string(m.map_threads[g]);
            }
            break;
        case GpuForm::Contraction: {
            const GpuContractionMapping& c = m.contraction;
            if (c.m < 0) {
                s += " outputs=" + dims(m.reduction->outputs) +
                     " reductions=" + dims(m.reduction->reductions);
                break;
            }
            s += " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) + " z=" + dims(c.z) +
                 " tile=" + std::to_string(c.tile.bm) + "x" + std::to_string(c.tile.bn) + "/" +
                 std::to_string(c.tile.tm) + "x" + std::to_string(c.tile.tn) +
                 " kb=" + std::to_string(c.tile.kb) + " block=" + sizes(c.block_tile, 'x') +
                 " splits=" + std::to_string(c.splits);
            if (c.shared_bytes > 0 || !c.staged.empty() || c.index32)
                s += " smem=" + std::to_string(c.shared_bytes) +
                     (c.double_buffer ? " double" : "") + (c.index32 ? " index32" : "") +
                     " blocks/sm=" + std::to_string(c.min_blocks_per_sm);
            if (!c.store_result) s += " unstored";
            if (c.mma.kind != GpuMma::None) {
                s += std::string(" mma=") + gpu_mma_name(c.mma.kind) +
                     (c.mma.kind == GpuMma::Tf32 ? ".m16n8k8" : ".m16n8k16") +
                     " warps=" + std::to_string(c.mma.warps_m) + "x" +
                     std::to_string(c.mma.warps_n) + " frags=" + std::to_string(c.mma.frags_m) +
                     "x" + std::to_string(c.mma.frags_n) +
                     " stages=" + std::to_string(c.mma.stages) +
                     (c.mma.ldmatrix ? " ldmatrix" : "");
                if (c.mma.m_members.size() > 1) s += " M=" + dims(c.mma.m_members);
                if (c.mma.n_members.size() > 1) s += " N=" + dims(c.mma.n_members);
                for (int w = 0; w < 2; ++w)
                    s += std::string("\n  ") + (w == 0 ? "A" : "B") + " read " +
                         std::to_string(w == 0 ? c.mma.a_read : c.mma.b_read) +
                         (c.mma.k_inner[w] ? " k-inner" : " k-outer") +
                         " pitch=" + std::to_string(c.mma.pitch[w]) +
                         " copy=" + std::to_string(c.mma.copy[w]);
            }
            for (const GpuStagedRead& st : c.staged)
                s += "\n  staged read " + std::to_string(st.read) + " hull=" + sizes(st.hull, 'x') +
                     " pitch=" + sizes(st.pitch, ',') + " stored=" + std::to_string(st.stored) +
                     (st.vector_row >= 0 ? " vector=i" + std::to_string(st.vector_counter) +
                                               "@axis" + std::to_string(st.vector_row)
                                         : "") +
                     (st.in_bounds ? " in-bounds" : "") + " load=" + std::to_string(st.load_width);
            break;
        }
        case GpuForm::Reduction:
            s += " outputs=" + dims(m.reduction->outputs) +
                 " reductions=" + dims(m.reduction->reductions);
            if (m.reduction_mapping.threads > 0) {
                s += std::string(" ") + gpu_reduction_name(m.reduction_mapping.strategy) +
                     " threads=" + std::to_string(m.reduction_mapping.threads);
                if (m.reduction_mapping.strategy == GpuReductionStrategy::Split)
                    s += " slices=" + std::to_string(m.reduction_mapping.slices) +
                         " final=" + std::to_string(m.reduction_mapping.final_threads);
            }
            break;
        case GpuForm::TupleReduction:
            s += " outputs=" + dims(m.tuple->outputs) + " reductions=" + dims(m.tuple->reductions);
            if (m.reduction_mapping.threads > 0)
                s += " block threads=" + std::to_string(m.reduction_mapping.threads);
            break;
        case GpuForm::Generic:
            for (const GpuGenericNest& g : m.generic)
                s += "\n  nest " + to_string(g);
            break;
        }
        s += "\n";
    }
    return s;
}

} // namespace hedra::sched

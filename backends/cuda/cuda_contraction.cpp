// The contraction template (PPCG's mapping with shared-memory promotion and register tiles):
// two coincident output members M and N are tiled BM×BN per block, each thread keeps a TM×TN
// tile of accumulators in registers (its rows and columns in groups of 4 consecutive ones, so
// operands come from shared memory in 16-byte loads and a warp's stores stay coalesced), the
// other output members run over blockIdx.z, and the reduction members are tiled by a chunk
// (innermost members first), the chunks walked by one loop. Per chunk, the box hull of every
// reused read over (block tile × chunk) is staged into __shared__ memory by all threads
// (double-buffered, the next chunk prefetched into registers), then every thread folds its
// tile. The hull of an access m over a box is m's image's bounding box, so a read of the staged
// copy is the access minus the hull origin: constant coefficients, no div/mod in the hot loop.
// N is the member that is contiguous in the result; M is the member that best splits the reads
// into "independent of N" and "independent of M" (matmul's A and B; conv's input and weights).
// Maps of the result (epilogues) are applied to the accumulators before they are stored; with
// few output tiles the chunks are split over blockIdx.z (split K). docs/cuda.md has the details.
#include <algorithm>
#include <cstdlib>

#include "backends/common/c_expr.hpp"
#include "backends/cuda/cuda_contraction.hpp"

namespace hedra::backend::cuda {

namespace {

int gemm_score(const ReductionForm& f, int m, int n) {
    bool a = false, b = false;
    for (const poly::Read& r : f.update->reads) {
        if (r.buffer < 0) continue;
        a = a || (!depends(r, m) && depends(r, n));
        b = b || (!depends(r, n) && depends(r, m));
    }
    return int(a) + int(b);
}

Tile fit(std::int64_t bm, std::int64_t bn, std::int64_t kb) {
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

// The policy's tile (below), narrowed to the output where M or N is smaller than it: a conv's
// 16 channels by a 28-wide row in a 128x128 tile would leave 97% of the threads' accumulators
// idle; 16x32 is two per thread, 87% of them used.
Tile choose_policy_tile(const SourceBuilder& b, std::int64_t m, std::int64_t n, std::int64_t z,
                        std::int64_t reduction);

Tile choose_tile(const SourceBuilder& b, std::int64_t m, std::int64_t n, std::int64_t z,
                 std::int64_t reduction) {
    Tile t = choose_policy_tile(b, m, n, z, reduction);
    if (!b.options.tile_sizes.empty()) return t;
    std::int64_t bm = narrowed(t.bm, m), bn = narrowed(t.bn, n);
    return bm == t.bm && bn == t.bn ? t : fit(bm, bn, t.kb);
}

Tile choose_policy_tile(const SourceBuilder& b, std::int64_t m, std::int64_t n, std::int64_t z,
                        std::int64_t reduction) {
    const std::vector<std::int64_t>& ts = b.options.tile_sizes;
    if (!ts.empty()) {
        std::int64_t bm = std::max<std::int64_t>(ts[0], 1);
        std::int64_t bn = ts.size() > 1 ? std::max<std::int64_t>(ts[1], 1) : bm;
        return fit(bm, bn, ts.size() > 2 ? ts[2] : 16);
    }
    // 2x2 accumulators per thread spend as many shared loads as FMAs; 4x4 a quarter; 8x8 an
    // eighth. 128x128 tiles (two blocks per multiprocessor) from one block per multiprocessor
    // up: measured on an H200 (132 SMs), N = 2048 takes 0.39 ms with them against 0.55 ms
    // with 64x64, and chunks of 16 beat 8 at N = 4096 (2.94 against 3.04 ms). 64x64 tiles are
    // used down to a quarter of a block per multiprocessor when split K (choose_splits: slices
    // of >= 4 chunks of 16) can make up the rest: a 256x1024 result over 784 is 64 blocks x 4
    // slices, not 256 blocks of 2x2.
    auto blocks = [&](std::int64_t t) { return ceil_div(m, t) * ceil_div(n, t) * z; };
    int sms = b.options.gpu.multiprocessors;
    if (blocks(128) >= sms) return {128, 128, 8, 8, 16};
    std::int64_t slices = ceil_div(reduction, 16) / 4;
    if (blocks(64) >= sms || (4 * blocks(64) >= sms && slices * blocks(64) >= sms))
        return {64, 64, 4, 4, 16};
    return {32, 32, 2, 2, 16};
}

} // namespace

Contraction::Contraction(SourceBuilder& b, int kernel, const ReductionForm& f, int m, int n, Tile t)
    : b_(b), kernel_(kernel), f_(f), u_(*f.update), m_(m), n_(n), t_(t) {
    tile_.assign(f.extents.size(), 1);
    local_.assign(f.extents.size(), "0");
    tile_[m] = t.bm;
    tile_[n] = t.bn;
    local_[m] = local_offset("hd_tm", "hd_ty", t.ty(), vector_width(t.tm));
    local_[n] = local_offset("hd_tn", "hd_tx", t.tx(), vector_width(t.tn));
    std::int64_t budget = t.kb;
    for (std::size_t k = f.reductions.size(); k-- > 0;) {
        int c = f.reductions[k];
        std::int64_t chunk = std::min(f.extents[c], budget);
        tile_[c] = std::max<std::int64_t>(chunk, 1);
        budget = std::max<std::int64_t>(budget / tile_[c], 1);
        local_[c] = "hd_c" + std::to_string(c);
    }
    for (int c : f.outputs)
        if (c != m && c != n) z_.push_back(c);
}

void Contraction::emit() {
    CudaLaunch l;
    l.function = b_.next_name(kernel_);
    l.strategy = "contraction";
    l.kernel = kernel_;
    std::int64_t zt = 1;
    for (int c : z_)
        zt *= f_.extents[c];
    if (splits_ > 1) {
        l.strategy = "contraction_split";
        partials_ = b_.add_scratch(b_.buffer_dtype(u_.write_buffer), splits_ * result_elements());
    }
    l.grid = {static_cast<unsigned>(ceil_div(f_.extents[n_], t_.bn)),
              static_cast<unsigned>(ceil_div(f_.extents[m_], t_.bm)),
              static_cast<unsigned>(std::min<std::int64_t>(zt * splits_, 65535))};
    l.block = {static_cast<unsigned>(t_.tx()), static_cast<unsigned>(t_.ty()), 1};
    l.shared_bytes = shared_bytes_;
    KernelParams params = statement_params(u_);
    if (splits_ > 1)
        params.add(partials_, true);
    else
        add_epilogue_params(b_, kernel_, f_, params);
    l.buffers = params.buffers;
    // 32-bit index arithmetic when every buffer and counter range fits in int: it frees
    // enough registers (141 -> 128 on the 8x8 tile) for two blocks per multiprocessor.
    // (Not with 8-byte accumulators: 64 of them alone take 128 registers.)
    bool narrow = fits_in_int(params, zt);
    bool two_blocks =
        narrow && (dtype_size(b_.buffer_dtype(u_.write_buffer)) <= 4 || t_.tm * t_.tn <= 16);
    Index32Scope scope(narrow);
    emit_kernel(b_, l.function, params, static_cast<int>(t_.tx() * t_.ty()), body(zt),
                two_blocks ? 2 : 0);
    b_.launches.push_back(std::move(l));
    if (splits_ > 1) emit_final();
}

void Contraction::choose_splits(int multiprocessors) {
    std::int64_t zt = 1;
    for (int c : z_)
        zt *= f_.extents[c];
    std::int64_t blocks = ceil_div(f_.extents[m_], t_.bm) * ceil_div(f_.extents[n_], t_.bn) * zt;
    // Slices to give about two blocks per multiprocessor when fewer than half have one; else,
    // for tiles narrowed below 256 threads, about 16 warps per multiprocessor when there are
    // fewer than 8: a conv's weight gradient (32x16x5x5 over 64x14x14 in the MNIST CNN) is 80
    // blocks of 4 warps, each folding 12544 products per element, which took 57% of the
    // step's GPU time on an H200 unsplit.
    std::int64_t threads = t_.tx() * t_.ty(), warps = blocks * ceil_div(threads, 32), want = 1;
    if (blocks * 2 <= multiprocessors)
        want = 2 * multiprocessors / blocks;
    else if (threads < 256 && warps < 8 * multiprocessors)
        want = ceil_div(16 * multiprocessors, warps);
    if (want < 2) return;
    set_splits(std::min<std::int64_t>({want, chunk_count() / 4, 64}));
}

void Contraction::set_splits(std::int64_t s) {
    std::int64_t zt = 1;
    for (int c : z_)
        zt *= f_.extents[c];
    if (u_.reduce_op == ReduceOp::Custom || !f_.whole) return;
    s = std::min<std::int64_t>({s, chunk_count(), 65535 / zt});
    if (s < 2) return;
    splits_ = ceil_div(chunk_count(), ceil_div(chunk_count(), s)); // no empty slice
}

bool Contraction::fits_in_int(const KernelParams& params, std::int64_t zt) const {
    const std::int64_t limit = (std::int64_t{1} << 31) - 1;
    std::size_t nb = b_.program.buffers.size();
    for (int buffer : params.buffers) {
        auto ub = static_cast<std::size_t>(buffer);
        std::int64_t n =
            ub < nb ? product(b_.buffer_sizes(buffer)) : b_.scratch.at(ub - nb).elements;
        if (n >= limit) return false;
    }
    for (std::size_t c = 0; c < tile_.size(); ++c)
        if (padded_extent(int(c)) + tile_[c] >= limit) return false;
    return zt < limit;
}

std::string Contraction::base(int c, bool negative) const {
    std::string lo = c == m_   ? "hd_m0"
                     : c == n_ ? "hd_n0"
                     : is_z(c) ? counter(c)
                               : "hd_k" + std::to_string(c);
    return negative && tile_[c] > 1 ? "(" + lo + " + " + int_text(tile_[c] - 1) + ")" : lo;
}

void Contraction::print_chunk_bases(const std::string& q, const std::string& in,
                                    std::string& out) const {
    std::int64_t below = 1;
    for (std::size_t k = f_.reductions.size(); k-- > 0;) {
        int c = f_.reductions[k];
        std::int64_t chunks = ceil_div(f_.extents[c], tile_[c]);
        std::string e = chunks == 1 ? int_text(0)
                                    : "((" + q + ")" + (below == 1 ? "" : " / " + int_text(below)) +
                                          " % " + int_text(chunks) + ") * " + int_text(tile_[c]);
        out += in + "const " + index_type() + " hd_k" + std::to_string(c) + " = " + e + ";\n";
        out += in + "(void)hd_k" + std::to_string(c) + ";\n";
        below *= chunks;
    }
}

std::int64_t Contraction::chunk_count() const {
    std::int64_t n = 1;
    for (int c : f_.reductions)
        n *= ceil_div(f_.extents[c], tile_[c]);
    return n;
}

bool Contraction::needs_guard() const {
    for (std::size_t q = 0; q < u_.reads.size(); ++q) {
        const poly::Read& r = u_.reads[q];
        bool staged = std::any_of(staged_.begin(), staged_.end(),
                                  [&](const Staged& s) { return s.read == int(q); });
        if (r.buffer >= 0 && !staged && (depends(r, m_) || depends(r, n_))) return true;
    }
    return false;
}

std::string Contraction::tile_loops(const std::string& in, const std::string& inner_body) const {
    std::string s = in + "#pragma unroll\n" + in + "for (int hd_tm = 0; hd_tm < " +
                    std::to_string(t_.tm) + "; ++hd_tm) {\n";
    s += in + "    const " + index_type() + " " + counter(m_) + " = hd_m0 + " + local_[m_] + ";\n";
    s += in + "    #pragma unroll\n" + in + "    for (int hd_tn = 0; hd_tn < " +
         std::to_string(t_.tn) + "; ++hd_tn) {\n";
    s += in + "        const " + index_type() + " " + counter(n_) + " = hd_n0 + " + local_[n_] +
         ";\n";
    return s + inner_body + in + "    }\n" + in + "}\n";
}

std::string Contraction::guard() const {
    return counter(m_) + " < " + int_text(f_.extents[m_]) + " && " + counter(n_) + " < " +
           int_text(f_.extents[n_]);
}

std::string Contraction::body(std::int64_t zt) const {
    DType t = b_.buffer_dtype(u_.write_buffer);
    std::string vt = c_value_type(t), out;
    for (const Staged& s : staged_)
        out += "    __shared__ __align__(16) " +
               std::string(c_storage_type(b_.buffer_dtype(u_.reads[s.read].buffer))) + " " +
               s.name + (double_ ? "[2]" : "") + "[" + std::to_string(s.stored) + "];\n";
    out += "    const int hd_tx = threadIdx.x, hd_ty = threadIdx.y;\n";
    out += "    const int hd_tid = hd_ty * " + std::to_string(t_.tx()) + " + hd_tx;\n";
    std::string it = index_type();
    out += "    const " + it + " hd_m0 = (" + it + ")blockIdx.y * " + int_text(t_.bm) +
           ", hd_n0 = (" + it + ")blockIdx.x * " + int_text(t_.bn) + ";\n";
    out += "    (void)hd_tid;\n";
    // Split K: blockIdx.z also walks the S slices of the chunks (slice fastest).
    out += "    for (" + it + " hd_zs = blockIdx.z; hd_zs < " + int_text(zt * splits_) +
           "; hd_zs += gridDim.z) {\n";
    std::string in = "        ";
    out += in + "const " + it + " hd_z = hd_zs / " + int_text(splits_) + ";\n";
    out += in + "const " + it + " hd_q0 = (hd_zs % " + int_text(splits_) + ") * " +
           int_text(chunks_per_split()) + ";\n";
    out += in + "const " + it + " hd_q1 = hd_lmin(hd_q0 + " + int_text(chunks_per_split()) + ", " +
           int_text(chunk_count()) + ");\n";
    out += in + "(void)hd_q1;\n";
    std::vector<std::string> zn;
    std::vector<std::int64_t> ze;
    for (int c : z_) {
        zn.push_back(counter(c));
        ze.push_back(f_.extents[c]);
    }
    print_unflatten("hd_z", ze, zn, in, out);
    std::string init =
        splits_ > 1 ? identity_literal(u_.reduce_op, t) : init_value(b_, f_, in, out);
    out += in + vt + " hd_acc[" + std::to_string(t_.tm) + "][" + std::to_string(t_.tn) + "];\n";
    out += in + "#pragma unroll\n" + in + "for (int hd_tm = 0; hd_tm < " + std::to_string(t_.tm) +
           "; ++hd_tm)\n" + in + "    #pragma unroll\n" + in + "    for (int hd_tn = 0; hd_tn < " +
           std::to_string(t_.tn) + "; ++hd_tn) hd_acc[hd_tm][hd_tn] = " + init + ";\n";
    // The reduction members' chunks, one loop over their count (innermost member fastest).
    std::string kin = in + "    ", q = "hd_q1";
    if (double_) {
        for (const Staged& s : staged_)
            out += in + c_storage_type(b_.buffer_dtype(u_.reads[s.read].buffer)) + " " +
                   registers_name(s) + "[" +
                   std::to_string(ceil_div(s.elements / s.load_width, threads()) * s.load_width) +
                   "];\n";
        out += in + "{\n";
        print_chunk_bases("hd_q0", kin, out);
        for (const Staged& s : staged_)
            print_stage(s, StageMode::Direct, s.name + "[0]", kin, out);
        out += in + "}\n" + in + "__syncthreads();\n";
    }
    out += in + "for (" + it + " hd_q = hd_q0; hd_q < " + q + "; ++hd_q) {\n";
    if (double_) {
        out += kin + "const int hd_buf = (int)((hd_q - hd_q0) & " + int_text(1) + ");\n";
        out += kin + "if (hd_q + " + int_text(1) + " < " + q + ") {\n";
        print_chunk_bases("hd_q + " + int_text(1), kin + "    ", out);
        for (const Staged& s : staged_)
            print_stage(s, StageMode::Load, "", kin + "    ", out);
        out += kin + "}\n";
        print_chunk_bases("hd_q", kin, out);
    } else {
        print_chunk_bases("hd_q", kin, out);
        for (const Staged& s : staged_)
            print_stage(s, StageMode::Direct, s.name, kin, out);
        out += kin + "__syncthreads();\n";
    }
    std::string cin = kin;
    for (int c : f_.reductions) {
        std::string hc = "hd_c" + std::to_string(c), k = "hd_k" + std::to_string(c);
        out += cin + "#pragma unroll\n" + cin + "for (int " + hc + " = 0; " + hc + " < " +
               std::to_string(tile_[c]) + "; ++" + hc + ") {\n";
        cin += "    ";
        out += cin + "const " + it + " " + counter(c) + " = " + k + " + " + hc + ";\n";
        if (f_.extents[c] % tile_[c] != 0)
            out += cin + "if (" + counter(c) + " >= " + int_text(f_.extents[c]) + ") break;\n";
    }
    for (const Staged& s : staged_)
        if (s.vector_row >= 0) print_fragment(s, cin, out);
    std::string fold, fin = cin + "            ";
    bool guarded = needs_guard();
    fold += cin + "        {\n";
    if (guarded) fold += cin + "        if (" + guard() + ") {\n";
    auto staged_read = [&](int q) {
        for (const Staged& s : staged_)
            if (s.read == q) return shared_read(s);
        return std::string();
    };
    print_fold(b_, u_, "hd_acc[hd_tm][hd_tn]", fin, "t", fold, staged_read);
    if (guarded) fold += cin + "        }\n";
    fold += cin + "        }\n";
    out += tile_loops(cin, fold);
    for (std::size_t k = 0; k < f_.reductions.size(); ++k) {
        cin.resize(cin.size() - 4);
        out += cin + "}\n";
    }
    if (double_) {
        // The other buffer was last read before the previous __syncthreads.
        out += kin + "if (hd_q + " + int_text(1) + " < " + q + ") {\n";
        for (const Staged& s : staged_)
            print_stage(s, StageMode::Store, s.name + "[hd_buf ^ 1]", kin + "    ", out);
        out += kin + "}\n";
    }
    out += kin + "__syncthreads();\n" + in + "}\n";
    std::string store, sin = in + "                ";
    if (splits_ > 1) {
        // This slice's partial result; the final launch combines the slices.
        store += sin + b_.buffer_name(partials_) + "[(hd_zs % " + int_text(splits_) + ") * " +
                 int_text(result_elements()) + " + " + result_index(f_) +
                 "] = " + store_value(t, "hd_acc[hd_tm][hd_tn]") + ";\n";
    } else {
        if (result_needed())
            store += sin + b_.buffer_name(u_.write_buffer) + "[" + result_index(f_) +
                     "] = " + store_value(t, "hd_acc[hd_tm][hd_tn]") + ";\n";
        print_epilogues(b_, kernel_, f_, "hd_acc[hd_tm][hd_tn]", sin, store);
    }
    out += tile_loops(in,
                      in + "            if (" + guard() + ") {\n" + store + in + "            }\n");
    return out + "    }\n";
}

std::optional<std::array<int, 2>> contraction_members(const ReductionForm& f) {
    if (f.num_outputs == 0 || f.reduction_size < 4) return std::nullopt;
    int n = -1;
    for (int c : f.outputs)
        if (f.extents[c] > 1 && (n < 0 || f.out_stride[c] < f.out_stride[n])) n = c;
    if (n < 0) return std::nullopt;
    int m = -1, best = 0;
    for (int c : f.outputs) {
        if (c == n || f.extents[c] <= 1) continue;
        int score = gemm_score(f, c, n);
        if (score > best ||
            (score == best && m >= 0 && score > 0 && f.extents[c] >= f.extents[m])) {
            best = score;
            m = c;
        }
    }
    if (m < 0 || best == 0 || f.extents[m] * f.extents[n] < 64) return std::nullopt;
    return std::array<int, 2>{m, n};
}

std::vector<std::int64_t> narrowed_tile(const ReductionForm& f, std::vector<std::int64_t> tile) {
    auto mn = contraction_members(f);
    if (!mn || tile.size() < 2) return tile;
    tile[0] = narrowed(tile[0], f.extents[(*mn)[0]]);
    tile[1] = narrowed(tile[1], f.extents[(*mn)[1]]);
    return tile;
}

bool emit_contraction(SourceBuilder& b, int kernel, const ReductionForm& f) {
    auto mn = contraction_members(f);
    if (!mn) return false;
    auto [m, n] = *mn;
    std::int64_t z = f.num_outputs / (f.extents[m] * f.extents[n]);
    // The autotuner's tiling for this kernel, else the policy's.
    auto tuned = b.options.contraction_tilings.find(kernel);
    const ContractionTiling* tiling =
        tuned == b.options.contraction_tilings.end() ? nullptr : &tuned->second;
    Tile t = tiling && !tiling->tile.empty()
                 ? fit(tiling->tile[0], tiling->tile.size() > 1 ? tiling->tile[1] : tiling->tile[0],
                       tiling->tile.size() > 2 ? tiling->tile[2] : 16)
                 : choose_tile(b, f.extents[m], f.extents[n], z, f.reduction_size);
    if (ceil_div(f.extents[m], t.bm) > 65535 || ceil_div(f.extents[n], t.bn) > (1LL << 31) - 1 ||
        t.tx() * t.ty() > 1024)
        return false;
    Contraction c(b, kernel, f, m, n, t);
    if (tiling && tiling->splits > 0)
        c.set_splits(tiling->splits);
    else if (b.options.tile_sizes.empty() || tiling)
        c.choose_splits(b.options.gpu.multiprocessors);
    c.stage(b.options.gpu.shared_memory_per_block);
    c.emit();
    return true;
}

} // namespace hedra::backend::cuda

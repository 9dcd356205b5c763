// The contraction template (PPCG's mapping with shared-memory promotion and register tiles):
// two coincident output members M and N are tiled BM×BN per block, each thread keeps a TM×TN
// tile of accumulators in registers (rows ty + tm·TY, columns tx + tn·TX: consecutive threads
// touch consecutive columns, so stores are coalesced and shared reads conflict-free), the other
// output members run over blockIdx.z, and the reduction members are tiled by a chunk (innermost
// members first). Per chunk, the box hull of every reused read over (block tile × chunk) is
// staged into __shared__ memory by all threads, then every thread folds its tile. The hull of
// an access m over a box is m's image's bounding box, so a read of the staged copy is the
// access minus the hull origin: constant coefficients, no div/mod in the hot loop.
// N is the member that is contiguous in the result; M is the member that best splits the reads
// into "independent of N" and "independent of M" (matmul's A and B; conv's input and weights).
#include <algorithm>
#include <cstdlib>

#include "backends/cuda/cuda_kernels.hpp"
#include "backends/openmp/c_expr.hpp"

namespace hedra::backend::cuda {

namespace {

struct Tile {
    std::int64_t bm, bn, tm, tn, kb;
    std::int64_t ty() const { return bm / tm; }
    std::int64_t tx() const { return bn / tn; }
};

// A thread's TM rows (TN columns) come in groups of V consecutive ones, V in {4, 2, 1}: group g
// of thread t starts at g·T·V + t·V (T threads along that member). So one 16-byte shared load
// fetches V of a thread's operands, and the 8 threads of a quarter warp read 128 consecutive
// bytes (no bank conflict); stores of a row stay coalesced across the warp.
std::int64_t vector_width(std::int64_t per_thread) {
    return per_thread % 4 == 0 ? 4 : per_thread % 2 == 0 ? 2 : 1;
}

bool depends(const poly::Read& r, int counter) {
    for (int row = 0; row < r.access.out_rank(); ++row)
        if (r.access.coeff(row, counter) != 0) return true;
    return false;
}

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

Tile choose_tile(const SourceBuilder& b, std::int64_t m, std::int64_t n, std::int64_t z) {
    const std::vector<std::int64_t>& ts = b.options.tile_sizes;
    if (!ts.empty()) {
        std::int64_t bm = std::max<std::int64_t>(ts[0], 1);
        std::int64_t bn = ts.size() > 1 ? std::max<std::int64_t>(ts[1], 1) : bm;
        return fit(bm, bn, ts.size() > 2 ? ts[2] : 16);
    }
    auto blocks = [&](std::int64_t t) { return ceil_div(m, t) * ceil_div(n, t) * z; };
    if (blocks(128) >= 2 * b.options.multiprocessors) return {128, 128, 8, 8, 8};
    if (blocks(64) >= b.options.multiprocessors) return {64, 64, 4, 4, 16};
    return {32, 32, 2, 2, 16};
}

// A staged read: its hull (extents per buffer axis), the padded row pitch and the array name.
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

std::string lin(const std::vector<std::pair<std::int64_t, std::string>>& terms,
                std::int64_t constant) {
    std::string s;
    for (const auto& [k, v] : terms) {
        if (k == 0) continue;
        if (!s.empty()) s += " + ";
        s += (k == 1 ? "" : "(" + std::to_string(k) + ") * ") + "(" + v + ")";
    }
    if (constant != 0 || s.empty()) s += (s.empty() ? "" : " + ") + std::to_string(constant);
    return s;
}

class Contraction {
public:
    Contraction(SourceBuilder& b, int kernel, const ReductionForm& f, int m, int n, Tile t)
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

    void stage(std::size_t limit) {
        std::size_t used = 0;
        for (std::size_t q = 0; q < u_.reads.size(); ++q) {
            const poly::Read& r = u_.reads[q];
            if (r.buffer < 0 || r.access.out_rank() == 0) continue;
            if (depends(r, m_) && depends(r, n_)) continue; // no reuse across the block
            Staged s;
            s.read = static_cast<int>(q);
            int rank = r.access.out_rank();
            for (int row = 0; row < rank; ++row) {
                std::int64_t h = 1;
                for (std::size_t c = 0; c < tile_.size(); ++c)
                    h += std::llabs(r.access.coeff(row, int(c))) * (tile_[c] - 1);
                s.hull.push_back(h);
            }
            find_vector_axis(r, s);
            find_load_width(r, s);
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
            std::size_t bytes =
                static_cast<std::size_t>(s.stored) * dtype_size(b_.buffer_dtype(r.buffer));
            if (used + bytes > limit) continue;
            used += bytes;
            s.name = "hd_s" + std::to_string(staged_.size());
            staged_.push_back(std::move(s));
        }
        // Double buffering (one __syncthreads per chunk; the next chunk's global loads are in
        // flight while this one is folded) when twice the staged bytes fit and the prefetched
        // elements fit in a few registers per thread.
        std::int64_t registers = 0;
        for (const Staged& st : staged_)
            registers += ceil_div(st.elements / st.load_width, threads()) * st.load_width;
        double_ = !staged_.empty() && 2 * used <= limit && registers <= 32;
        shared_bytes_ = used * (double_ ? 2 : 1);
    }

    void emit() {
        CudaLaunch l;
        l.function = b_.next_name(kernel_);
        l.strategy = "contraction";
        l.kernel = kernel_;
        std::int64_t zt = 1;
        for (int c : z_)
            zt *= f_.extents[c];
        if (splits_ > 1) {
            l.strategy = "contraction_split";
            partials_ =
                b_.add_scratch(b_.buffer_dtype(u_.write_buffer), splits_ * result_elements());
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
            add_epilogue_params(params);
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

    // Split K: S slices per tile (blockIdx.z) when the tiles alone would leave most
    // multiprocessors idle and the reduction is long (each slice keeps >= 4 chunks).
    void choose_splits(int multiprocessors) {
        std::int64_t zt = 1;
        for (int c : z_)
            zt *= f_.extents[c];
        std::int64_t blocks =
            ceil_div(f_.extents[m_], t_.bm) * ceil_div(f_.extents[n_], t_.bn) * zt;
        if (u_.reduce_op == ReduceOp::Custom || blocks * 2 > multiprocessors) return;
        std::int64_t s = std::min<std::int64_t>(
            {2 * multiprocessors / blocks, chunk_count() / 4, 64, 65535 / zt});
        if (s < 2) return;
        splits_ = ceil_div(chunk_count(), ceil_div(chunk_count(), s)); // no empty slice
    }

private:
    std::int64_t chunks_per_split() const { return ceil_div(chunk_count(), splits_); }
    std::int64_t result_elements() const { return product(b_.buffer_sizes(u_.write_buffer)); }

    void add_epilogue_params(KernelParams& params) const {
        for (int e : f_.epilogues) {
            const poly::Statement& st = b_.program.kernels.at(kernel_).statements.at(e);
            params.add(st.write_buffer, true);
            for (const poly::Read& r : st.reads)
                if (r.buffer >= 0 && r.buffer != u_.write_buffer) params.add(r.buffer, false);
        }
    }

    // The second launch of a split contraction: per result element, init ⊕ the S partials,
    // then the result (if read elsewhere) and the epilogues, as the unsplit store does.
    void emit_final() {
        DType t = b_.buffer_dtype(u_.write_buffer);
        const std::vector<std::int64_t>& sizes = b_.buffer_sizes(u_.write_buffer);
        std::int64_t total = result_elements();
        KernelParams params;
        params.add(u_.write_buffer, true);
        params.add(partials_, false);
        add_epilogue_params(params);
        bool narrow = fits_in_int(params, 1);
        Index32Scope scope(narrow);
        std::string it = index_type(), in = "        ";
        std::string body = "    const " + it + " hd_stride = (" + it + ")gridDim.x * blockDim.x;\n";
        body += "    for (" + it + " hd_flat = (" + it +
                ")blockIdx.x * blockDim.x + threadIdx.x; " + "hd_flat < " + int_text(total) +
                "; hd_flat += hd_stride) {\n";
        std::vector<std::string> counters;
        for (std::size_t d = 0; d < sizes.size(); ++d)
            counters.push_back("i" + std::to_string(d));
        print_unflatten("hd_flat", sizes, counters, in, body);
        std::string init = init_value(b_, f_, in, body);
        body += in + c_value_type(t) + " hd_acc = " + init + ";\n";
        std::string part = b_.buffer_name(partials_) + "[hd_j * " + int_text(total) + " + hd_flat]";
        if (t == DType::Bool) part = "(" + part + " != 0)";
        body += in + "for (int hd_j = 0; hd_j < " + std::to_string(splits_) + "; ++hd_j) {\n";
        std::string combined = print_combine(u_, t, "hd_acc", part, in + "    ", "c", body);
        body += in + "    hd_acc = " + combined + ";\n" + in + "}\n";
        if (result_needed())
            body += in + b_.buffer_name(u_.write_buffer) +
                    "[hd_flat] = " + store_value(t, "hd_acc") + ";\n";
        for (std::size_t k = 0; k < f_.epilogues.size(); ++k)
            print_epilogue_value(f_.epilogues[k], "e" + std::to_string(k), "hd_acc", in, body);
        body += "    }\n";
        CudaLaunch l;
        l.function = b_.next_name(kernel_);
        l.strategy = "contraction_final";
        l.kernel = kernel_;
        std::int64_t threads = std::min<std::int64_t>(256, ceil_div(total, 32) * 32);
        l.block = {static_cast<unsigned>(threads), 1, 1};
        l.grid = {static_cast<unsigned>(std::min<std::int64_t>(ceil_div(total, threads), 1 << 20)),
                  1, 1};
        l.buffers = params.buffers;
        emit_kernel(b_, l.function, params, 256, body);
        b_.launches.push_back(std::move(l));
    }

public:
private:
    std::string counter(int c) const { return "i" + std::to_string(c); }

    bool fits_in_int(const KernelParams& params, std::int64_t zt) const {
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

    static std::string local_offset(const std::string& index, const std::string& thread,
                                    std::int64_t threads, std::int64_t v) {
        if (v == 1) return thread + " + " + index + " * " + std::to_string(threads);
        std::string vs = std::to_string(v);
        return "(" + index + " / " + vs + ") * " + std::to_string(threads * v) + " + " + thread +
               " * " + vs + " + " + index + " % " + vs;
    }

    // Sets s.vector_counter/row if read r reaches M or N (not both) through exactly one axis,
    // with coefficient 1, and that axis depends on no other tiled counter.
    void find_vector_axis(const poly::Read& r, Staged& s) const {
        int v = depends(r, m_) ? m_ : n_;
        if (depends(r, m_) == depends(r, n_)) return;
        int found = -1;
        for (int row = 0; row < r.access.out_rank(); ++row) {
            if (r.access.coeff(row, v) == 0) continue;
            if (found >= 0 || r.access.coeff(row, v) != 1) return;
            for (std::size_t c = 0; c < tile_.size(); ++c)
                if (int(c) != v && tile_[c] > 1 && r.access.coeff(row, int(c)) != 0) return;
            found = row;
        }
        s.vector_counter = v;
        s.vector_row = found;
    }

    // The counter's extent rounded up to whole tiles (the staging of the last tile reads
    // that far); z members run over their extent.
    std::int64_t padded_extent(int c) const {
        return is_z(c) ? f_.extents[c] : ceil_div(f_.extents[c], tile_[c]) * tile_[c];
    }

    // Sets s.in_bounds (no bounds test in the staging loop) and s.load_width: 4 when the hull's
    // rows along the buffer's last axis are whole, 16-byte aligned runs of a 4-byte dtype in
    // every block (the row's coefficients non-negative, each tile base a multiple of 4 there,
    // the offset and the buffer's row length too), so each thread loads a float4/int4.
    void find_load_width(const poly::Read& r, Staged& s) const {
        const std::vector<std::int64_t>& sizes = b_.buffer_sizes(r.buffer);
        int rank = r.access.out_rank();
        s.in_bounds = true;
        for (int row = 0; row < rank; ++row) {
            std::int64_t lo = r.access.offset(row), hi = lo;
            for (std::size_t c = 0; c < tile_.size(); ++c) {
                std::int64_t a = r.access.coeff(row, int(c)), top = padded_extent(int(c)) - 1;
                (a > 0 ? hi : lo) += a * top;
            }
            s.in_bounds = s.in_bounds && lo >= 0 && hi < sizes[static_cast<std::size_t>(row)];
        }
        DType dt = b_.buffer_dtype(r.buffer);
        int last = rank - 1;
        bool aligned = s.in_bounds && (dt == DType::F32 || dt == DType::I32) &&
                       s.hull.back() % 4 == 0 && r.access.offset(last) % 4 == 0 &&
                       (rank == 1 || sizes.back() % 4 == 0);
        for (std::size_t c = 0; c < tile_.size() && aligned; ++c) {
            std::int64_t a = r.access.coeff(last, int(c));
            aligned = a >= 0 && (a * (is_z(int(c)) ? 1 : tile_[c])) % 4 == 0;
        }
        s.load_width = aligned ? 4 : 1;
    }

    // The fragment of staged read s: a thread's T operands along v, loaded V at a time.
    std::string fragment_name(const Staged& s) const { return "hd_f" + s.name.substr(4); }

    void print_fragment(const Staged& s, const std::string& in, std::string& out) const {
        const poly::Read& r = u_.reads[s.read];
        DType dt = b_.buffer_dtype(r.buffer);
        bool is_m = s.vector_counter == m_;
        std::int64_t per = is_m ? t_.tm : t_.tn, threads = is_m ? t_.ty() : t_.tx();
        std::int64_t v = vector_width(per);
        std::string st = c_storage_type(dt), f = fragment_name(s);
        std::string base = shared_offset(s, s.vector_counter);
        out += in + st + " " + f + "[" + std::to_string(per) + "];\n";
        out += in + "#pragma unroll\n" + in + "for (int hd_g = 0; hd_g < " +
               std::to_string(per / v) + "; ++hd_g) {\n";
        std::string at = base + " + hd_g * " + std::to_string(threads * v) + " + " +
                         (is_m ? "hd_ty" : "hd_tx") + " * " + std::to_string(v);
        std::string vt = dt == DType::F32 ? "float" : dt == DType::I32 ? "int" : "";
        const char* lanes[] = {"x", "y", "z", "w"};
        if (v > 1 && !vt.empty()) {
            std::string vec = vt + std::to_string(v);
            out += in + "    const " + vec + " hd_w = *reinterpret_cast<const " + vec + "*>(&" +
                   shared_array(s, "hd_buf") + "[" + at + "]);\n";
            for (std::int64_t k = 0; k < v; ++k)
                out += in + "    " + f + "[hd_g * " + std::to_string(v) + " + " +
                       std::to_string(k) + "] = hd_w." + lanes[k] + ";\n";
        } else {
            for (std::int64_t k = 0; k < v; ++k)
                out += in + "    " + f + "[hd_g * " + std::to_string(v) + " + " +
                       std::to_string(k) + "] = " + shared_array(s, "hd_buf") + "[" + at + " + " +
                       std::to_string(k) + "];\n";
        }
        out += in + "}\n";
    }

    // The tile's lowest counter value of c for a coefficient of sign `negative`.
    std::string base(int c, bool negative) const {
        std::string lo = c == m_   ? "hd_m0"
                         : c == n_ ? "hd_n0"
                         : is_z(c) ? counter(c)
                                   : "hd_k" + std::to_string(c);
        return negative && tile_[c] > 1 ? "(" + lo + " + " + int_text(tile_[c] - 1) + ")" : lo;
    }
    bool is_z(int c) const { return std::find(z_.begin(), z_.end(), c) != z_.end(); }

    // The offset in s's shared copy of the element the tile's counters read, leaving out
    // counter `skip` (-1: none).
    std::string shared_offset(const Staged& s, int skip) const {
        const poly::Read& r = u_.reads[s.read];
        std::vector<std::pair<std::int64_t, std::string>> terms;
        std::int64_t constant = 0;
        for (std::size_t c = 0; c < tile_.size(); ++c) {
            std::int64_t k = 0;
            for (int row = 0; row < r.access.out_rank(); ++row) {
                std::int64_t a = r.access.coeff(row, int(c));
                k += s.pitch[row] * a;
                if (a < 0) constant += s.pitch[row] * -a * (tile_[c] - 1);
            }
            if (tile_[c] > 1 && int(c) != skip) terms.push_back({k, local_[c]});
        }
        return lin(terms, constant);
    }

    std::string shared_read(const Staged& s) const {
        const poly::Read& r = u_.reads[s.read];
        std::string e =
            s.vector_row >= 0
                ? fragment_name(s) + "[" + (s.vector_counter == m_ ? "hd_tm" : "hd_tn") + "]"
                : shared_array(s, "hd_buf") + "[" + shared_offset(s, -1) + "]";
        return b_.buffer_dtype(r.buffer) == DType::Bool ? "(" + e + " != 0)" : e;
    }

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
                     const std::string& in, std::string& out) const {
        const poly::Read& r = u_.reads[s.read];
        const std::vector<std::int64_t>& sizes = b_.buffer_sizes(r.buffer);
        int rank = r.access.out_rank();
        std::int64_t w = s.load_width, groups = s.elements / w;
        std::string in2 = in + "    ", cond, global, place;
        if (mode == StageMode::Direct) {
            out += in + "for (int hd_e = hd_tid; hd_e < " + std::to_string(groups) +
                   "; hd_e += " + std::to_string(threads()) + ") {\n";
        } else {
            out += in + "#pragma unroll\n" + in + "for (int hd_i = 0; hd_i < " +
                   std::to_string(ceil_div(groups, threads())) + "; ++hd_i) {\n";
            out += in2 + "const int hd_e = hd_tid + hd_i * " + std::to_string(threads()) + ";\n";
            if (groups % threads() != 0)
                out += in2 + "if (hd_e >= " + std::to_string(groups) + ") break;\n";
        }
        out += in2 + "int hd_h = hd_e;\n";
        std::int64_t stride = 1;
        for (int row = rank - 1; row >= 0; --row) {
            std::string h = "hd_h" + std::to_string(row), p = "hd_p" + std::to_string(row);
            std::int64_t extent = row == rank - 1 ? s.hull[row] / w : s.hull[row];
            out += in2 + "const int " + h + " = hd_h % " + std::to_string(extent) +
                   (row == rank - 1 && w > 1 ? " * " + std::to_string(w) : "") +
                   "; hd_h /= " + std::to_string(extent) + ";\n";
            place +=
                std::string(place.empty() ? "" : " + ") + h + " * " + std::to_string(s.pitch[row]);
            if (mode == StageMode::Store) continue;
            std::string origin = int_text(r.access.offset(row));
            for (std::size_t c = 0; c < tile_.size(); ++c) {
                std::int64_t a = r.access.coeff(row, int(c));
                if (a != 0) origin += " + " + int_text(a) + " * " + base(int(c), a < 0);
            }
            out += in2 + "const " + index_type() + " " + p + " = " + origin + " + " + h + ";\n";
            cond += std::string(cond.empty() ? "" : " && ") + p + " >= " + int_text(0) + " && " +
                    p + " < " + int_text(sizes[row]);
            global += std::string(global.empty() ? "" : " + ") + p + " * " + int_text(stride);
            stride *= sizes[row];
        }
        out += in2 + "(void)hd_h;\n";
        std::string st = c_storage_type(b_.buffer_dtype(r.buffer)), regs = registers_name(s);
        std::string at = b_.buffer_name(r.buffer) + "[" + global + "]";
        if (w == 1) {
            std::string value = s.in_bounds ? at : "(" + cond + ") ? " + at + " : (" + st + ")0";
            if (mode == StageMode::Direct)
                out += in2 + target + "[" + place + "] = " + value + ";\n";
            else if (mode == StageMode::Load)
                out += in2 + regs + "[hd_i] = " + value + ";\n";
            else
                out += in2 + target + "[" + place + "] = " + regs + "[hd_i];\n";
        } else {
            // Four consecutive elements of the buffer's last axis: one 16-byte load; in shared
            // memory they are pitch[last] apart (1, or a row of the transposed layout).
            std::string vec = st == "float" ? "float4" : "int4";
            const char* lanes[] = {"x", "y", "z", "w"};
            std::string step = std::to_string(s.pitch[static_cast<std::size_t>(rank - 1)]);
            if (mode != StageMode::Store)
                out += in2 + "const " + vec + " hd_v = *reinterpret_cast<const " + vec + "*>(&" +
                       at + ");\n";
            for (int j = 0; j < 4; ++j) {
                std::string lane = "hd_v." + std::string(lanes[j]);
                std::string reg = regs + "[hd_i * 4 + " + std::to_string(j) + "]";
                std::string dst =
                    target + "[" + place + " + " + std::to_string(j) + " * " + step + "]";
                if (mode == StageMode::Direct)
                    out += in2 + dst + " = " + lane + ";\n";
                else if (mode == StageMode::Load)
                    out += in2 + reg + " = " + lane + ";\n";
                else
                    out += in2 + dst + " = " + reg + ";\n";
            }
        }
        out += in + "}\n";
    }

    // Declares the chunk's reduction bases hd_k<c> for chunk number `q` (innermost fastest).
    void print_chunk_bases(const std::string& q, const std::string& in, std::string& out) const {
        std::int64_t below = 1;
        for (std::size_t k = f_.reductions.size(); k-- > 0;) {
            int c = f_.reductions[k];
            std::int64_t chunks = ceil_div(f_.extents[c], tile_[c]);
            std::string e = chunks == 1
                                ? int_text(0)
                                : "((" + q + ")" + (below == 1 ? "" : " / " + int_text(below)) +
                                      " % " + int_text(chunks) + ") * " + int_text(tile_[c]);
            out += in + "const " + index_type() + " hd_k" + std::to_string(c) + " = " + e + ";\n";
            out += in + "(void)hd_k" + std::to_string(c) + ";\n";
            below *= chunks;
        }
    }

    std::int64_t chunk_count() const {
        std::int64_t n = 1;
        for (int c : f_.reductions)
            n *= ceil_div(f_.extents[c], tile_[c]);
        return n;
    }

    // The sum's result must be stored: it is an output, or read outside this kernel's
    // epilogues.
    bool result_needed() const {
        const poly::Buffer& w = b_.program.buffers.at(u_.write_buffer);
        if (w.role == poly::BufferRole::Output || f_.epilogues.empty()) return true;
        for (std::size_t k = 0; k < b_.program.kernels.size(); ++k)
            for (std::size_t s = 0; s < b_.program.kernels[k].statements.size(); ++s) {
                bool epilogue = int(k) == kernel_ &&
                                std::find(f_.epilogues.begin(), f_.epilogues.end(), int(s)) !=
                                    f_.epilogues.end();
                if (epilogue) continue;
                for (const poly::Read& r : b_.program.kernels[k].statements[s].reads)
                    if (r.buffer == u_.write_buffer && !(int(k) == kernel_ && s < 2)) return true;
            }
        return false;
    }

    // Epilogue statement `e` at the result element of (hd_tm, hd_tn): its counters are the
    // result's coordinates, its read of the result is the accumulator, the rest are global
    // loads. NVRTC runs with --fmad=false, so it rounds as a separate map kernel would.
    void print_epilogue(int e, const std::string& prefix, const std::string& in,
                        std::string& out) const {
        const AffineMap& w = u_.write_access;
        out += in + "{\n";
        std::string in2 = in + "    ";
        for (int row = 0; row < w.out_rank(); ++row) {
            std::string v = int_text(0);
            for (int c = 0; c < w.in_rank(); ++c)
                if (w.coeff(row, c) != 0) v = counter(c);
            out += in2 + "const " + index_type() + " hd_" + prefix + "_" + std::to_string(row) +
                   " = " + v + ";\n";
        }
        out += in2 + "{\n";
        std::string in3 = in2 + "    ";
        for (int row = 0; row < w.out_rank(); ++row)
            out += in3 + "const " + index_type() + " i" + std::to_string(row) + " = hd_" + prefix +
                   "_" + std::to_string(row) + ";\n";
        print_epilogue_value(e, prefix, "hd_acc[hd_tm][hd_tn]", in3, out);
        out += in2 + "}\n" + in + "}\n";
    }

    // Epilogue statement `e` with its counters i0.. defined and the sum's value in `acc`.
    void print_epilogue_value(int e, const std::string& prefix, const std::string& acc,
                              const std::string& in, std::string& out) const {
        const poly::Statement& st = b_.program.kernels.at(kernel_).statements.at(e);
        DType rt = b_.buffer_dtype(u_.write_buffer);
        std::string value_of_sum = "((" + std::string(c_value_type(rt)) + ")" + acc + ")";
        if (rt == DType::Bool) value_of_sum = "(" + acc + " != 0)";
        auto read = [&](int k) {
            return st.reads[static_cast<std::size_t>(k)].buffer == u_.write_buffer ? value_of_sum
                                                                                   : std::string();
        };
        std::string value = print_value(b_, st, in, prefix, out, read);
        out += in + b_.buffer_name(st.write_buffer) + "[" +
               linear_index(b_, st.write_buffer, st.write_access) +
               "] = " + store_value(b_.buffer_dtype(st.write_buffer), value) + ";\n";
    }

    bool needs_guard() const {
        for (std::size_t q = 0; q < u_.reads.size(); ++q) {
            const poly::Read& r = u_.reads[q];
            bool staged = std::any_of(staged_.begin(), staged_.end(),
                                      [&](const Staged& s) { return s.read == int(q); });
            if (r.buffer >= 0 && !staged && (depends(r, m_) || depends(r, n_))) return true;
        }
        return false;
    }

    std::string tile_loops(const std::string& in, const std::string& inner_body) const {
        std::string s = in + "#pragma unroll\n" + in + "for (int hd_tm = 0; hd_tm < " +
                        std::to_string(t_.tm) + "; ++hd_tm) {\n";
        s += in + "    const " + index_type() + " " + counter(m_) + " = hd_m0 + " + local_[m_] +
             ";\n";
        s += in + "    #pragma unroll\n" + in + "    for (int hd_tn = 0; hd_tn < " +
             std::to_string(t_.tn) + "; ++hd_tn) {\n";
        s += in + "        const " + index_type() + " " + counter(n_) + " = hd_n0 + " + local_[n_] +
             ";\n";
        return s + inner_body + in + "    }\n" + in + "}\n";
    }

    std::string guard() const {
        return counter(m_) + " < " + int_text(f_.extents[m_]) + " && " + counter(n_) + " < " +
               int_text(f_.extents[n_]);
    }

    std::string body(std::int64_t zt) const {
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
        out += in + "const " + it + " hd_q1 = hd_lmin(hd_q0 + " + int_text(chunks_per_split()) +
               ", " + int_text(chunk_count()) + ");\n";
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
        out += in + "#pragma unroll\n" + in + "for (int hd_tm = 0; hd_tm < " +
               std::to_string(t_.tm) + "; ++hd_tm)\n" + in + "    #pragma unroll\n" + in +
               "    for (int hd_tn = 0; hd_tn < " + std::to_string(t_.tn) +
               "; ++hd_tn) hd_acc[hd_tm][hd_tn] = " + init + ";\n";
        // The reduction members' chunks, one loop over their count (innermost member fastest).
        std::string kin = in + "    ", q = "hd_q1";
        if (double_) {
            for (const Staged& s : staged_)
                out +=
                    in + c_storage_type(b_.buffer_dtype(u_.reads[s.read].buffer)) + " " +
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
            for (std::size_t k = 0; k < f_.epilogues.size(); ++k)
                print_epilogue(f_.epilogues[k], "e" + std::to_string(k), sin, store);
        }
        out += tile_loops(in, in + "            if (" + guard() + ") {\n" + store + in +
                                  "            }\n");
        return out + "    }\n";
    }

    SourceBuilder& b_;
    int kernel_;
    const ReductionForm& f_;
    const poly::Statement& u_;
    int m_, n_;
    Tile t_;
    std::vector<std::int64_t> tile_; // per counter: its extent in the block tile
    std::vector<std::string> local_; // per counter: its offset within the tile (C)
    std::vector<int> z_;             // output members over blockIdx.z
    std::vector<Staged> staged_;
    std::size_t shared_bytes_ = 0;
    bool double_ = false;     // two shared buffers per staged read, the next chunk prefetched
    std::int64_t splits_ = 1; // split K: slices of the chunks, combined by a second launch
    int partials_ = -1;       // their scratch buffer: splits_ × the result's elements
};

} // namespace

bool emit_contraction(SourceBuilder& b, int kernel, const ReductionForm& f) {
    if (f.num_outputs == 0 || f.reduction_size < 4) return false;
    int n = -1;
    for (int c : f.outputs)
        if (f.extents[c] > 1 && (n < 0 || f.out_stride[c] < f.out_stride[n])) n = c;
    if (n < 0) return false;
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
    if (m < 0 || best == 0 || f.extents[m] * f.extents[n] < 64) return false;
    std::int64_t z = f.num_outputs / (f.extents[m] * f.extents[n]);
    Tile t = choose_tile(b, f.extents[m], f.extents[n], z);
    if (ceil_div(f.extents[m], t.bm) > 65535 || ceil_div(f.extents[n], t.bn) > (1LL << 31) - 1 ||
        t.tx() * t.ty() > 1024)
        return false;
    Contraction c(b, kernel, f, m, n, t);
    if (b.options.tile_sizes.empty()) c.choose_splits(b.options.multiprocessors);
    c.stage(b.options.shared_memory_limit);
    c.emit();
    return true;
}

} // namespace hedra::backend::cuda

// The contraction template (PPCG's mapping with shared-memory promotion and register tiles), as
// the mapping passes decided it (scheduler/gpu_mapping.hpp: gpu.tile, gpu.stage): two coincident
// output members M and N are tiled BM×BN per block, each thread keeps a TM×TN tile of
// accumulators in registers (its rows and columns in groups of 4 consecutive ones, so operands
// come from shared memory in 16-byte loads and a warp's stores stay coalesced), the other output
// members run over blockIdx.z, and the reduction members are tiled by a chunk (innermost members
// first), the chunks walked by one loop. Per chunk, the staged reads' box hulls over (block tile
// × chunk) are copied into __shared__ memory by all threads (double-buffered: the next chunk
// prefetched into registers; 16-byte global loads where aligned), then every thread folds its
// tile, staged operands read from register fragments or shared memory. The hull of an access
// over a box is its image's bounding box, so a read of the staged copy is the access minus the
// hull origin: constant coefficients, no div/mod in the hot loop. Maps of the result
// (epilogues) are applied to the accumulators before they are stored; with split K, blockIdx.z
// also walks the slices of the chunks and a second launch combines them. docs/cuda.md has the
// details.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backends/common/c_expr.hpp"
#include "backends/cuda/render/cuda_kernels.hpp"

namespace hedra::backend::cuda {

namespace {

using sched::depends;

// A staged read (gpu.stage) and the name of its shared copy.
struct Staged : sched::GpuStagedRead {
    std::string name;
};

class Contraction {
public:
    Contraction(SourceBuilder& b, const sched::GpuKernelMapping& mapping)
        : b_(b), c_(mapping.contraction), kernel_(mapping.kernel), f_(*mapping.reduction),
          u_(*f_.update), m_(c_.m), n_(c_.n), t_(c_.tile), tile_(c_.block_tile) {
        local_.assign(f_.extents.size(), "0");
        local_[m_] = local_offset("hd_tm", "hd_ty", t_.ty(), t_.vm);
        local_[n_] = local_offset("hd_tn", "hd_tx", t_.tx(), t_.vn);
        for (int c : f_.reductions)
            local_[c] = "hd_c" + std::to_string(c);
        for (const sched::GpuStagedRead& read : c_.staged) {
            Staged s{read, "hd_s" + std::to_string(staged_.size())};
            staged_.push_back(std::move(s));
        }
    }

    // Appends the launch (and a split's final launch) to the source builder.
    void emit() {
        std::int64_t zt = 1;
        for (int c : c_.z)
            zt *= f_.extents[c];
        KernelParams params = statement_params(u_);
        if (c_.splits > 1) {
            partials_ =
                b_.add_scratch(b_.buffer_dtype(u_.write_buffer), c_.splits * result_elements());
            params.add(partials_, true);
        } else {
            add_epilogue_params(b_, kernel_, f_, params);
        }
        std::array<unsigned, 3> grid{static_cast<unsigned>(c_.grid[0]),
                                     static_cast<unsigned>(c_.grid[1]),
                                     static_cast<unsigned>(c_.grid[2])};
        Index32Scope scope(c_.index32);
        b_.launch(kernel_, c_.splits > 1 ? "contraction_split" : "contraction", grid,
                  {static_cast<unsigned>(t_.tx()), static_cast<unsigned>(t_.ty()), 1}, params,
                  static_cast<int>(threads()), body(zt), c_.shared_bytes, c_.min_blocks_per_sm);
        if (c_.splits > 1) emit_final();
    }

private:
    std::int64_t chunks_per_split() const { return ceil_div(c_.chunks, c_.splits); }
    std::int64_t result_elements() const { return product(b_.buffer_sizes(u_.write_buffer)); }
    std::int64_t threads() const { return t_.tx() * t_.ty(); }
    std::string counter(int c) const { return "i" + std::to_string(c); }
    bool is_z(int c) const { return std::find(c_.z.begin(), c_.z.end(), c) != c_.z.end(); }
    // The fragment of staged read s: a thread's T operands along v, loaded V at a time.
    std::string fragment_name(const Staged& s) const { return "hd_f" + s.name.substr(4); }
    std::string registers_name(const Staged& s) const { return "hd_r" + s.name.substr(4); }
    // s's shared copy; in double-buffered kernels, buffer `buffer` of the two.
    std::string shared_array(const Staged& s, const std::string& buffer) const {
        return c_.double_buffer ? s.name + "[" + buffer + "]" : s.name;
    }

    // The second launch of a split contraction: per result element, init ⊕ the S partials,
    // then the result (if read elsewhere) and the epilogues, as the unsplit store does.
    void emit_final() {
        DType t = b_.buffer_dtype(u_.write_buffer);
        const std::vector<std::int64_t>& sizes = b_.buffer_sizes(u_.write_buffer);
        std::int64_t total = result_elements();
        KernelParams params = partials_params(b_, kernel_, f_, partials_);
        Index32Scope scope(c_.final_index32);
        std::string in = "        ";
        std::string body =
            grid_stride_loop(b_.dialect, "hd_flat", int_text(total), true, index_type());
        print_unflatten("hd_flat", sizes, counter_names(sizes.size()), in, body);
        std::string init = init_value(b_, f_, in, body);
        body += in + c_value_type(t) + " hd_acc = " + init + ";\n";
        std::string part = b_.buffer_name(partials_) + "[hd_j * " + int_text(total) + " + hd_flat]";
        if (t == DType::Bool) part = "(" + part + " != 0)";
        body += in + "for (int hd_j = 0; hd_j < " + std::to_string(c_.splits) + "; ++hd_j) {\n";
        std::string combined = print_combine(u_, t, "hd_acc", part, in + "    ", "c", body);
        body += in + "    hd_acc = " + combined + ";\n" + in + "}\n";
        if (c_.store_result)
            body += in + b_.buffer_name(u_.write_buffer) +
                    "[hd_flat] = " + store_value(t, "hd_acc") + ";\n";
        for (std::size_t k = 0; k < f_.epilogues.size(); ++k)
            print_epilogue_value(b_, kernel_, f_, f_.epilogues[k], "e" + std::to_string(k),
                                 "hd_acc", in, body);
        body += "    }\n";
        b_.launch(kernel_, "contraction_final", grid_of(c_.final_blocks),
                  {static_cast<unsigned>(c_.final_threads), 1, 1}, params, 256, body);
    }

    static std::string local_offset(const std::string& index, const std::string& thread,
                                    std::int64_t threads, std::int64_t v) {
        if (v == 1) return thread + " + " + index + " * " + std::to_string(threads);
        std::string vs = std::to_string(v);
        return "(" + index + " / " + vs + ") * " + std::to_string(threads * v) + " + " + thread +
               " * " + vs + " + " + index + " % " + vs;
    }

    void print_fragment(const Staged& s, const std::string& in, std::string& out) const {
        const poly::Read& r = u_.reads[s.read];
        DType dt = b_.buffer_dtype(r.buffer);
        bool is_m = s.vector_counter == m_;
        std::int64_t per = is_m ? t_.tm : t_.tn, threads = is_m ? t_.ty() : t_.tx();
        std::int64_t v = is_m ? t_.vm : t_.vn;
        std::string st = c_storage_type(dt), f = fragment_name(s);
        std::string base = shared_offset(s, s.vector_counter);
        out += in + st + " " + f + "[" + std::to_string(per) + "];\n";
        out += unrolled_loop(b_.dialect, in, "hd_g", per / v) + " {\n";
        std::string at = base + " + hd_g * " + std::to_string(threads * v) + " + " +
                         (is_m ? "hd_ty" : "hd_tx") + " * " + std::to_string(v);
        std::string vt = dt == DType::F32 ? "float" : dt == DType::I32 ? "int" : "";
        std::string vec = vt + std::to_string(v), src = shared_array(s, "hd_buf") + "[" + at;
        const char* lanes[] = {"x", "y", "z", "w"};
        if (v > 1 && !vt.empty())
            out += in + "    const " + vec + " hd_w = *reinterpret_cast<const " + vec + "*>(&" +
                   src + "]);\n";
        for (std::int64_t k = 0; k < v; ++k)
            out += in + "    " + f + "[hd_g * " + std::to_string(v) + " + " + std::to_string(k) +
                   "] = " +
                   (v > 1 && !vt.empty() ? "hd_w." + std::string(lanes[k])
                                         : src + " + " + std::to_string(k) + "]") +
                   ";\n";
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

    // How staging moves a chunk of s, as data: from global memory or from the thread's
    // registers, to shared memory or to those registers. Direct is global to shared; with
    // double buffering, Load takes the next chunk into registers (in flight during the fold)
    // and Store puts them into shared memory. Consecutive threads take consecutive elements of
    // the hull in buffer order, so global reads are coalesced along the buffer's last axis.
    struct StageMode {
        bool from_global, to_shared;
    };
    static constexpr StageMode kDirect{true, true}, kLoad{true, false}, kStore{false, true};

    void print_stage(const Staged& s, StageMode mode, const std::string& target,
                     const std::string& in, std::string& out) const {
        const poly::Read& r = u_.reads[s.read];
        const std::vector<std::int64_t>& sizes = b_.buffer_sizes(r.buffer);
        int rank = r.access.out_rank();
        std::int64_t w = s.load_width, groups = s.elements / w;
        std::string in2 = in + "    ", cond, global, place;
        if (mode.from_global && mode.to_shared) {
            out += in + "for (int hd_e = hd_tid; hd_e < " + std::to_string(groups) +
                   "; hd_e += " + std::to_string(threads()) + ") {\n";
        } else {
            out += unrolled_loop(b_.dialect, in, "hd_i", ceil_div(groups, threads())) + " {\n";
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
            if (!mode.from_global) continue;
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
        // Four consecutive elements of the buffer's last axis are one 16-byte load; in shared
        // memory they are pitch[last] apart (1, or a row of the transposed layout).
        std::string vec = st == "float" ? "float4" : "int4";
        const char* lanes[] = {"x", "y", "z", "w"};
        auto reg = [&](int j) {
            return regs + (w == 1 ? "[hd_i]" : "[hd_i * 4 + " + std::to_string(j) + "]");
        };
        auto from = [&](int j) {
            if (!mode.from_global) return reg(j);
            if (w > 1) return "hd_v." + std::string(lanes[j]);
            // The half formats' storage is a struct: zero is its value-initialization.
            std::string zero = is_half(b_.buffer_dtype(r.buffer)) ? st + "{}" : "(" + st + ")0";
            return s.in_bounds ? at : "(" + cond + ") ? " + at + " : " + zero;
        };
        auto to = [&](int j) {
            if (!mode.to_shared) return reg(j);
            return target + "[" + place +
                   (w == 1 ? ""
                           : " + " + std::to_string(j) + " * " + std::to_string(s.pitch.back())) +
                   "]";
        };
        if (w > 1 && mode.from_global)
            out += in2 + "const " + vec + " hd_v = *reinterpret_cast<const " + vec + "*>(&" + at +
                   ");\n";
        if (w > 1 && mode.to_shared && s.store_vector) {
            // Stored as loaded: one 16-byte store.
            std::string value = "hd_v";
            if (!mode.from_global)
                value = vec + "{" + regs + "[hd_i * 4], " + reg(1) + ", " + reg(2) + ", " + reg(3) +
                        "}";
            out += in2 + "*reinterpret_cast<" + vec + "*>(&" + target + "[" + place +
                   "]) = " + value + ";\n";
        } else {
            for (int j = 0; j < w; ++j)
                out += in2 + to(j) + " = " + from(j) + ";\n";
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

    std::string tile_loops(const std::string& in, const std::string& inner_body) const {
        std::string s = unrolled_loop(b_.dialect, in, "hd_tm", t_.tm) + " {\n";
        s += in + "    const " + index_type() + " " + counter(m_) + " = hd_m0 + " + local_[m_] +
             ";\n";
        s += unrolled_loop(b_.dialect, in + "    ", "hd_tn", t_.tn) + " {\n";
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
            out += "    " + b_.dialect.shared_prefix + "__align__(16) " +
                   std::string(c_storage_type(b_.buffer_dtype(u_.reads[s.read].buffer))) + " " +
                   s.name + (c_.double_buffer ? "[2]" : "") + "[" + std::to_string(s.stored) +
                   "];\n";
        out += "    const int hd_tx = threadIdx.x, hd_ty = threadIdx.y;\n";
        out += "    const int hd_tid = hd_ty * " + std::to_string(t_.tx()) + " + hd_tx;\n";
        std::string it = index_type();
        out += "    const " + it + " hd_m0 = (" + it + ")blockIdx.y * " + int_text(t_.bm) +
               ", hd_n0 = (" + it + ")blockIdx.x * " + int_text(t_.bn) + ";\n";
        out += "    (void)hd_tid;\n";
        // Split K: blockIdx.z also walks the S slices of the chunks (slice fastest).
        out += "    for (" + it + " hd_zs = blockIdx.z; hd_zs < " + int_text(zt * c_.splits) +
               "; hd_zs += gridDim.z) {\n";
        std::string in = "        ";
        out += in + "const " + it + " hd_z = hd_zs / " + int_text(c_.splits) + ";\n";
        out += in + "const " + it + " hd_q0 = (hd_zs % " + int_text(c_.splits) + ") * " +
               int_text(chunks_per_split()) + ";\n";
        out += in + "const " + it + " hd_q1 = hd_lmin(hd_q0 + " + int_text(chunks_per_split()) +
               ", " + int_text(c_.chunks) + ");\n";
        out += in + "(void)hd_q1;\n";
        print_unflatten("hd_z", f_.extents, c_.z, in, out);
        std::string init = c_.splits > 1 ? identity_literal(b_.dialect, u_.reduce_op, t)
                                         : init_value(b_, f_, in, out);
        out += in + vt + " hd_acc[" + std::to_string(t_.tm) + "][" + std::to_string(t_.tn) + "];\n";
        out += unrolled_loop(b_.dialect, in, "hd_tm", t_.tm) + "\n" +
               unrolled_loop(b_.dialect, in + "    ", "hd_tn", t_.tn) +
               " hd_acc[hd_tm][hd_tn] = " + init + ";\n";
        // The reduction members' chunks, one loop over their count (innermost member fastest).
        std::string kin = in + "    ", q = "hd_q1";
        if (c_.double_buffer) {
            for (const Staged& s : staged_)
                out +=
                    in + c_storage_type(b_.buffer_dtype(u_.reads[s.read].buffer)) + " " +
                    registers_name(s) + "[" +
                    std::to_string(ceil_div(s.elements / s.load_width, threads()) * s.load_width) +
                    "];\n";
            out += in + "{\n";
            print_chunk_bases("hd_q0", kin, out);
            for (const Staged& s : staged_)
                print_stage(s, kDirect, s.name + "[0]", kin, out);
            out += in + "}\n" + in + b_.dialect.barrier + "\n";
        }
        out += in + "for (" + it + " hd_q = hd_q0; hd_q < " + q + "; ++hd_q) {\n";
        if (c_.double_buffer) {
            out += kin + "const int hd_buf = (int)((hd_q - hd_q0) & " + int_text(1) + ");\n";
            out += kin + "if (hd_q + " + int_text(1) + " < " + q + ") {\n";
            print_chunk_bases("hd_q + " + int_text(1), kin + "    ", out);
            for (const Staged& s : staged_)
                print_stage(s, kLoad, "", kin + "    ", out);
            out += kin + "}\n";
            print_chunk_bases("hd_q", kin, out);
        } else {
            print_chunk_bases("hd_q", kin, out);
            for (const Staged& s : staged_)
                print_stage(s, kDirect, s.name, kin, out);
            out += kin + b_.dialect.barrier + "\n";
        }
        std::string cin = kin;
        for (int c : f_.reductions) {
            std::string hc = "hd_c" + std::to_string(c), k = "hd_k" + std::to_string(c);
            out += unrolled_loop(b_.dialect, cin, hc, tile_[c]) + " {\n";
            cin += "    ";
            out += cin + "const " + it + " " + counter(c) + " = " + k + " + " + hc + ";\n";
            if (f_.extents[c] % tile_[c] != 0)
                out += cin + "if (" + counter(c) + " >= " + int_text(f_.extents[c]) + ") break;\n";
        }
        for (const Staged& s : staged_)
            if (s.vector_row >= 0) print_fragment(s, cin, out);
        std::string fold, fin = cin + "            ";
        bool guarded = c_.guard_fold;
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
        if (c_.double_buffer) {
            // The other buffer was last read before the previous __syncthreads.
            out += kin + "if (hd_q + " + int_text(1) + " < " + q + ") {\n";
            for (const Staged& s : staged_)
                print_stage(s, kStore, s.name + "[hd_buf ^ 1]", kin + "    ", out);
            out += kin + "}\n";
        }
        out += kin + b_.dialect.barrier + "\n" + in + "}\n";
        std::string store, sin = in + "                ";
        if (c_.splits > 1) {
            // This slice's partial result; the final launch combines the slices.
            store += sin + b_.buffer_name(partials_) + "[(hd_zs % " + int_text(c_.splits) + ") * " +
                     int_text(result_elements()) + " + " + result_index(f_) +
                     "] = " + store_value(t, "hd_acc[hd_tm][hd_tn]") + ";\n";
        } else {
            print_result_element(b_, kernel_, f_, "hd_acc[hd_tm][hd_tn]", sin, store,
                                 c_.store_result);
        }
        out += tile_loops(in, in + "            if (" + guard() + ") {\n" + store + in +
                                  "            }\n");
        return out + "    }\n";
    }

    SourceBuilder& b_;
    const sched::GpuContractionMapping& c_;
    int kernel_;
    const ReductionForm& f_;
    const poly::Statement& u_;
    int m_, n_;
    sched::GpuTile t_;
    const std::vector<std::int64_t>& tile_; // per counter: its extent in the block tile
    std::vector<std::string> local_;        // per counter: its offset within the tile (C)
    std::vector<Staged> staged_;
    int partials_ = -1; // split K's partial results: c_.splits × the result's elements
};

} // namespace

void emit_contraction(SourceBuilder& b, const sched::GpuKernelMapping& mapping) {
    Contraction(b, mapping).emit();
}

} // namespace hedra::backend::cuda

// The contraction template (PPCG's mapping with shared-memory promotion and register tiles), as
// the mapping passes decided it (scheduler/gpu_mapping.hpp): two coincident output members M
// and N are tiled BM×BN per block, each thread keeps a TM×TN tile of accumulators in registers
// (its rows and columns in groups of 4 consecutive ones, so operands come from shared memory in
// 16-byte loads and a warp's stores stay coalesced), the other output members run over
// blockIdx.z, and the reduction members are tiled by a chunk (innermost members first), the
// chunks walked by one loop. Per chunk, the staged reads' box hulls over (block tile × chunk)
// are copied into __shared__ memory by all threads (double-buffered: the next chunk prefetched
// into registers), then every thread folds its tile. The hull of an access over a box is its
// image's bounding box, so a read of the staged copy is the access minus the hull origin:
// constant coefficients, no div/mod in the hot loop. Maps of the result (epilogues) are applied
// to the accumulators before they are stored; with split K, blockIdx.z also walks the slices
// of the chunks and a second launch combines them. docs/cuda.md has the details.
#include <algorithm>
#include <cstdlib>

#include "backends/common/c_expr.hpp"
#include "backends/cuda/render/cuda_contraction.hpp"

namespace hedra::backend::cuda {

Contraction::Contraction(SourceBuilder& b, const sched::GpuKernelMapping& mapping)
    : b_(b), c_(mapping.contraction), kernel_(mapping.kernel), f_(*mapping.reduction),
      u_(*f_.update), m_(c_.m), n_(c_.n), t_(c_.tile), tile_(c_.block_tile), z_(c_.z),
      shared_bytes_(c_.shared_bytes), double_(c_.double_buffer), splits_(c_.splits) {
    local_.assign(f_.extents.size(), "0");
    local_[m_] = local_offset("hd_tm", "hd_ty", t_.ty(), vector_width(t_.tm));
    local_[n_] = local_offset("hd_tn", "hd_tx", t_.tx(), vector_width(t_.tn));
    for (int c : f_.reductions)
        local_[c] = "hd_c" + std::to_string(c);
    for (const sched::GpuStagedRead& read : c_.staged) {
        Staged s{read, "hd_s" + std::to_string(staged_.size())};
        staged_.push_back(std::move(s));
    }
}

void Contraction::emit() {
    std::int64_t zt = 1;
    for (int c : z_)
        zt *= f_.extents[c];
    KernelParams params = statement_params(u_);
    if (splits_ > 1) {
        partials_ = b_.add_scratch(b_.buffer_dtype(u_.write_buffer), splits_ * result_elements());
        params.add(partials_, true);
    } else {
        add_epilogue_params(b_, kernel_, f_, params);
    }
    std::array<unsigned, 3> grid{
        static_cast<unsigned>(ceil_div(f_.extents[n_], t_.bn)),
        static_cast<unsigned>(ceil_div(f_.extents[m_], t_.bm)),
        static_cast<unsigned>(std::min<std::int64_t>(zt * splits_, 65535))};
    Index32Scope scope(c_.index32);
    b_.launch(kernel_, splits_ > 1 ? "contraction_split" : "contraction", grid,
              {static_cast<unsigned>(t_.tx()), static_cast<unsigned>(t_.ty()), 1}, params,
              static_cast<int>(threads()), body(zt), shared_bytes_, c_.min_blocks_per_sm);
    if (splits_ > 1) emit_final();
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
        splits_ > 1 ? identity_literal(b_.dialect, u_.reduce_op, t) : init_value(b_, f_, in, out);
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
        if (result_needed(b_.program, kernel_, f_))
            store += sin + b_.buffer_name(u_.write_buffer) + "[" + result_index(f_) +
                     "] = " + store_value(t, "hd_acc[hd_tm][hd_tn]") + ";\n";
        print_epilogues(b_, kernel_, f_, "hd_acc[hd_tm][hd_tn]", sin, store);
    }
    out += tile_loops(in,
                      in + "            if (" + guard() + ") {\n" + store + in + "            }\n");
    return out + "    }\n";
}

void emit_contraction(SourceBuilder& b, const sched::GpuKernelMapping& mapping) {
    Contraction(b, mapping).emit();
}

} // namespace hedra::backend::cuda

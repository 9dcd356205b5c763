// The tensor-core contraction template: prints the mapping gpu.tile and gpu.stage chose
// (scheduler/gpu_mma.hpp). A block's warps each own frags_m × frags_n fragments of 16×8
// accumulators (f32, four per thread in mma.sync's C layout). The reduction (its members
// flattened) is walked in chunks of kb points through `stages` shared-memory stages: all
// threads copy a chunk's A and B tiles, each with its buffer's contiguous axis innermost (by
// cp.async where the runs are aligned, else element by element; zero outside the operands, so
// ragged edges add nothing), stages - 1 chunks ahead of the one being multiplied; each warp
// loads its fragments (ldmatrix, .trans for rows of K, for 16-bit operands; plain shared loads
// rounded to TF32 for f32) and issues one mma.sync per fragment pair and k step. The result
// elements are the accumulators' (the epilogues applied as the SIMT template does). The device
// helpers wrap the PTX; the CPU emulator (tests/cuda/emulator.cpp) supplies warp-collective
// versions of the same helpers, with the PTX ISA's fragment layouts.
#include <algorithm>
#include <string>
#include <vector>

#include "backends/common/c_expr.hpp"
#include "backends/cuda/render/cuda_kernels.hpp"

namespace hedra::backend::cuda {

namespace {

// Printed once per program before its first tensor-core kernel. NVRTC compiles them as device
// functions (-default-device); under the emulator its header defines them instead.
const char* kMmaHelpers = R"(#ifndef HEDRA_CUDA_EMULATION
// Tensor cores: D += A·B on one warp's fragments (mma.sync, the PTX ISA's layouts), ldmatrix
// of four or two 8×8 tiles of 16-bit elements from shared memory (transposed or not), cp.async
// copies into shared memory and their groups, and f32 -> TF32 rounding.
static inline void hd_mma_bf16(float* d, const unsigned* a, const unsigned* b) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
static inline void hd_mma_f16(float* d, const unsigned* a, const unsigned* b) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
static inline void hd_mma_tf32(float* d, const unsigned* a, const unsigned* b) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
static inline unsigned hd_shared_address(const void* p) {
    unsigned s;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(s) : "l"(p));
    return s;
}
static inline void hd_ldmatrix_x4(unsigned* r, const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(hd_shared_address(p)));
}
static inline void hd_ldmatrix_x2(unsigned* r, const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(hd_shared_address(p)));
}
static inline void hd_ldmatrix_x4_trans(unsigned* r, const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(hd_shared_address(p)));
}
static inline void hd_ldmatrix_x2_trans(unsigned* r, const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(hd_shared_address(p)));
}
// cp.async of 16, 8 or 4 bytes, of which the first `bytes` are read and the rest zeroed.
static inline void hd_cp_async16(void* d, const void* s, unsigned bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
                 :: "r"(hd_shared_address(d)), "l"(s), "r"(bytes) : "memory");
}
static inline void hd_cp_async8(void* d, const void* s, unsigned bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;"
                 :: "r"(hd_shared_address(d)), "l"(s), "r"(bytes) : "memory");
}
static inline void hd_cp_async4(void* d, const void* s, unsigned bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;"
                 :: "r"(hd_shared_address(d)), "l"(s), "r"(bytes) : "memory");
}
static inline void hd_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
static inline void hd_cp_async_wait0() { asm volatile("cp.async.wait_group 0;" ::: "memory"); }
static inline void hd_cp_async_wait1() { asm volatile("cp.async.wait_group 1;" ::: "memory"); }
static inline unsigned hd_tf32(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}
#endif

)";

class MmaContraction {
public:
    MmaContraction(SourceBuilder& b, const sched::GpuKernelMapping& mapping)
        : b_(b), c_(mapping.contraction), t_(c_.mma), kernel_(mapping.kernel),
          f_(*mapping.reduction), u_(*f_.update) {}

    void emit() {
        if (!b_.mma_helpers) b_.functions += kMmaHelpers;
        b_.mma_helpers = true;
        KernelParams params = statement_params(u_);
        add_epilogue_params(b_, kernel_, f_, params);
        std::array<unsigned, 3> grid{static_cast<unsigned>(c_.grid[0]),
                                     static_cast<unsigned>(c_.grid[1]),
                                     static_cast<unsigned>(c_.grid[2])};
        Index32Scope scope(c_.index32);
        b_.launch(kernel_, "contraction_mma", grid, {static_cast<unsigned>(t_.threads()), 1, 1},
                  params, static_cast<int>(t_.threads()), body(), c_.shared_bytes,
                  c_.min_blocks_per_sm);
    }

private:
    bool tf32() const { return t_.kind == sched::GpuMma::Tf32; }
    std::string counter(int c) const { return "i" + std::to_string(c); }
    std::string n(std::int64_t v) const { return std::to_string(v); }

    // M's (w = 0) or N's index: the member's counter, or the flat index of several members.
    std::string flat_name(int w) const {
        const std::vector<int>& members = w == 0 ? t_.m_members : t_.n_members;
        if (members.size() > 1) return w == 0 ? "hd_mf" : "hd_nf";
        return counter(members.back());
    }

    std::string elem() const { return tf32() ? "float" : "unsigned short"; }
    std::string shared(int w) const { return w == 0 ? "hd_sa" : "hd_sb"; }
    // Operand w's element at (member offset x, reduction offset y) in stage `stage`.
    std::string at(int w, const std::string& stage, const std::string& x,
                   const std::string& y) const {
        const std::string p = n(t_.pitch[w]);
        return shared(w) + "[" + stage + "][" +
               (t_.k_inner[w] ? "(" + x + ") * " + p + " + " + y
                              : "(" + y + ") * " + p + " + " + x) +
               "]";
    }

    // Copies chunk `chunk` (an index expression) of operand w into stage `stage`: consecutive
    // threads take consecutive runs along the innermost axis (contiguous in the buffer); by
    // cp.async where gpu.tile found the runs aligned (copying only what lies inside the
    // operand, zero beyond), else element by element.
    void print_copy(int w, const std::string& chunk, const std::string& stage,
                    const std::string& in, std::string& out) const {
        const int k = t_.k;
        const std::int64_t rows = w == 0 ? t_.block_m() : t_.block_n();
        const poly::Read& r = u_.reads.at(static_cast<std::size_t>(w == 0 ? t_.a_read : t_.b_read));
        const std::int64_t run = std::max(t_.copy[w], 1);
        const std::int64_t inner = t_.k_inner[w] ? t_.kb : rows,
                           outer = t_.k_inner[w] ? rows : t_.kb;
        const std::string it = index_type(), in2 = in + "    ";
        const std::string m0 = w == 0 ? "hd_m0" : "hd_n0";
        out += in + "for (int hd_e = hd_tid; hd_e < " + n(outer * inner / run) +
               "; hd_e += " + n(t_.threads()) + ") {\n";
        out += in2 + "const int hd_o = hd_e / " + n(inner / run) + ", hd_c = hd_e % " +
               n(inner / run) + (run > 1 ? " * " + n(run) : "") + ";\n";
        const std::string x = t_.k_inner[w] ? "hd_o" : "hd_c", y = t_.k_inner[w] ? "hd_c" : "hd_o";
        // The member's counter, or with flattened members (a convolution's batch × rows ×
        // columns) the flat index and their counters.
        const std::vector<int>& members = w == 0 ? t_.m_members : t_.n_members;
        const std::string mf = flat_name(w);
        out += in2 + "const " + it + " " + mf + " = " + m0 + " + " + x + ";\n";
        if (members.size() > 1) print_unflatten(mf, f_.extents, members, in2, out);
        const std::string extent = int_text(w == 0 ? t_.m_extent : t_.n_extent);
        // The flattened reduction point, and with several reduction members their counters.
        const bool flat = f_.reductions.size() > 1;
        const std::string kf = flat ? "hd_kf" : counter(k), total = int_text(f_.reduction_size);
        out += in2 + "const " + it + " " + kf + " = (" + chunk + ") * " + int_text(t_.kb) + " + " +
               y + ";\n";
        if (flat) print_unflatten(kf, f_.extents, f_.reductions, in2, out);
        const std::string global =
            b_.buffer_name(r.buffer) + "[" + linear_index(b_, r.buffer, r.access) + "]";
        const std::string dst = at(w, stage, x, y);
        if (t_.copy[w] > 0) {
            const std::int64_t bytes = run * static_cast<std::int64_t>(t_.element_bytes());
            // The run's elements inside the operand: none past the outer axis' extent, a prefix
            // at the inner one's (gpu.tile keeps a run of a flattened K within one innermost
            // row, so there it is whole or empty).
            const std::string member_in = mf + " < " + extent;
            out += in2 + "const " + it + " hd_n = " +
                   (t_.k_inner[w] ? member_in + " ? " + total + " - " + kf
                                  : kf + " < " + total + " ? " + extent + " - " + mf) +
                   " : " + int_text(0) + ";\n";
            out += in2 + "hd_cp_async" + n(bytes) + "(&" + dst + ", hd_n > 0 ? &" + global + " : " +
                   b_.buffer_name(r.buffer) + ", hd_n >= " + int_text(run) + " ? " + n(bytes) +
                   "u : hd_n > 0 ? (unsigned)hd_n * " + n(t_.element_bytes()) + "u : 0u);\n";
        } else {
            out += in2 + dst + " = " + mf + " < " + extent + " && " + kf + " < " + total + " ? " +
                   global + (tf32() ? "" : ".bits") + " : " +
                   (tf32() ? "0.0f" : "(unsigned short)0") + ";\n";
        }
        out += in + "}\n";
    }

    void print_copies(const std::string& chunk, const std::string& stage, const std::string& in,
                      std::string& out) const {
        print_copy(0, chunk, stage, in, out);
        print_copy(1, chunk, stage, in, out);
    }

    // One k step of mma_k points at hd_kk of stage `stage`: the warp's fragments from shared
    // memory, then the products.
    void print_step(const std::string& stage, const std::string& in, std::string& out) const {
        out += in + "unsigned hd_a[" + n(t_.frags_m) + "][4], hd_b[" + n(t_.frags_n) + "][2];\n";
        out += unrolled_loop(b_.dialect, in, "hd_i", t_.frags_m) + " {\n";
        const std::string in2 = in + "    ";
        if (t_.ldmatrix) {
            // The four 8×8 tiles of a0..a3: rows (M) 0-7 and 8-15 at k, then at k + 8; lanes
            // 8j..8j+7 address tile j's rows: M rows (k innermost) or k rows (.trans).
            const std::string x = "hd_wm + hd_i * 16 + " + std::string(t_.k_inner[0]
                                                                           ? "hd_lane % 16"
                                                                           : "hd_lane / 8 % 2 * 8"),
                              y = "hd_kk + " + std::string(t_.k_inner[0]
                                                               ? "hd_lane / 16 * 8"
                                                               : "hd_lane / 16 * 8 + hd_lane % 8");
            out += in2 + "hd_ldmatrix_x4" + (t_.k_inner[0] ? "" : "_trans") + "(hd_a[hd_i], &" +
                   at(0, stage, x, y) + ");\n";
        } else {
            // TF32: a0 = (g, t), a1 = (g + 8, t), a2 = (g, t + 4), a3 = (g + 8, t + 4).
            for (int v = 0; v < 4; ++v)
                out += in2 + "hd_a[hd_i][" + n(v) + "] = hd_tf32(" +
                       at(0, stage, "hd_wm + hd_i * 16 + hd_g" + std::string(v % 2 ? " + 8" : ""),
                          "hd_kk + hd_t" + std::string(v / 2 ? " + 4" : "")) +
                       ");\n";
        }
        out += in + "}\n";
        out += unrolled_loop(b_.dialect, in, "hd_j", t_.frags_n) + " {\n";
        if (t_.ldmatrix) {
            // b0, b1: tiles at k and k + 8 of the fragment's 8 columns (N); lanes 0-7 and 8-15.
            const std::string x = "hd_wn + hd_j * 8" +
                                  std::string(t_.k_inner[1] ? " + hd_lane % 8" : ""),
                              y = "hd_kk + hd_lane / 8 % 2 * 8" +
                                  std::string(t_.k_inner[1] ? "" : " + hd_lane % 8");
            out += in2 + "hd_ldmatrix_x2" + (t_.k_inner[1] ? "" : "_trans") + "(hd_b[hd_j], &" +
                   at(1, stage, x, y) + ");\n";
        } else {
            // TF32: b0 = (t, g), b1 = (t + 4, g).
            for (int v = 0; v < 2; ++v)
                out += in2 + "hd_b[hd_j][" + n(v) + "] = hd_tf32(" +
                       at(1, stage, "hd_wn + hd_j * 8 + hd_g",
                          "hd_kk + hd_t" + std::string(v ? " + 4" : "")) +
                       ");\n";
        }
        out += in + "}\n";
        out += unrolled_loop(b_.dialect, in, "hd_i", t_.frags_m) + "\n" +
               unrolled_loop(b_.dialect, in + "    ", "hd_j", t_.frags_n) + " hd_mma_" +
               sched::gpu_mma_name(t_.kind) + "(hd_acc[hd_i][hd_j], hd_a[hd_i], hd_b[hd_j]);\n";
    }

    std::string body() const {
        const std::string it = index_type(), S = n(t_.stages);
        std::string out;
        for (int w = 0; w < 2; ++w)
            out += "    " + b_.dialect.shared_prefix + "__align__(16) " + elem() + " " + shared(w) +
                   "[" + S + "][" + n(t_.tile_elements(w)) + "];\n";
        out +=
            "    const int hd_tid = threadIdx.x, hd_lane = hd_tid % 32, hd_warp = hd_tid / 32;\n";
        out += "    const int hd_wm = hd_warp / " + n(t_.warps_n) + " * " + n(t_.frags_m * 16) +
               ", hd_wn = hd_warp % " + n(t_.warps_n) + " * " + n(t_.frags_n * 8) + ";\n";
        out += "    const int hd_g = hd_lane / 4, hd_t = hd_lane % 4;\n";
        out += "    (void)hd_g;\n    (void)hd_t;\n";
        out += "    const " + it + " hd_m0 = (" + it + ")blockIdx.y * " + int_text(t_.block_m()) +
               ", hd_n0 = (" + it + ")blockIdx.x * " + int_text(t_.block_n()) + ";\n";
        std::int64_t zt = 1;
        for (int c : c_.z)
            zt *= f_.extents[c];
        out += "    for (" + it + " hd_z = blockIdx.z; hd_z < " + int_text(zt) +
               "; hd_z += gridDim.z) {\n";
        std::string in = "        ";
        print_unflatten("hd_z", f_.extents, c_.z, in, out);
        std::string init = init_value(b_, f_, in, out);
        const std::string fm = n(t_.frags_m), fn = n(t_.frags_n);
        out += in + "float hd_acc[" + fm + "][" + fn + "][4];\n";
        out += unrolled_loop(b_.dialect, in, "hd_i", t_.frags_m) + "\n" +
               unrolled_loop(b_.dialect, in + "    ", "hd_j", t_.frags_n) + "\n" +
               unrolled_loop(b_.dialect, in + "        ", "hd_v", 4) +
               " hd_acc[hd_i][hd_j][hd_v] = " + init + ";\n";
        const std::string chunks = int_text(c_.chunks), kin = in + "    ";
        const bool async = t_.copy[0] > 0 || t_.copy[1] > 0;
        auto commit = [&](const std::string& at) {
            if (async) out += at + "hd_cp_async_commit();\n";
        };
        auto wait = [&](int pending, const std::string& at) {
            if (async) out += at + "hd_cp_async_wait" + n(pending) + "();\n";
        };
        // The previous batch's products are done before its stages are refilled.
        out += in + b_.dialect.barrier + "\n";
        if (t_.stages > 1) {
            // The first stages - 1 chunks in flight; then per chunk: wait for it, a barrier
            // (its copies are visible, and every warp is done with the stage the next copy
            // refills), the copy of the chunk stages - 1 ahead, the products. One commit per
            // chunk, empty past the end, keeps wait_group's count.
            for (int s = 0; s + 1 < t_.stages; ++s) {
                out += in + "if (" + int_text(s) + " < " + chunks + ") {\n";
                print_copies(int_text(s), n(s), kin, out);
                out += in + "}\n";
                commit(in);
            }
            out += in + "for (" + it + " hd_q = 0; hd_q < " + chunks + "; ++hd_q) {\n";
            wait(t_.stages - 2, kin);
            out += kin + b_.dialect.barrier + "\n";
            out += kin + "const " + it + " hd_next = hd_q + " + int_text(t_.stages - 1) + ";\n";
            out += kin + "if (hd_next < " + chunks + ") {\n";
            print_copies("hd_next", "hd_next % " + int_text(t_.stages), kin + "    ", out);
            out += kin + "}\n";
            commit(kin);
        } else {
            out += in + "for (" + it + " hd_q = 0; hd_q < " + chunks + "; ++hd_q) {\n";
            out += kin + b_.dialect.barrier + "\n";
            print_copies("hd_q", "0", kin, out);
            commit(kin);
            wait(0, kin);
            out += kin + b_.dialect.barrier + "\n";
        }
        const std::string stage = t_.stages > 1 ? "hd_q % " + int_text(t_.stages) : "0";
        out += kin + "const int hd_s = (int)(" + stage + ");\n";
        // The chunk's k steps one at a time: unrolled, the compiler loads every step's
        // fragments up front, which spills on the 8-warp tile at two blocks per multiprocessor.
        out += b_.dialect.unroll.empty() ? "" : kin + b_.dialect.unroll + " 1\n";
        out += kin + "for (int hd_kk = 0; hd_kk < " + n(t_.kb) + "; hd_kk += " + n(t_.mma_k()) +
               ") {\n";
        print_step("hd_s", kin + "    ", out);
        out += kin + "}\n" + in + "}\n";
        // The accumulators in mma's C layout: c0, c1 at row g, columns 2t and 2t + 1 of the
        // fragment; c2, c3 eight rows below.
        std::string store, sin = in + "            ";
        store += unrolled_loop(b_.dialect, in + "        ", "hd_v", 4) + " {\n";
        store += sin + "const " + it + " " + flat_name(0) +
                 " = hd_m0 + hd_wm + hd_i * 16 + hd_g + hd_v / 2 * 8;\n";
        store += sin + "const " + it + " " + flat_name(1) +
                 " = hd_n0 + hd_wn + hd_j * 8 + hd_t * 2 + hd_v % 2;\n";
        store += sin + "if (" + flat_name(0) + " < " + int_text(t_.m_extent) + " && " +
                 flat_name(1) + " < " + int_text(t_.n_extent) + ") {\n";
        if (t_.m_members.size() > 1)
            print_unflatten(flat_name(0), f_.extents, t_.m_members, sin + "    ", store);
        if (t_.n_members.size() > 1)
            print_unflatten(flat_name(1), f_.extents, t_.n_members, sin + "    ", store);
        print_result_element(b_, kernel_, f_, "hd_acc[hd_i][hd_j][hd_v]", sin + "    ", store,
                             c_.store_result);
        store += sin + "}\n" + in + "        }\n";
        out += unrolled_loop(b_.dialect, in, "hd_i", t_.frags_m) + " {\n" +
               unrolled_loop(b_.dialect, in + "    ", "hd_j", t_.frags_n) + " {\n" + store + in +
               "    }\n" + in + "}\n";
        return out + "    }\n";
    }

    SourceBuilder& b_;
    const sched::GpuContractionMapping& c_;
    const sched::GpuMmaTile& t_;
    int kernel_;
    const ReductionForm& f_;
    const poly::Statement& u_;
};

} // namespace

void emit_mma_contraction(SourceBuilder& b, const sched::GpuKernelMapping& mapping) {
    MmaContraction(b, mapping).emit();
}

} // namespace hedra::backend::cuda

// The tensor-core contraction template: prints the mapping gpu.tile and gpu.stage chose
// (scheduler/gpu_mma.hpp). A block's warps each own frags_m × frags_n fragments of 16×8
// accumulators (f32, four per thread in mma.sync's C layout); per chunk of kb reduction points
// all threads copy A's BM rows and B's BN rows into shared memory, reduction innermost (zero
// outside the operands, so ragged edges add nothing), then each warp loads its A and B
// fragments (ldmatrix for 16-bit operands; TF32 operands, rounded while staged, by plain shared
// loads) and issues one mma.sync per fragment pair and k step. The result elements are the
// accumulators' (the epilogues applied as the SIMT template does). The device helpers wrap the
// PTX; the CPU emulator (tests/cuda/emulator.cpp) supplies warp-collective versions of the same
// helpers, with the PTX ISA's fragment layouts.
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
// of four or two 8×8 tiles of 16-bit elements from shared memory, and f32 -> TF32 rounding.
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

    // Copies the chunk's tile of operand `which` (0: A over M, 1: B over N) into `shared`:
    // rows of the tiled member, the reduction innermost, zero outside the operand.
    void print_stage(int which, const std::string& shared, const std::string& in,
                     std::string& out) const {
        const int member = which == 0 ? c_.m : c_.n, k = t_.k;
        const std::int64_t rows = which == 0 ? t_.block_m() : t_.block_n();
        const poly::Read& r =
            u_.reads.at(static_cast<std::size_t>(which == 0 ? t_.a_read : t_.b_read));
        const std::string it = index_type(), in2 = in + "    ";
        out += in + "for (int hd_e = hd_tid; hd_e < " + n(rows * t_.kb) +
               "; hd_e += " + n(t_.threads()) + ") {\n";
        // Consecutive threads take consecutive elements along the buffer's last axis.
        if (t_.fastest[which] == k)
            out +=
                in2 + "const int hd_r = hd_e / " + n(t_.kb) + ", hd_c = hd_e % " + n(t_.kb) + ";\n";
        else
            out +=
                in2 + "const int hd_r = hd_e % " + n(rows) + ", hd_c = hd_e / " + n(rows) + ";\n";
        out += in2 + "const " + it + " " + counter(member) + " = " +
               (which == 0 ? "hd_m0" : "hd_n0") + " + hd_r;\n";
        out += in2 + "const " + it + " " + counter(k) + " = hd_k0 + hd_c;\n";
        std::string value = b_.buffer_name(r.buffer) + "[" + linear_index(b_, r.buffer, r.access) +
                            "]" + (tf32() ? "" : ".bits");
        if (tf32()) value = "hd_tf32(" + value + ")";
        out += in2 + shared + "[hd_r * " + n(t_.pitch) + " + hd_c] = " + counter(member) + " < " +
               int_text(f_.extents[member]) + " && " + counter(k) + " < " +
               int_text(f_.extents[k]) + " ? " + value + " : " +
               (tf32() ? "0u" : "(unsigned short)0") + ";\n";
        out += in + "}\n";
    }

    // One k step of mma_k points at hd_kk: the warp's fragments from shared memory, then the
    // products.
    void print_step(const std::string& in, std::string& out) const {
        const std::string p = n(t_.pitch);
        out += in + "unsigned hd_a[" + n(t_.frags_m) + "][4], hd_b[" + n(t_.frags_n) + "][2];\n";
        out += unrolled_loop(b_.dialect, in, "hd_i", t_.frags_m) + " {\n";
        if (t_.ldmatrix) {
            // Lanes 0-15 address rows 0-15 at k, lanes 16-31 the same rows at k + 8: the four
            // 8×8 tiles land in a0..a3 as mma's A layout wants them.
            out += in +
                   "    hd_ldmatrix_x4(hd_a[hd_i], &hd_sa[(hd_wm + hd_i * 16 + hd_lane % 16) * " +
                   p + " + hd_kk + hd_lane / 16 * 8]);\n";
        } else {
            out += in + "    const unsigned* hd_p = &hd_sa[(hd_wm + hd_i * 16 + hd_g) * " + p +
                   " + hd_kk + hd_t];\n";
            out += in + "    hd_a[hd_i][0] = hd_p[0];\n" + in + "    hd_a[hd_i][1] = hd_p[" +
                   n(8 * t_.pitch) + "];\n" + in + "    hd_a[hd_i][2] = hd_p[4];\n" + in +
                   "    hd_a[hd_i][3] = hd_p[" + n(8 * t_.pitch + 4) + "];\n";
        }
        out += in + "}\n";
        out += unrolled_loop(b_.dialect, in, "hd_j", t_.frags_n) + " {\n";
        if (t_.ldmatrix) {
            // B's rows are N, the reduction innermost: lanes 0-7 address k, lanes 8-15 k + 8.
            out += in +
                   "    hd_ldmatrix_x2(hd_b[hd_j], &hd_sb[(hd_wn + hd_j * 8 + hd_lane % 8) * " + p +
                   " + hd_kk + hd_lane / 8 % 2 * 8]);\n";
        } else {
            out += in + "    const unsigned* hd_p = &hd_sb[(hd_wn + hd_j * 8 + hd_g) * " + p +
                   " + hd_kk + hd_t];\n";
            out += in + "    hd_b[hd_j][0] = hd_p[0];\n" + in + "    hd_b[hd_j][1] = hd_p[4];\n";
        }
        out += in + "}\n";
        out += unrolled_loop(b_.dialect, in, "hd_i", t_.frags_m) + "\n" +
               unrolled_loop(b_.dialect, in + "    ", "hd_j", t_.frags_n) + " hd_mma_" +
               sched::gpu_mma_name(t_.kind) + "(hd_acc[hd_i][hd_j], hd_a[hd_i], hd_b[hd_j]);\n";
    }

    std::string body() const {
        const std::string it = index_type(), elem = tf32() ? "unsigned" : "unsigned short";
        std::string out;
        out += "    " + b_.dialect.shared_prefix + "__align__(16) " + elem + " hd_sa[" +
               n(t_.block_m() * t_.pitch) + "];\n";
        out += "    " + b_.dialect.shared_prefix + "__align__(16) " + elem + " hd_sb[" +
               n(t_.block_n() * t_.pitch) + "];\n";
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
        out += in + "for (" + it + " hd_k0 = 0; hd_k0 < " + int_text(f_.extents[t_.k]) +
               "; hd_k0 += " + int_text(t_.kb) + ") {\n";
        const std::string kin = in + "    ";
        print_stage(0, "hd_sa", kin, out);
        print_stage(1, "hd_sb", kin, out);
        out += kin + b_.dialect.barrier + "\n";
        // The chunk's k steps one at a time: unrolled, the compiler loads every step's
        // fragments up front, which spills on the 8-warp tile at two blocks per multiprocessor.
        out += b_.dialect.unroll.empty() ? "" : kin + b_.dialect.unroll + " 1\n";
        out += kin + "for (int hd_kk = 0; hd_kk < " + n(t_.kb) + "; hd_kk += " + n(t_.mma_k()) +
               ") {\n";
        print_step(kin + "    ", out);
        out += kin + "}\n";
        // The next chunk overwrites the tiles this one's fragments were loaded from.
        out += kin + b_.dialect.barrier + "\n" + in + "}\n";
        // The accumulators in mma's C layout: c0, c1 at row g, columns 2t and 2t + 1 of the
        // fragment; c2, c3 eight rows below.
        std::string store, sin = in + "            ";
        store += unrolled_loop(b_.dialect, in + "        ", "hd_v", 4) + " {\n";
        store += sin + "const " + it + " " + counter(c_.m) +
                 " = hd_m0 + hd_wm + hd_i * 16 + hd_g + hd_v / 2 * 8;\n";
        store += sin + "const " + it + " " + counter(c_.n) +
                 " = hd_n0 + hd_wn + hd_j * 8 + hd_t * 2 + hd_v % 2;\n";
        store += sin + "if (" + counter(c_.m) + " < " + int_text(f_.extents[c_.m]) + " && " +
                 counter(c_.n) + " < " + int_text(f_.extents[c_.n]) + ") {\n";
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

// The tensor-core mapping of a contraction (see gpu_mma.hpp).
#include "scheduler/gpu_mma.hpp"

#include <algorithm>

namespace hedra::sched {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
    return (a + b - 1) / b;
}

// The read whose value `e` is: Input(k), or Input(k) cast to f32. -1 otherwise.
int read_of(const ScalarExpr& e) {
    if (e->op == ScalarOp::Input) return static_cast<int>(e->ivalue);
    if (e->op == ScalarOp::Cast && e->dtype == DType::F32 && e->args.at(0)->op == ScalarOp::Input)
        return static_cast<int>(e->args[0]->ivalue);
    return -1;
}

// The coefficients of read r's row-major element index in the statement's counters, and its
// constant.
struct Linear {
    std::vector<std::int64_t> coef;
    std::int64_t constant = 0;
};
Linear linear(const poly::Buffer& buffer, const poly::Read& r) {
    Linear l;
    l.coef.assign(static_cast<std::size_t>(r.access.in_rank()), 0);
    std::int64_t stride = 1;
    for (int row = r.access.out_rank() - 1; row >= 0; --row) {
        for (int d = 0; d < r.access.in_rank(); ++d)
            l.coef[static_cast<std::size_t>(d)] += stride * r.access.coeff(row, d);
        l.constant += stride * r.access.offset(row);
        stride *= buffer.sizes.at(static_cast<std::size_t>(row));
    }
    return l;
}

// Operand w's layout: the reduction innermost unless the member is the contiguous one (element
// index coefficient 1 and the innermost reduction member's is not), and the widest cp.async copy
// (16, 8 or 4 bytes) whose runs of the innermost counter are contiguous and aligned in global
// memory for every tile: the innermost counter's coefficient 1, every other counter's and the
// constant a multiple of the run, the tile's extent along it too.
void choose_layout(const poly::ProgramIR& program, const ReductionForm& f, const poly::Read& r,
                   int w, const std::vector<int>& members, std::int64_t member_tile,
                   GpuMmaTile& t) {
    const int member = members.back();
    const poly::Buffer& buffer = program.buffers.at(static_cast<std::size_t>(r.buffer));
    const Linear l = linear(buffer, r);
    const std::int64_t ck = l.coef[static_cast<std::size_t>(t.k)],
                       cm = l.coef[static_cast<std::size_t>(member)];
    t.k_inner[w] = !(cm == 1 && ck != 1);
    const int inner = t.k_inner[w] ? t.k : member;
    const std::int64_t tile = t.k_inner[w] ? t.kb : member_tile;
    t.copy[w] = 0;
    if (buffer.row_window > 0 || l.coef[static_cast<std::size_t>(inner)] != 1) return;
    for (std::int64_t bytes : {16, 8, 4}) {
        const std::int64_t run = bytes / static_cast<std::int64_t>(t.element_bytes());
        bool aligned = run >= 1 && tile % run == 0 && l.constant % run == 0;
        // Along a flattened K of several members a run must not reach into the next value
        // of an outer member (elsewhere in memory): the innermost extent holds whole runs.
        if (t.k_inner[w] && f.reductions.size() > 1) aligned = aligned && f.extents[t.k] % run == 0;
        // Likewise along flattened output members.
        if (!t.k_inner[w] && members.size() > 1) aligned = aligned && f.extents[member] % run == 0;
        for (std::size_t d = 0; d < l.coef.size(); ++d)
            aligned = aligned && (int(d) == inner || l.coef[d] % run == 0);
        if (aligned) {
            t.copy[w] = static_cast<int>(run);
            return;
        }
    }
}

// The output members flattened with `member` (see GpuMmaTile::m_members): those `with` reads and
// `without` does not, outermost in the result first, `member` among them.
std::vector<int> flattened_members(const ReductionForm& f, const poly::Read& with,
                                   const poly::Read& without, int member) {
    std::vector<int> members;
    for (int d : f.outputs)
        if (d == member || (f.extents[d] > 1 && depends(with, d) && !depends(without, d)))
            members.push_back(d);
    std::stable_sort(members.begin(), members.end(),
                     [&](int x, int y) { return f.out_stride[x] > f.out_stride[y]; });
    return members;
}

std::int64_t flattened_extent(const ReductionForm& f, const std::vector<int>& members) {
    std::int64_t e = 1;
    for (int d : members)
        e *= f.extents[d];
    return e;
}

} // namespace

const char* gpu_mma_name(GpuMma mma) {
    switch (mma) {
    case GpuMma::None:
        return "none";
    case GpuMma::Bf16:
        return "bf16";
    case GpuMma::F16:
        return "f16";
    case GpuMma::Tf32:
        return "tf32";
    }
    return "?";
}

bool tile_mma(const poly::ProgramIR& program, const GpuTarget& target,
              const GpuMappingOptions& options, const ReductionForm& f, GpuContractionMapping& c) {
    if (options.no_tensor_cores || !options.tile_sizes.empty() || target.compute_capability < 80)
        return false;
    const poly::Statement& u = *f.update;
    if (u.reduce_op != ReduceOp::Sum || f.reductions.empty() || !f.whole) return false;
    if (program.buffers.at(static_cast<std::size_t>(u.write_buffer)).dtype != DType::F32)
        return false;
    const ScalarExpr& v = u.value;
    if (v->op != ScalarOp::Mul || v->args.size() != 2) return false;
    const int x = read_of(v->args[0]), y = read_of(v->args[1]);
    if (x < 0 || y < 0 || x == y || u.reads.size() != 2) return false;
    auto [m, n] = *contraction_members(f);
    // The reduction members are one flattened K, the innermost fastest (a convolution's
    // channels × kernel rows × kernel columns: an implicit GEMM).
    const int k = f.reductions.back();
    // A: the read over M × K, not N; B: over K × N, not M.
    auto over = [&](int r, int with, int without) {
        const poly::Read& read = u.reads.at(static_cast<std::size_t>(r));
        bool reduced = false;
        for (int c : f.reductions)
            reduced = reduced || depends(read, c);
        return read.buffer >= 0 && depends(read, with) && reduced && !depends(read, without);
    };
    int a = -1, b = -1;
    if (over(x, m, n) && over(y, n, m)) a = x, b = y;
    if (over(y, m, n) && over(x, n, m)) a = y, b = x;
    if (a < 0) return false;
    const DType ta = program.buffers.at(static_cast<std::size_t>(u.reads[a].buffer)).dtype,
                tb = program.buffers.at(static_cast<std::size_t>(u.reads[b].buffer)).dtype;
    GpuMmaTile t;
    if (ta == DType::BF16 && tb == DType::BF16)
        t.kind = GpuMma::Bf16;
    else if (ta == DType::F16 && tb == DType::F16)
        t.kind = GpuMma::F16;
    else if (ta == DType::F32 && tb == DType::F32 && options.allow_tf32)
        t.kind = GpuMma::Tf32;
    else
        return false;
    t.m_members = flattened_members(f, u.reads[a], u.reads[b], m);
    t.n_members = flattened_members(f, u.reads[b], u.reads[a], n);
    const std::int64_t em = flattened_extent(f, t.m_members), en = flattened_extent(f, t.n_members),
                       ek = f.reduction_size;
    t.m_extent = em;
    t.n_extent = en;
    // Too small to fill one fragment: the SIMT tiles waste less.
    if (em < 16 || en < 8 || ek < t.mma_k()) return false;
    t.a_read = a;
    t.b_read = b;
    t.k = k;
    // 128×128 blocks of 8 warps (2×4, each 64×32: 4×4 fragments, 64 accumulators per thread)
    // when there are enough of them to fill the multiprocessors; else 64×64 of 4 warps (each
    // 32×32); else 32×32 of 4 warps (each 16×16), for small outputs.
    const std::int64_t z = f.num_outputs / (em * en);
    auto blocks = [&](std::int64_t bm, std::int64_t bn) {
        return ceil_div(em, bm) * ceil_div(en, bn) * z;
    };
    if (blocks(128, 128) >= target.multiprocessors && em >= 128 && en >= 128) {
        t.warps_m = 2, t.warps_n = 4, t.frags_m = 4, t.frags_n = 4;
    } else if (blocks(64, 64) >= target.multiprocessors / 2 && em >= 64 && en >= 64) {
        t.warps_m = 2, t.warps_n = 2, t.frags_m = 2, t.frags_n = 4;
    } else {
        t.warps_m = 2, t.warps_n = 2, t.frags_m = 1, t.frags_n = 2;
    }
    t.kb = t.kind == GpuMma::Tf32 ? 16 : 32;
    t.ldmatrix = t.kind != GpuMma::Tf32;
    choose_layout(program, f, u.reads[a], 0, t.m_members, t.block_m(), t);
    choose_layout(program, f, u.reads[b], 1, t.n_members, t.block_n(), t);
    if (ceil_div(em, t.block_m()) > target.max_grid_y ||
        ceil_div(en, t.block_n()) > target.max_grid_x || t.threads() > target.max_threads_per_block)
        return false;
    c.m = t.m_members.back();
    c.n = t.n_members.back();
    c.z.clear();
    auto in = [](const std::vector<int>& v, int d) {
        return std::find(v.begin(), v.end(), d) != v.end();
    };
    for (int d : f.outputs)
        if (!in(t.m_members, d) && !in(t.n_members, d)) c.z.push_back(d);
    // The fields a tensor-core launch shares with the SIMT tiles (the dump, the index width):
    // the block tile (a flattened member's extent in it at most the tile), a warp's tile in
    // place of a thread's, the chunk.
    c.tile = {t.block_m(), t.block_n(), t.frags_m * 16, t.frags_n * 8, t.kb};
    c.block_tile.assign(f.extents.size(), 1);
    for (int w = 0; w < 2; ++w) {
        std::int64_t rest = w == 0 ? t.block_m() : t.block_n();
        const std::vector<int>& members = w == 0 ? t.m_members : t.n_members;
        for (std::size_t i = members.size(); i-- > 0;) {
            const int d = members[i];
            c.block_tile[d] = std::min(rest, f.extents[d]);
            rest = std::max<std::int64_t>(ceil_div(rest, f.extents[d]), 1);
        }
    }
    c.block_tile[k] = std::min(t.kb, f.extents[k]);
    c.chunks = ceil_div(ek, t.kb);
    c.splits = 1;
    std::int64_t zt = 1;
    for (int d : c.z)
        zt *= f.extents[d];
    c.grid = {ceil_div(en, t.block_n()), ceil_div(em, t.block_m()),
              std::min<std::int64_t>(zt, target.max_grid_z)};
    c.mma = t;
    return true;
}

void stage_mma(const GpuTarget& target, GpuContractionMapping& c) {
    GpuMmaTile& t = c.mma;
    // Rows with the reduction innermost: kb + 8 halves (80 bytes: 16-byte aligned for
    // ldmatrix and cp.async, and eight consecutive rows start in eight distinct 16-byte bank
    // groups) or kb + 4 floats (a warp's fragment loads, 8 rows × 4 columns, hit 32 banks).
    // Rows of the reduction: the member's tile + 8 elements (16 bytes more than a multiple of
    // 128 for ldmatrix .trans; 8 banks further per row for TF32's 4 rows × 8 columns).
    for (int w = 0; w < 2; ++w) {
        const std::int64_t member = w == 0 ? t.block_m() : t.block_n();
        t.pitch[w] = t.k_inner[w] ? t.kb + (t.kind == GpuMma::Tf32 ? 4 : 8) : member + 8;
    }
    const std::size_t stage =
        static_cast<std::size_t>(t.tile_elements(0) + t.tile_elements(1)) * t.element_bytes();
    // Three chunks in flight where they fit the static shared memory of a block, else two, else
    // one (the copies then wait for the products of the chunk before).
    t.stages = 1;
    for (int s : {3, 2})
        if (target.compute_capability >= 80 && s * stage <= target.shared_memory_per_block) {
            t.stages = s;
            break;
        }
    c.shared_bytes = stage * static_cast<std::size_t>(t.stages);
    // A block of 8 warps is held to 128 registers per thread at two blocks per
    // multiprocessor, and by ptxas's own default for 256 threads: the 128×128 tile's 64
    // accumulators, its fragments and the copies' addresses spill there (16 bytes on sm_80),
    // and fit in 139 at one block (4 warps are held to 255 either way).
    if (t.threads() > 128) c.min_blocks_per_sm = 1;
    c.staged.clear();
    c.double_buffer = false;
    c.guard_fold = false;
}

} // namespace hedra::sched

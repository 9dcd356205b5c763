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

// The counter along read r's last buffer axis among `candidates` (the staging walks it
// fastest); the first candidate when none is.
int fastest_counter(const poly::Read& r, std::initializer_list<int> candidates) {
    const int last = r.access.out_rank() - 1;
    for (int c : candidates)
        if (last >= 0 && r.access.coeff(last, c) != 0) return c;
    return *candidates.begin();
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
    if (u.reduce_op != ReduceOp::Sum || f.reductions.size() != 1 || !f.whole) return false;
    if (program.buffers.at(static_cast<std::size_t>(u.write_buffer)).dtype != DType::F32)
        return false;
    const ScalarExpr& v = u.value;
    if (v->op != ScalarOp::Mul || v->args.size() != 2) return false;
    const int x = read_of(v->args[0]), y = read_of(v->args[1]);
    if (x < 0 || y < 0 || x == y || u.reads.size() != 2) return false;
    auto [m, n] = *contraction_members(f);
    const int k = f.reductions[0];
    // A: the read over M × K, not N; B: over K × N, not M.
    auto over = [&](int r, int with, int without) {
        const poly::Read& read = u.reads.at(static_cast<std::size_t>(r));
        return read.buffer >= 0 && depends(read, with) && depends(read, k) &&
               !depends(read, without);
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
    const std::int64_t em = f.extents[m], en = f.extents[n], ek = f.extents[k];
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
    t.fastest = {fastest_counter(u.reads[a], {k, m}), fastest_counter(u.reads[b], {k, n})};
    if (ceil_div(em, t.block_m()) > target.max_grid_y ||
        ceil_div(en, t.block_n()) > target.max_grid_x || t.threads() > target.max_threads_per_block)
        return false;
    c.m = m;
    c.n = n;
    c.z.clear();
    for (int d : f.outputs)
        if (d != m && d != n) c.z.push_back(d);
    // The fields a tensor-core launch shares with the SIMT tiles (the dump, the index width):
    // the block tile, a warp's tile in place of a thread's, the chunk.
    c.tile = {t.block_m(), t.block_n(), t.frags_m * 16, t.frags_n * 8, t.kb};
    c.block_tile.assign(f.extents.size(), 1);
    c.block_tile[m] = t.block_m();
    c.block_tile[n] = t.block_n();
    c.block_tile[k] = t.kb;
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

void stage_mma(const poly::ProgramIR& program, GpuContractionMapping& c) {
    GpuMmaTile& t = c.mma;
    // 16-bit rows of kb + 8 elements: 16-byte aligned (ldmatrix's rows) and 16 bytes more than
    // a multiple of 64, so eight consecutive rows start in eight distinct 16-byte bank groups;
    // f32 rows of kb + 4: a warp's fragment loads (8 rows × 4 columns) hit 32 distinct banks.
    t.pitch = t.kb + (t.kind == GpuMma::Tf32 ? 4 : 8);
    const std::size_t element = t.kind == GpuMma::Tf32 ? 4 : 2;
    c.shared_bytes = static_cast<std::size_t>((t.block_m() + t.block_n()) * t.pitch) * element;
    c.staged.clear();
    c.double_buffer = false;
    c.guard_fold = false;
    (void)program;
}

} // namespace hedra::sched

// The contraction cost model (see contraction_schedule.hpp); the schedule tree it leads to is
// built in contraction_tree.cpp.
#include "scheduler/contraction_schedule.hpp"

#include "scheduler/register_tile.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <unordered_map>

#include "core/scalar_dag.hpp"
#include "scheduler/stride_order.hpp"
#include "scheduler/target.hpp"

namespace hedra::sched {
namespace {

constexpr std::int64_t kMaxReduction = 512;              // K points per tile (Kc)
constexpr std::int64_t kMinReduction = 256;              // ... with packed panels, at least
constexpr std::int64_t kMaxPackedReduction = 2048;       // ... and at most
constexpr std::int64_t kStridedPackReduction = 1024;     // a transposed panel: K whole up to this
constexpr std::int64_t kStridedPackL1Reduction = 384;    // ... with many rows reading one panel:
constexpr std::int64_t kStridedPackManyRows = 128;       // (rows of A per panel fill)
constexpr std::int64_t kBroadcastPackBytes = 256 * 1024; // an A tile's copied broadcast rows
constexpr std::int64_t kUnpackedWidth = 256;             // V tile when nothing is packed
constexpr std::int64_t kMaxTileRows = 384;               // A tile (rows) when there are many
constexpr std::int64_t kMinInstances = 4096;             // smaller contractions keep isl's schedule
constexpr double kContiguousFill = 2.0;  // cost of filling a panel element, in products
constexpr double kStridedFill = 8.0;     // ... from a source strided along V
constexpr double kGatheredResult = 1.05; // V not the result's stride-1 axis (measured: a
                                         // 256x1024x1024 A·B^T ran 2.3x slower that way)
constexpr double kStridedRows = 1.1;     // cost factor: broadcast rows on different cache lines
constexpr double kMaxRefill = 0.02;      // panel refills per product, for a parallel loop outside

using poly::Buffer;
using poly::Statement;

std::int64_t round_up(std::int64_t x, std::int64_t m) {
    return (x + m - 1) / m * m;
}

// The size of `n` equal tiles of at most `max` (a multiple of `multiple`) covering `extent`.
std::int64_t even_tile(std::int64_t extent, std::int64_t max, std::int64_t multiple) {
    if (extent <= max) return extent;
    std::int64_t n = (extent + max - 1) / max;
    return round_up((extent + n - 1) / n, multiple);
}

struct Candidate {
    double cost = 0;
    int a = -1, v = -1, packs = 0;
    bool strided_pack = false; // a panel gathered from a source strided along V
};

// Whether some axis of read `r` is indexed by both an output and a reduction counter.
bool window_read(const Statement& st, const poly::Read& r) {
    for (int row = 0; row < r.access.out_rank(); ++row) {
        bool output = false, reduction = false;
        for (int d = 0; d < r.access.in_rank(); ++d) {
            if (r.access.coeff(row, d) == 0 || st.extents[d] <= 1) continue;
            bool written = false;
            for (int w = 0; w < st.write_access.out_rank(); ++w)
                written = written || st.write_access.coeff(w, d) != 0;
            (written ? output : reduction) = true;
        }
        if (output && reduction) return true;
    }
    return false;
}

// Panel elements filled per product for packed read `r`: a panel (V x all K points) is filled
// once per iteration of the output counters besides A and V that `r` depends on, and reused
// over A and over the others (the register tile fills it above them). A convolution's input
// packed along the batch is refilled at every image position; its weights only once.
double panel_fills(const Statement& st, const poly::Read& r, int a, int v, std::int64_t width) {
    double reuse = static_cast<double>(st.extents[a]);
    for (int d = 0; d < static_cast<int>(st.extents.size()); ++d) {
        if (d == a || d == v) continue;
        bool written = false, read = false;
        for (int w = 0; w < st.write_access.out_rank(); ++w)
            written = written || st.write_access.coeff(w, d) != 0;
        for (int row = 0; row < r.access.out_rank(); ++row)
            read = read || r.access.coeff(row, d) != 0;
        if (written && !read) reuse *= static_cast<double>(st.extents[d]);
    }
    double lanes =
        static_cast<double>(round_up(st.extents[v], width)) / static_cast<double>(st.extents[v]);
    return lanes / reuse;
}

// The cost of (A, V) per useful product, or nothing when the register tile cannot use it.
std::optional<Candidate> evaluate(const CpuTarget& cpu, const poly::ProgramIR& program,
                                  const Statement& st, int a, int v, std::int64_t width,
                                  std::int64_t k_total) {
    const Buffer& out = program.buffers[st.write_buffer];
    std::int64_t ea = st.extents[a], ev = st.extents[v];
    std::int64_t ca = element_stride(out, st.write_access, a);
    std::int64_t cv = element_stride(out, st.write_access, v);
    if (ca == 0 || cv == 0) return std::nullopt;
    if (std::llabs(ca) < ev * std::llabs(cv) && std::llabs(cv) < ea * std::llabs(ca))
        return std::nullopt; // rows and columns of a block would overlap
    Candidate c{0, a, v, 0};
    int row_vectors = 0;
    double locality = 1.0, fill = 0.0;
    for (const poly::Read& r : st.reads) {
        const Buffer& b = program.buffers[r.buffer];
        std::int64_t sv = element_stride(b, r.access, v), sa = element_stride(b, r.access, a);
        // A window read (an image axis indexed by an output and a reduction counter, as in a
        // convolution) is read again by the next output position: with rows that share cache
        // lines (along the image width rather than the batch) a block's window stays in L1
        // (78 vs 72 GFLOP/s forward, 67 vs 60 for the input gradient).
        if (sv == 0 && window_read(st, r) &&
            std::llabs(sa) * static_cast<std::int64_t>(dtype_size(b.dtype)) >= 64)
            locality = kStridedRows;
        if (sv == 0) continue;
        if (sa == 0) {
            ++c.packs;
            c.strided_pack = c.strided_pack || sv != 1;
            fill += panel_fills(st, r, a, v, width) * (sv == 1 ? kContiguousFill : kStridedFill);
        } else if (sv == 1)
            ++row_vectors;
        else
            return std::nullopt;
    }
    // The rows the register-tile pass will choose for this nest (register_tile.hpp).
    int max_rows = register_block_rows(cpu, c.packs, row_vectors);
    if (max_rows < 1) return std::nullopt;
    // The register tile runs blocks of R rows, then one block each of 4, 2 and 1 rows; a block
    // of r rows loads 2 vectors per 2r products.
    int rows = static_cast<int>(std::min<std::int64_t>(max_rows, ea));
    std::int64_t left = ea % rows;
    double row_cost = static_cast<double>(ea / rows) * (rows + 2.0);
    for (int r = 4; r >= 1; r /= 2)
        if (r < rows && left >= r) {
            row_cost += r + 2.0;
            left -= r;
        }
    double best_rows = row_cost / static_cast<double>(ea);
    // Columns run in blocks of two vectors, then one vector; the rest run the scalar loops
    // (about 8 times the cost per column).
    std::int64_t rest = ev % width, half = width / 2;
    double columns =
        static_cast<double>(ev - rest) +
        (rest >= half ? static_cast<double>(half) + 8.0 * static_cast<double>(rest - half)
                      : 8.0 * static_cast<double>(rest));
    double lanes = columns / static_cast<double>(ev);
    double c_traffic = (cv == 1 ? 1.0 : 8.0) / static_cast<double>(k_total);
    c.cost = lanes * best_rows * (1.0 + c_traffic + fill) * (row_vectors > 0 ? 1.3 : 1.0) *
             locality * (cv == 1 ? 1.0 : kGatheredResult);
    return c;
}

// The panel elements filled per statement instance when counter `d` runs outside the mark
// (as the parallel loop P): the panels of reads that do not depend on `d` are filled again for
// each of its iterations, where inside the mark they would be filled once above it.
double refill_share(const poly::ProgramIR& program, const Statement& st,
                    const ContractionPlan& plan, int d, std::int64_t width) {
    double instances = 1, refills = 0;
    for (std::int64_t e : st.extents)
        instances *= static_cast<double>(e);
    for (const poly::Read& r : st.reads) {
        const Buffer& b = program.buffers[r.buffer];
        if (element_stride(b, r.access, plan.v) == 0 || element_stride(b, r.access, plan.a) != 0 ||
            element_stride(b, r.access, d) != 0)
            continue;
        double elements = static_cast<double>(round_up(st.extents[plan.v], width));
        for (int c = 0; c < static_cast<int>(st.extents.size()); ++c)
            if (c != plan.v && element_stride(b, r.access, c) != 0)
                elements *= static_cast<double>(st.extents[c]);
        refills += elements * static_cast<double>(st.extents[d]);
    }
    return refills / instances;
}

// The reduction counters ordered so the broadcast operands (read per row, not along V) walk
// memory in their smallest steps innermost: a convolution's input gradient sums over
// (kh, kw, co), whose co step jumps a whole image plane, so co goes outermost (the window of
// one block then stays in L1; docs/pipeline.md has the measurement). Ties keep the program
// order. Any order is a
// reassociation of the sum (ast_build.hpp keeps such loops sequential).
std::vector<int> locality_order(const poly::ProgramIR& program, const Statement& st,
                                std::vector<int> reduction, int a, int v) {
    auto step = [&](int k) {
        std::int64_t smallest = INT64_MAX;
        for (const poly::Read& r : st.reads) {
            const Buffer& b = program.buffers[r.buffer];
            if (element_stride(b, r.access, v) != 0 || element_stride(b, r.access, a) == 0)
                continue;
            std::int64_t s = std::llabs(element_stride(b, r.access, k));
            if (s != 0) smallest = std::min(smallest, s);
        }
        return smallest;
    };
    std::stable_sort(reduction.begin(), reduction.end(),
                     [&](int x, int y) { return step(x) > step(y); });
    return reduction;
}

} // namespace

std::optional<ContractionPlan> plan_contraction(const poly::ProgramIR& program,
                                                const poly::Kernel& kernel, int statement,
                                                const CpuTarget& cpu) {
    const Statement& st = kernel.statements.at(statement);
    const Buffer& out = program.buffers.at(st.write_buffer);
    if (st.kind != poly::StatementKind::Update || st.reduce_op != ReduceOp::Sum ||
        !is_float(out.dtype) || !vector_expression(st.value, out.dtype))
        return std::nullopt;
    for (const poly::Read& r : st.reads)
        if (r.buffer < 0 || r.buffer == st.write_buffer) return std::nullopt;
    int rank = static_cast<int>(st.extents.size());
    std::int64_t instances = 1, k_total = 1;
    std::vector<int> outputs, reduction;
    for (int d = 0; d < rank; ++d) {
        instances *= st.extents[d];
        bool written = false;
        for (int r = 0; r < st.write_access.out_rank(); ++r)
            written = written || st.write_access.coeff(r, d) != 0;
        if (written) {
            outputs.push_back(d);
        } else if (st.extents[d] > 1) {
            reduction.push_back(d);
            k_total *= st.extents[d];
        }
    }
    if (instances < kMinInstances || reduction.empty() || outputs.size() < 2) return std::nullopt;
    const auto dsize_out = static_cast<std::int64_t>(dtype_size(out.dtype));
    auto width_along = [&](int v) {
        return 2 * std::int64_t{tile_vector_bytes(cpu, st.extents[v], dtype_size(out.dtype))} /
               dsize_out;
    };
    std::optional<Candidate> best;
    for (int v : outputs)
        for (int a : outputs) {
            if (a == v || st.extents[v] < 2 || st.extents[a] < 2) continue;
            std::optional<Candidate> c = evaluate(cpu, program, st, a, v, width_along(v), k_total);
            if (c && (!best || c->cost < best->cost)) best = c;
        }
    if (!best) return std::nullopt;
    const std::int64_t width = width_along(best->v);

    ContractionPlan plan;
    plan.statement = statement;
    plan.a = best->a;
    plan.v = best->v;
    plan.reduction = locality_order(program, st, reduction, best->a, best->v);
    plan.tile = st.extents;
    for (int d : outputs)
        if (d != plan.a && d != plan.v && st.extents[d] > 1) {
            if (plan.parallel < 0 && refill_share(program, st, plan, d, width) <= kMaxRefill)
                plan.parallel = d;
            else
                plan.others.push_back(d);
        }
    if (plan.parallel >= 0) plan.tile[plan.parallel] = 1;
    // K: the innermost reduction counters whole, the next one tiled, the rest outside; a
    // narrow V affords more K points in one panel.
    const auto dsize = static_cast<std::int64_t>(dtype_size(out.dtype));
    std::int64_t k_max = kMaxReduction;
    if (best->packs > 0)
        k_max = std::clamp(cpu.panel_bytes /
                               (dsize * round_up(st.extents[plan.v], width) * best->packs),
                           kMinReduction, kMaxPackedReduction);
    // A panel gathered from a source strided along V (x·Wᵀ: W's rows along K) is filled one
    // vector block of columns at a time, each K step one cache line of the source row, with K
    // whole: no partial sums to reload, and the init and epilogue join the tile (faster on
    // MLP-sized x·Wᵀ; docs/pipeline.md).
    // With many rows per panel fill (A's extent: a parallel loop outside refills it), each
    // panel serves many register blocks and is read again for each: it should stay in L1
    // (K x 32 lanes x 4 bytes: 48 KiB at K = 384), in tiles of 256 where K is longer (x·Wᵀ of
    // the W8 GPT's second MLP layer, 8 x 256 rows, K = 1536: 0.67x -> 0.84x OpenBLAS).
    if (best->strided_pack)
        k_max = st.extents[best->a] < kStridedPackManyRows ? std::max(k_max, kStridedPackReduction)
                : k_total <= kStridedPackL1Reduction       ? kStridedPackL1Reduction
                                                           : kMinReduction;
    std::int64_t kc = 1;
    for (std::size_t i = reduction.size(); i-- > 0;) {
        int k = reduction[i];
        if (kc * st.extents[k] <= k_max) {
            kc *= st.extents[k];
            continue;
        }
        plan.tile[k] = even_tile(st.extents[k], std::max<std::int64_t>(1, k_max / kc), 1);
        kc *= plan.tile[k];
        for (std::size_t j = 0; j < i; ++j)
            plan.tile[reduction[j]] = 1;
        break;
    }
    std::int64_t ev = st.extents[plan.v];
    std::int64_t vmax = kUnpackedWidth;
    if (best->packs > 0)
        vmax = std::max(width, cpu.panel_bytes / (dsize * kc * best->packs) / width * width);
    if (best->strided_pack) vmax = width;
    plan.tile[plan.v] = even_tile(ev, vmax, width);
    // Many rows: blocks of rows whose broadcast operand (rows x K points) stays in L2 across
    // the V tiles, the panels refilled per block (BLIS's mc loop).
    std::int64_t ea_all = st.extents[plan.a];
    const std::int64_t rows = cpu.register_tile_rows;
    if (ea_all > kMaxTileRows && best->packs > 0)
        plan.tile[plan.a] = even_tile(ea_all, kMaxTileRows, rows);
    // A broadcast operand whose innermost K steps are a KiB or more apart: its rows are copied
    // once per A tile and K tile (register_tile.hpp), A tiles sized so the copy stays in L2,
    // and the V tiles run inside them (with V tiles outside, each V tile copied them again: a
    // weight gradient over 2048 tokens, 0.83x -> 0.92x OpenBLAS).
    if (plan.parallel < 0 && plan.others.empty() && best->packs > 0 && !best->strided_pack) {
        bool far = false;
        for (const poly::Read& r : st.reads) {
            const Buffer& b = program.buffers[r.buffer];
            if (element_stride(b, r.access, plan.v) == 0 &&
                element_stride(b, r.access, plan.a) != 0 &&
                std::llabs(element_stride(b, r.access, plan.reduction.back())) * dsize >= 1024)
                far = true;
        }
        if (far) {
            plan.v_tiles_inside = true;
            // (Rounded up: 1024 rows of K = 256 make 4 tiles of 258, not 5 of 210, which two
            // threads share evenly.)
            std::int64_t a_rows = round_up(
                std::clamp<std::int64_t>(kBroadcastPackBytes / (kc * dsize), rows, kMaxTileRows),
                rows);
            if (ea_all >= 2 * rows) a_rows = std::min(a_rows, round_up((ea_all + 1) / 2, rows));
            plan.tile[plan.a] = even_tile(ea_all, a_rows, rows);
        }
    }
    // Something to run in parallel outside the mark (the printer register-tiles only inside a
    // parallel loop's body, or in a kernel run on one thread): P, else V tiles, else halves of
    // A, else halves of V.
    std::int64_t ea = st.extents[plan.a];
    if (plan.parallel < 0 && (plan.tile[plan.v] >= ev || plan.v_tiles_inside) &&
        plan.tile[plan.a] >= ea) {
        // (Halves of fewer than 2R rows would shrink the register blocks more than a second
        // thread gains: such a kernel runs on one thread.)
        if (ea >= 2 * rows)
            plan.tile[plan.a] = round_up((ea + 1) / 2, rows);
        else if (ev >= 2 * width)
            plan.tile[plan.v] = round_up((ev + 1) / 2, width);
    }
    return plan;
}

bool vector_expression(const ScalarExpr& e, DType t) {
    if (is_half(t)) return false; // computed in f32 and rounded per operation: scalar code
    constexpr std::int64_t kMaxTermNodes = 64; // printed as one term: shared nodes at every use
    std::unordered_map<const ScalarNode*, std::int64_t> term_nodes;
    for (const ScalarExpr& x : topological_order(e)) {
        std::int64_t n = 1;
        for (const ScalarExpr& a : x->args)
            n += term_nodes.at(a.get());
        if (n > kMaxTermNodes) return false;
        term_nodes.emplace(x.get(), n);
        if (x->dtype != t) return false;
        switch (x->op) {
        case ScalarOp::Input:
        case ScalarOp::Const:
        case ScalarOp::Add:
        case ScalarOp::Sub:
        case ScalarOp::Mul:
        case ScalarOp::Div:
        case ScalarOp::Neg:
            continue;
        default:
            return false;
        }
    }
    return true;
}

} // namespace hedra::sched

// The pass list (see lower.hpp): the program passes run inside partition(), the kernel passes
// below, in the order pass_list() gives.
#include "scheduler/lower.hpp"

#include <chrono>
#include <functional>
#include <map>

#include <isl/schedule.h>
#include <isl/set.h>
#include <isl/union_set.h>

#include "core/dump.hpp"
#include "core/error.hpp"
#include "polyhedral/dead_writes.hpp"
#include "polyhedral/dependences.hpp"
#include "polyhedral/isl_context.hpp"
#include "polyhedral/scop.hpp"
#include "scheduler/ast_build.hpp"
#include "scheduler/compute_schedule.hpp"
#include "scheduler/lane_reduction.hpp"
#include "scheduler/loop_coalesce.hpp"
#include "scheduler/register_tile.hpp"
#include "scheduler/tile.hpp"

namespace hedra::sched {
namespace {

// Whether two Assign statements write one buffer (overwrite, fuse): only then can an instance
// be dead, and the extra dataflow analysis is worth its milliseconds.
bool may_have_dead_writes(const poly::Kernel& kernel) {
    std::map<int, int> assigns;
    for (const poly::Statement& st : kernel.statements)
        if (st.kind == poly::StatementKind::Assign && ++assigns[st.write_buffer] > 1) return true;
    return false;
}

AstNode kernel_passes(poly::IslContext& ctx, const poly::ProgramIR& program,
                      const poly::Kernel& kernel, const KernelPassOptions& options,
                      CompileObserver& observer, bool& fell_back) {
    poly::Scop scop;
    poly::Dependences deps;
    {
        dump::PassTimer timer("scop");
        scop = poly::build_scop(ctx, program, kernel);
    }
    {
        dump::PassTimer timer("dependences");
        deps = poly::compute_dependences(scop);
    }
    if (may_have_dead_writes(kernel)) {
        dump::PassTimer timer("dead-writes");
        if (std::optional<poly::Scop> live = poly::remove_dead_instances(scop, deps)) {
            scop = std::move(*live);
            deps = poly::compute_dependences(scop);
        }
    }
    observer.analyzed(scop, deps);
    KernelSchedule ks;
    ks.schedule = observer.replacement_schedule(ctx, scop, deps);
    if (ks.schedule && has_contracted_storage(scop))
        throw Error("schedule of kernel " + kernel.name +
                    ": it keeps rows in row-local or windowed buffers, which only its own "
                    "schedule allows: its schedule cannot be replaced");
    if (!ks.schedule) {
        dump::PassTimer timer("schedule");
        ScheduleOptions so;
        so.direct = options.tile_sizes.empty(); // explicit tile sizes: isl's bands, tiled
        so.cpu = options.cpu;
        ks = compute_schedule(ctx, scop, deps, so);
    }
    fell_back = ks.fell_back;
    observer.scheduled(scop, ks);
    poly::IslPtr<isl_schedule> final_schedule = ks.schedule;
    if (options.tile) {
        dump::PassTimer timer("tile");
        TileOptions tile;
        tile.sizes = options.tile_sizes;
        final_schedule = tile_schedule(scop, ks.schedule, tile);
    }
    observer.finalized(scop, final_schedule);
    AstNode ast;
    {
        dump::PassTimer timer("ast");
        // Symbolic extents: the schedule, found for the declared maxima, is valid for every
        // subset of the instances; the loops run over those the values leave.
        poly::IslPtr<isl_set> context = poly::symbolic_context(ctx, program);
        if (context) {
            poly::IslPtr<isl_union_set> live = poly::symbolic_instances(ctx, scop);
            live = poly::take(isl_union_set_intersect_params(live.release(), context.copy()));
            final_schedule =
                poly::take(isl_schedule_intersect_domain(final_schedule.release(), live.release()));
        }
        ast = build_loop_ast(scop, deps, final_schedule, context);
    }
    {
        dump::PassTimer timer("coalesce");
        mark_coalescible_loops(program, kernel, ast);
    }
    if (options.register_tiles) {
        dump::PassTimer timer("register-tile");
        choose_register_tiles(program, kernel, ast, options.cpu);
    }
    if (options.lane_reductions) {
        dump::PassTimer timer("lane-reduction");
        choose_lane_reductions(program, kernel, ast, options.cpu);
    }
    observer.ast_built(scop, ast);
    return ast;
}

// Everything the kernel passes read of a kernel, with its buffers numbered in order of first
// use: two kernels with the same text (the layers of a transformer, a forward and a backward of
// one shape) get the same loop AST, whose calls name statements by their index.
std::string kernel_structure(const poly::ProgramIR& program, const poly::Kernel& kernel) {
    std::map<int, int> ids;
    std::string buffers, s;
    auto buf = [&](int b) {
        if (b < 0) return std::string("index");
        auto [it, added] = ids.emplace(b, static_cast<int>(ids.size()));
        if (added) {
            const poly::Buffer& x = program.buffers.at(static_cast<std::size_t>(b));
            buffers += std::string(dtype_name(x.dtype)) + "[";
            for (std::int64_t n : x.sizes)
                buffers += std::to_string(n) + ",";
            for (int p : x.params)
                buffers += "p" + std::to_string(program.param_index(p));
            buffers += "]" + std::to_string(static_cast<int>(x.role)) + "/" +
                       std::to_string(x.row_local) + "/" + std::to_string(x.row_window) + "/" +
                       std::to_string(x.window_bands) + ";";
        }
        return "B" + std::to_string(it->second);
    };
    auto expr = [](const ScalarExpr& e) { return e ? to_string(e) : std::string("-"); };
    for (const poly::Statement& st : kernel.statements) {
        s += std::to_string(static_cast<int>(st.kind)) + "|";
        for (std::int64_t n : st.extents)
            s += std::to_string(n) + ",";
        s += "|" + buf(st.write_buffer) + st.write_access.to_string();
        for (std::size_t j = 0; j < st.write_indirect.size(); ++j)
            s += "@" + std::to_string(st.write_indirect[j]) + "<" +
                 std::to_string(st.write_indirect_extent[j]);
        s += "=" + expr(st.value) + "|";
        for (const poly::Read& r : st.reads) {
            s += buf(r.buffer) + r.access.to_string();
            for (std::size_t j = 0; j < r.indirect.size(); ++j)
                s += "@" + std::to_string(r.indirect[j]) + "<" +
                     std::to_string(r.indirect_extent[j]);
            s += ";";
        }
        s += std::string("|") + reduce_op_name(st.reduce_op) + expr(st.combiner) + "|";
        for (int d : st.reduction_dims)
            s += std::to_string(d) + ",";
        for (const poly::Statement::TupleWrite& w : st.tuple_writes)
            s += "|" + buf(w.buffer) + expr(w.value);
        for (const ScalarExpr& c : st.tuple_combiners)
            s += "|" + expr(c);
        s += "|" + std::to_string(st.stream_stage) + "," + std::to_string(st.stream_shift) + "," +
             std::to_string(st.stream_bands);
        for (const AffineMap& g : st.guards)
            s += "|" + g.to_string() + ">=0";
        for (const poly::ParamBound& b : st.param_bounds)
            s += "|" + b.expr.to_string() + "<" + std::to_string(program.param_index(b.param));
        s += "\n";
    }
    return buffers + "\n" + s;
}

} // namespace

const std::vector<PassInfo>& pass_list() {
    static const std::vector<PassInfo> passes = {
        {"merge-scans", "program", "",
         "one loop for a scan and the larger scan its adjoint stores residuals in "
         "(merge_scans.hpp)"},
        {"canonicalize", "program", "",
         "views composed into their uses, dead nodes dropped (canonicalize.hpp)"},
        {"partition.decide", "program", "partition.decide",
         "which nodes are materialized: reductions, fuses, outputs, shared expensive maps"},
        {"partition.cap-expressions", "program", "partition.cap-expressions",
         "materialize the largest operand of a statement past 64 inlined nodes"},
        {"partition.store-shared-maps", "program", "partition.store-shared-maps",
         "a map whose inlined tree reads many buffers is stored when several kernels read it"},
        {"partition.distribute-fuses", "program", "partition.distribute-fuses",
         "a fuse read only by one map is computed piece by piece in the map's kernel"},
        {"partition.unroll-reductions", "program", "partition.unroll-reductions",
         "reductions of at most 4 terms are unrolled into their one reader, or stored as one "
         "Assign where several fuse pieces read them"},
        {"partition.wide-sums", "program", "partition.wide-sums",
         "long f32 sums that are not contractions accumulate in f64"},
        {"partition.epilogues", "program", "partition.epilogues",
         "maps of a sum's result at its element join the sum's kernel"},
        {"partition.buffers", "program", "partition.buffers",
         "inputs, outputs and temporaries get buffers"},
        {"partition.kernels", "program", "partition.kernels",
         "one kernel per materialized node, definitions inlined"},
        {"partition.fuse-rows", "program", "partition.fuse-rows",
         "consecutive kernels over the same rows become one; their temporaries row-local"},
        {"partition.in-place-pieces", "program", "partition.in-place-pieces",
         "a temporary only copied whole into a box of another buffer is written there"},
        {"partition.split-reductions", "program", "partition.split-reductions",
         "long reductions over the leading axis run in parallel blocks of rows, then combine"},
        {"partition.stream-stencils", "program", "partition.stream-stencils",
         "chains of stencil sweeps stream over the rows once, intermediates in row windows, "
         "in parallel bands of rows"},
        {"narrow-domains", "program", "-",
         "temporaries computed only where they are read (narrow_domains.hpp)"},
        {"donate-inputs", "program", "partition",
         "outputs computed element for element from a donated input (or fuse pieces over it), "
         "after its other reads, are written into it (donate_inputs.hpp)"},
        {"gpu.forms", "gpu", "gpu.forms",
         "cuda: each kernel's form: maps (launch groups), contraction, reduction, tuple reduction "
         "or generic (gpu_mapping.hpp)"},
        {"gpu.autotune", "gpu", "",
         "cuda, HEDRA_CUDA_AUTOTUNE: each contraction's fastest candidate tiling, timed on the "
         "device by the backend"},
        {"gpu.tile", "gpu", "gpu.tile",
         "cuda: a contraction's tensor-core mapping (mma.sync warps, bf16/f16, TF32 if allowed) "
         "or its block tile over M and N, thread tile, reduction chunk, split K; grid"},
        {"gpu.stage", "gpu", "gpu.stage",
         "cuda: reads staged in shared memory (hulls, padding, 16-byte loads, fragments, double "
         "buffering; tensor cores: layouts, cp.async runs, stages), 32-bit indices, blocks per "
         "multiprocessor"},
        {"gpu.reduction", "gpu", "gpu.reduction",
         "cuda: a reduction's strategy (thread, block or split per output), threads and blocks"},
        {"gpu.launch", "gpu", "gpu.launch",
         "cuda: threads per block and blocks of the launches of maps"},
        {"scop", "kernel", "domains, accesses",
         "iteration domains and access relations as isl sets and maps"},
        {"dependences", "kernel", "deps", "flow, anti and output dependences (isl's dataflow)"},
        {"dead-writes", "kernel", "", "instances whose value is overwritten unread are removed"},
        {"schedule", "kernel", "constraints, schedule",
         "a known form's direct schedule, else isl's scheduler (compute_schedule.hpp)"},
        {"tile", "kernel", "final-schedule",
         "permutable bands tiled, point loops in stride order (tile.hpp; not on cuda's generic "
         "kernels)"},
        {"ast", "kernel", "", "isl's AST generator; parallel loops marked (ast_build.hpp)"},
        {"coalesce", "kernel", "",
         "perfect nests that walk memory as one run marked for one loop (loop_coalesce.hpp)"},
        {"register-tile", "kernel", "",
         "openmp, c: a contraction's register tile under its permutable mark: rows, vectors, "
         "packed panels, epilogue (register_tile.hpp)"},
        {"lane-reduction", "kernel", "ast",
         "openmp, c: row reductions' accumulators per vector lane (lane_reduction.hpp)"},
        {"gpu.generic-threads", "gpu", "gpu.generic-threads",
         "cuda: the kernels of no known form: each nest's outer parallel loops over threads, "
         "threads and blocks (gpu_generic_threads.hpp)"},
        {"print", "backend", "code",
         "the backend's renderer: C (the register tiles, lane reductions and coalesced loops the "
         "passes chose) or CUDA (the gpu passes' mapping)"},
        {"jit", "backend", "", "openmp: clang in process; c: the system compiler; cuda: NVRTC"},
    };
    return passes;
}

LoopProgram lower_kernels(const poly::ProgramIR& program, const KernelPassOptions& options) {
    dump::CompileScope dump_scope; // joins the backend's, if it opened one
    ChosenObserver observer(options.observer);
    observer->partitioned(program);
    LoopProgram out;
    auto start = std::chrono::steady_clock::now();
    poly::IslContext ctx;
    // A kernel with the structure of an earlier one takes its AST: isl runs once per structure.
    // (Not while an observer or HEDRA_DUMP wants to see every kernel's stages.)
    const bool reuse = !options.observer && !dump::enabled();
    std::map<std::string, AstNode> seen;
    // A scan's loop: a Block of its kernels' ASTs, in order.
    std::function<AstNode(const poly::Kernel&)> lower_one = [&](const poly::Kernel& kernel) {
        if (kernel.loop) {
            AstNode block;
            block.kind = AstNode::Kind::Block;
            for (const poly::Kernel& inner : kernel.loop->kernels)
                block.body.push_back(lower_one(inner));
            return block;
        }
        std::string key;
        if (reuse) {
            key = kernel_structure(program, kernel);
            if (auto it = seen.find(key); it != seen.end()) {
                ++out.reused;
                return it->second;
            }
        }
        bool fell_back = false;
        AstNode ast = kernel_passes(ctx, program, kernel, options, *observer, fell_back);
        out.fallbacks += fell_back;
        if (reuse) seen.emplace(std::move(key), ast);
        return ast;
    };
    for (const poly::Kernel& kernel : program.kernels)
        out.asts.push_back(lower_one(kernel));
    out.isl_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return out;
}

PartitionOptions partition_options(const Target& target) {
    PartitionOptions o;
    if (target.kind == Target::Kind::Cpu) return o;
    o.max_epilogues = 4;
    // Column sums already give every column a thread of its own (a serial reduction): the
    // CPU's split into blocks of rows would only add a launch.
    o.split_reductions = false;
    o.fuse_rows = false;
    o.stream_stencils = false;
    o.half_operands = true;
    return o;
}

LoweredKernels lower(const poly::ProgramIR& program, const Target& target,
                     const LowerOptions& options) {
    KernelPassOptions passes;
    passes.tile_sizes = options.tile_sizes;
    passes.tile = options.tile;
    passes.observer = options.observer;
    passes.cpu = target.cpu;
    LoweredKernels out;
    if (target.kind == Target::Kind::Cpu) {
        LoopProgram loops = lower_kernels(program, passes);
        out.asts = std::move(loops.asts);
        out.fallbacks = loops.fallbacks;
        out.reused = loops.reused;
        out.isl_ms = loops.isl_ms;
        return out;
    }
    if (poly::has_loops(program))
        throw Error("cuda: the program has a scan, whose sequential loop the GPU passes do not "
                    "map yet; run it on the openmp or c backend");
    dump::CompileScope dump_scope;
    GpuMappingOptions mapping = options.gpu;
    mapping.tile_sizes = options.tile_sizes;
    out.gpu = map_gpu_kernels(program, target.gpu, mapping);
    // The kernels of no known form: isl's schedule as computed, one thread per point of its
    // outer parallel loops.
    passes.tile = false;
    passes.register_tiles = false;
    passes.lane_reductions = false;
    ChosenObserver observer(options.observer);
    passes.observer = &*observer;
    out.asts.resize(program.kernels.size());
    auto start = std::chrono::steady_clock::now();
    for (const GpuKernelMapping& m : out.gpu->kernels) {
        const poly::Kernel& k = program.kernels.at(static_cast<std::size_t>(m.kernel));
        if (m.form != GpuForm::Generic || k.statements.empty()) continue;
        bool fell_back = false;
        out.asts[static_cast<std::size_t>(m.kernel)] = lower_kernel(program, k, passes, &fell_back);
        out.fallbacks += fell_back;
    }
    {
        dump::PassTimer timer("gpu.generic-threads");
        for (GpuKernelMapping& m : out.gpu->kernels)
            if (m.form == GpuForm::Generic)
                m.generic = map_generic_threads(out.asts.at(static_cast<std::size_t>(m.kernel)),
                                                target.gpu);
    }
    if (dump::enabled())
        dump::write_stage("gpu.generic-threads", "txt", to_string(*out.gpu, program));
    out.isl_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return out;
}

AstNode lower_kernel(const poly::ProgramIR& program, const poly::Kernel& kernel,
                     const KernelPassOptions& options, bool* fell_back) {
    ChosenObserver observer(options.observer);
    poly::IslContext ctx;
    bool quota = false;
    AstNode ast = kernel_passes(ctx, program, kernel, options, *observer, quota);
    if (fell_back) *fell_back = quota;
    return ast;
}

} // namespace hedra::sched

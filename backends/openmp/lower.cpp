// The openmp backend's passes, listed in order (see lower.hpp).
#include "backends/openmp/lower.hpp"

#include <chrono>
#include <map>

#include "backends/openmp/c_printer.hpp"
#include "core/dump.hpp"
#include "polyhedral/dead_writes.hpp"
#include "polyhedral/dependences.hpp"
#include "polyhedral/isl_context.hpp"
#include "polyhedral/scop.hpp"
#include "scheduler/ast_build.hpp"
#include "scheduler/compute_schedule.hpp"
#include "scheduler/tile.hpp"

namespace hedra::backend {
namespace {

// Whether two Assign statements write one buffer (overwrite, fuse): only then can an instance
// be dead, and the extra dataflow analysis is worth its milliseconds.
bool may_have_dead_writes(const poly::Kernel& kernel) {
    std::map<int, int> assigns;
    for (const poly::Statement& st : kernel.statements)
        if (st.kind == poly::StatementKind::Assign && ++assigns[st.write_buffer] > 1) return true;
    return false;
}

} // namespace

LoweredProgram lower(const poly::ProgramIR& program, const LowerOptions& options) {
    dump::CompileScope dump_scope; // joins the backend's, if it opened one
    std::unique_ptr<sched::CompileObserver> dumper;
    sched::CompileObserver quiet;
    sched::CompileObserver* observer = options.observer;
    if (!observer) dumper = sched::dump_observer();
    if (!observer) observer = dumper ? dumper.get() : &quiet;
    observer->partitioned(program);
    LoweredProgram out;
    auto start = std::chrono::steady_clock::now();
    poly::IslContext ctx;
    sched::TileOptions tile;
    tile.sizes = options.tile_sizes;
    tile.tile = options.tile;
    for (const poly::Kernel& kernel : program.kernels) {
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
        observer->analyzed(scop, deps);
        sched::KernelSchedule ks;
        ks.schedule = observer->replacement_schedule(ctx, scop, deps);
        if (!ks.schedule) {
            dump::PassTimer timer("schedule");
            sched::ScheduleOptions so;
            so.direct = options.tile && options.tile_sizes.empty(); // explicit tiles: isl's way
            ks = sched::compute_schedule(ctx, scop, deps, so);
        }
        out.fallbacks += ks.fell_back;
        observer->scheduled(scop, ks);
        poly::IslPtr<isl_schedule> tiled;
        {
            dump::PassTimer timer("tile");
            tiled = sched::tile_schedule(scop, ks.schedule, tile);
        }
        observer->finalized(scop, tiled);
        {
            dump::PassTimer timer("ast");
            out.asts.push_back(sched::build_loop_ast(scop, deps, tiled));
        }
        observer->ast_built(scop, out.asts.back());
    }
    out.isl_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    PrintOptions print;
    print.entry = options.entry;
    print.min_parallel_work = options.min_parallel_work;
    print.profile = options.profile;
    print.profile_clock = options.profile_clock;
    {
        dump::PassTimer timer("print");
        out.source = print_program(program, out.asts, print);
    }
    observer->emitted(out.source, "cpp");
    return out;
}

} // namespace hedra::backend

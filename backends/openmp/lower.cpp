// The openmp backend's passes, listed in order (see lower.hpp).
#include "backends/openmp/lower.hpp"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>

#include "backends/openmp/c_printer.hpp"
#include "polyhedral/dead_writes.hpp"
#include "polyhedral/dependences.hpp"
#include "polyhedral/isl_context.hpp"
#include "polyhedral/scop.hpp"
#include "scheduler/ast_build.hpp"
#include "scheduler/compute_schedule.hpp"
#include "scheduler/tile.hpp"

namespace hedra::backend {
namespace {

bool dump_requested(const LowerOptions& options) {
    const char* env = std::getenv("HEDRA_DUMP");
    return options.dump || (env && *env && std::string(env) != "0");
}

void dump(bool on, const std::string& stage, const std::string& text) {
    if (on) std::cerr << "== hedra: " << stage << " ==\n" << text << "\n";
}

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
    bool verbose = dump_requested(options);
    dump(verbose, "kernel IR", poly::to_string(program));
    LoweredProgram out;
    auto start = std::chrono::steady_clock::now();
    poly::IslContext ctx;
    sched::TileOptions tile;
    tile.sizes = options.tile_sizes;
    tile.tile = options.tile;
    for (const poly::Kernel& kernel : program.kernels) {
        poly::Scop scop = poly::build_scop(ctx, program, kernel);
        poly::Dependences deps = poly::compute_dependences(scop);
        if (may_have_dead_writes(kernel)) {
            if (std::optional<poly::Scop> live = poly::remove_dead_instances(scop, deps)) {
                dump(verbose, kernel.name + " live instances", live->domain.to_string());
                scop = std::move(*live);
                deps = poly::compute_dependences(scop);
            }
        }
        sched::KernelSchedule ks = sched::compute_schedule(ctx, scop, deps);
        out.fallbacks += ks.fell_back;
        dump(verbose, kernel.name + " schedule" + (ks.fell_back ? " (program order)" : ""),
             ks.schedule.to_string());
        poly::IslPtr<isl_schedule> tiled = sched::tile_schedule(scop, ks.schedule, tile);
        dump(verbose, kernel.name + " tiled", tiled.to_string());
        out.asts.push_back(sched::build_loop_ast(scop, deps, tiled));
        dump(verbose, kernel.name + " loops", sched::to_string(out.asts.back()));
    }
    out.isl_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    PrintOptions print;
    print.entry = options.entry;
    print.min_parallel_work = options.min_parallel_work;
    out.source = print_program(program, out.asts, print);
    dump(verbose, "source", out.source);
    return out;
}

} // namespace hedra::backend

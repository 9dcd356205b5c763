// The openmp backend's lowering: the scheduler's pass list, then the C printer.
#include "backends/openmp/lower.hpp"

#include "backends/common/c_renderer.hpp"
#include "core/dump.hpp"
#include "scheduler/lower.hpp"

namespace hedra::backend {

LoweredProgram lower(const poly::ProgramIR& program, const LowerOptions& options) {
    dump::CompileScope dump_scope; // joins the backend's, if it opened one
    sched::ChosenObserver observer(options.observer);
    sched::LowerOptions passes;
    passes.tile_sizes = options.tile_sizes;
    passes.tile = options.tile;
    passes.observer = observer.watching();
    const sched::Target target = sched::Target::for_cpu();
    sched::LoweredKernels loops = sched::lower(program, target, passes);
    LoweredProgram out;
    out.asts = std::move(loops.asts);
    out.fallbacks = loops.fallbacks;
    out.reused = loops.reused;
    out.isl_ms = loops.isl_ms;
    PrintOptions print;
    print.entry = options.entry;
    print.min_parallel_work = options.min_parallel_work;
    print.profile = options.profile;
    print.units = options.units;
    print.profile_clock = options.profile_clock;
    print.kernel_hooks = options.kernel_hooks;
    print.vector_bytes = target.cpu.vector_bytes;
    {
        dump::PassTimer timer("print");
        out.source = print_program(program, out.asts, print);
    }
    observer->emitted(out.source, "cpp");
    return out;
}

} // namespace hedra::backend

// The CUDA code generator's pass list (see cuda_lower.hpp): classify each kernel of the IR by
// its form, emit its launches with the matching template, then assemble one translation unit.
#include "backends/cuda/cuda_lower.hpp"

#include "backends/cuda/cuda_kernels.hpp"
#include "core/dump.hpp"
#include "scheduler/compile_observer.hpp"

namespace hedra::backend {

namespace {

bool all_assigns(const poly::Kernel& kernel) {
    for (const poly::Statement& st : kernel.statements) {
        if (st.kind != poly::StatementKind::Assign) return false;
        for (const poly::Read& r : st.reads)
            if (r.buffer == st.write_buffer) return false;
    }
    return true;
}

void lower_kernel(cuda::SourceBuilder& b, int k) {
    const poly::Kernel& kernel = b.program.kernels[static_cast<std::size_t>(k)];
    if (b.options.generic_only) {
        cuda::emit_generic(b, k);
    } else if (auto form = cuda::reduction_form(b.program, kernel)) {
        if (!cuda::emit_contraction(b, k, *form)) cuda::emit_reduction(b, k, *form);
    } else if (auto tuple = cuda::tuple_reduction_form(b.program, kernel);
               tuple && cuda::emit_tuple_reduction(b, k, *tuple)) {
    } else if (all_assigns(kernel)) {
        for (const std::vector<int>& group : cuda::map_launch_groups(kernel))
            cuda::emit_maps(b, k, group);
    } else {
        cuda::emit_generic(b, k);
    }
}

} // namespace

sched::PartitionOptions cuda_partition_options() {
    sched::PartitionOptions o;
    o.max_epilogues = 4;
    // Column sums already give every column a thread of its own (serial_reduction): the CPU's
    // split into blocks of rows would only add a launch.
    o.split_reductions = false;
    o.fuse_rows = false;       // row-local buffers are the C renderer's
    o.stream_stencils = false; // and so are row windows
    return o;
}

CudaLoweredProgram lower_cuda(const poly::ProgramIR& program, const CudaLowerOptions& options) {
    dump::CompileScope dump_scope; // joins the backend's, if it opened one
    sched::ChosenObserver observer(options.observer);
    observer->partitioned(program);
    cuda::SourceBuilder b{program, options, *observer, {}, {}, {}};
    for (std::size_t k = 0; k < program.kernels.size(); ++k)
        if (options.only_kernel < 0 || options.only_kernel == static_cast<int>(k))
            lower_kernel(b, static_cast<int>(k));
    CudaLoweredProgram out;
    out.source = cuda::cuda_prelude() + "\n" + b.functions + "// launches, in order:\n";
    for (const CudaLaunch& l : b.launches)
        out.source += "//   " + to_string(l, program) + "\n";
    out.launches = std::move(b.launches);
    out.scratch = std::move(b.scratch);
    observer->emitted(out.source, "cu");
    return out;
}

std::vector<ContractionTiling> contraction_candidates(const poly::ProgramIR& program, int kernel) {
    const poly::Kernel& k = program.kernels.at(static_cast<std::size_t>(kernel));
    std::optional<cuda::ReductionForm> form = cuda::reduction_form(program, k);
    if (!form || !cuda::contraction_members(*form)) return {};
    const std::vector<std::vector<std::int64_t>> tiles = {
        {128, 128, 16}, {128, 128, 8}, {128, 64, 8}, {64, 128, 8},
        {64, 64, 8},    {64, 64, 16},  {32, 32, 16}};
    std::vector<ContractionTiling> out{{}};
    for (const std::vector<std::int64_t>& tile : tiles)
        for (std::int64_t splits : {0, 1})
            out.push_back({cuda::narrowed_tile(*form, tile), splits});
    return out;
}

std::string to_string(const CudaLaunch& l, const poly::ProgramIR& program) {
    auto dims = [](const std::array<unsigned, 3>& d) {
        return "(" + std::to_string(d[0]) + "," + std::to_string(d[1]) + "," +
               std::to_string(d[2]) + ")";
    };
    std::string s = l.function + " " + l.strategy + " grid" + dims(l.grid) + " block" +
                    dims(l.block) + " smem " + std::to_string(l.shared_bytes) + " args";
    for (int buffer : l.buffers) {
        std::size_t nb = program.buffers.size();
        s += " " + (static_cast<std::size_t>(buffer) < nb
                        ? program.buffers[static_cast<std::size_t>(buffer)].name
                        : "hd_scratch" + std::to_string(static_cast<std::size_t>(buffer) - nb));
    }
    return s;
}

} // namespace hedra::backend

// The CUDA renderer's driver (see cuda_lower.hpp): the GPU mapping passes decide each kernel's
// launches, the templates print them, then one translation unit is assembled.
#include "backends/cuda/render/cuda_lower.hpp"

#include "backends/cuda/render/cuda_kernels.hpp"
#include "backends/cuda/render/cuda_source.hpp"
#include "core/dump.hpp"
#include "scheduler/compile_observer.hpp"
#include "scheduler/lower.hpp"

namespace hedra::backend {

namespace {

void render_kernel(cuda::SourceBuilder& b, const sched::GpuKernelMapping& m,
                   const std::vector<sched::AstNode>& asts) {
    switch (m.form) {
    case sched::GpuForm::Map:
        for (std::size_t g = 0; g < m.map_groups.size(); ++g)
            cuda::emit_maps(b, m.kernel, m.map_groups[g], m.map_threads[g], m.map_blocks[g]);
        break;
    case sched::GpuForm::Contraction:
        if (m.contraction.mma.kind != sched::GpuMma::None)
            cuda::emit_mma_contraction(b, m);
        else
            cuda::emit_contraction(b, m);
        break;
    case sched::GpuForm::Reduction:
        cuda::emit_reduction(b, m.kernel, *m.reduction, m.reduction_mapping);
        break;
    case sched::GpuForm::TupleReduction:
        cuda::emit_tuple_reduction(b, m.kernel, *m.tuple, m.reduction_mapping);
        break;
    case sched::GpuForm::Generic:
        if (!b.program.kernels.at(static_cast<std::size_t>(m.kernel)).statements.empty())
            cuda::emit_generic(b, m, asts.at(static_cast<std::size_t>(m.kernel)));
        break;
    }
}

} // namespace

CudaLoweredProgram lower_cuda(const poly::ProgramIR& program, const CudaLowerOptions& options) {
    dump::CompileScope dump_scope; // joins the backend's, if it opened one
    sched::ChosenObserver observer(options.observer);
    observer->partitioned(program);
    sched::LowerOptions passes;
    passes.tile_sizes = options.tile_sizes;
    passes.gpu = options;
    passes.observer = &*observer;
    const sched::LoweredKernels lowered =
        sched::lower(program, sched::Target::for_gpu(options.gpu), passes);
    cuda::SourceBuilder b(program);
    {
        dump::PassTimer timer("print");
        for (const sched::GpuKernelMapping& m : lowered.gpu->kernels)
            render_kernel(b, m, lowered.asts);
    }
    CudaLoweredProgram out;
    out.source = cuda::cuda_prelude() + "\n" + b.functions + "// launches, in order:\n";
    for (const CudaLaunch& l : b.launches)
        out.source += "//   " + to_string(l, program) + "\n";
    out.mapping = sched::to_string(*lowered.gpu, program);
    out.launches = std::move(b.launches);
    out.scratch = std::move(b.scratch);
    observer->emitted(out.source, "cu");
    return out;
}

std::string to_string(const CudaLaunch& l, const poly::ProgramIR& program) {
    auto dims = [](const std::array<unsigned, 3>& d) {
        return "(" + std::to_string(d[0]) + "," + std::to_string(d[1]) + "," +
               std::to_string(d[2]) + ")";
    };
    std::string s = l.function + " " + l.strategy + " grid" + dims(l.grid) + " block" +
                    dims(l.block) + " smem " + std::to_string(l.shared_bytes) + " args";
    for (int buffer : l.buffers)
        s += " " + KernelBuffers(program, cuda::cuda_dialect()).buffer_name(buffer);
    return s;
}

} // namespace hedra::backend

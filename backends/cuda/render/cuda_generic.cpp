// The generic CUDA path, for kernels of no known form (and, in tests, for every kernel): the
// loop AST of the scheduler's kernel passes without tiling (scheduler/lower.hpp), printed as
// the gpu.generic-threads pass mapped it (scheduler/gpu_generic_threads.hpp): each top-level
// nest one launch, its loops over threads flattened over a grid-stride thread index, everything
// inside sequential in the thread.
#include "backends/common/c_access.hpp"
#include "backends/common/c_expr.hpp"
#include "backends/cuda/render/cuda_kernels.hpp"
#include "core/error.hpp"
#include "scheduler/gpu_generic_threads.hpp"
#include "scheduler/gpu_mapping.hpp"
#include "scheduler/loop_ast.hpp"

namespace hedra::backend::cuda {

namespace {

using sched::AstNode;

void emit_nest(SourceBuilder& b, int kernel, const AstNode& top, const sched::GpuGenericNest& g) {
    if (g.thread_loops > 0 && g.points == 0) return; // no thread has work
    std::vector<const AstNode*> mapped;
    for (const AstNode* n = sched::unwrap_marks(&top);
         static_cast<int>(mapped.size()) < g.thread_loops; n = sched::unwrap_marks(&n->body.at(0)))
        mapped.push_back(n);
    const poly::Kernel& k = b.program.kernels.at(kernel);
    KernelParams params;
    auto call = [&](const AstNode& n, const std::string& at, std::string& out) {
        const poly::Statement& st = k.statements.at(n.statement);
        params.add(statement_params(st));
        print_statement_call(b, st, n, at, out);
    };
    std::string body, in = "        ";
    if (mapped.empty()) {
        body = "    if (blockIdx.x != 0 || threadIdx.x != 0) return;\n";
        c_print_plain(top, "    ", body, call);
    } else {
        body = grid_stride_loop(b.dialect, "hd_flat", int_text(g.points), true);
        std::vector<std::string> idx;
        for (std::size_t d = 0; d < mapped.size(); ++d)
            idx.push_back("hd_t" + std::to_string(d));
        print_unflatten("hd_flat", g.trips, idx, in, body);
        for (std::size_t d = 0; d < mapped.size(); ++d)
            body += in + "const long " + mapped[d]->iterator + " = " +
                    c_index_expr(mapped[d]->init) + " + " + c_index_expr(mapped[d]->inc) + " * " +
                    idx[d] + ";\n";
        for (const AstNode& n : mapped.back()->body)
            c_print_plain(n, in, body, call);
        body += "    }\n";
    }
    if (params.buffers.empty()) return; // no statement instance
    b.launch(kernel, mapped.empty() ? "generic_serial" : "generic",
             {static_cast<unsigned>(g.blocks), 1, 1}, {static_cast<unsigned>(g.threads), 1, 1},
             params, static_cast<int>(g.max_threads), body);
}

} // namespace

void emit_generic(SourceBuilder& b, const sched::GpuKernelMapping& m, const AstNode& root) {
    std::vector<const AstNode*> nests = sched::generic_nests(root);
    if (nests.size() != m.generic.size())
        internal_error("cuda generic kernel: the thread mapping does not match its loop AST");
    for (std::size_t i = 0; i < nests.size(); ++i)
        emit_nest(b, m.kernel, *nests[i], m.generic[i]);
}

} // namespace hedra::backend::cuda

// The generic CUDA path, for kernels of no known form (and, in tests, for every kernel): the
// loop AST of the scheduler's kernel passes without tiling (scheduler/lower.hpp), printed as
// the gpu.generic-threads pass mapped it (scheduler/gpu_generic_threads.hpp): each top-level
// nest one launch, its loops over threads flattened over a grid-stride thread index, everything
// inside sequential in the thread.
#include <optional>

#include "backends/common/c_access.hpp"
#include "backends/common/c_expr.hpp"
#include "backends/cuda/render/cuda_kernels.hpp"
#include "core/error.hpp"
#include "scheduler/gpu_generic_threads.hpp"
#include "scheduler/gpu_mapping.hpp"
#include "scheduler/loop_ast.hpp"

namespace hedra::backend::cuda {

namespace {

using sched::AstExpr;
using sched::AstNode;

class NestPrinter {
public:
    NestPrinter(const SourceBuilder& b, const poly::Kernel& k) : b_(b), k_(k) {}

    void nodes(const std::vector<AstNode>& ns, const std::string& in, std::string& out) {
        for (const AstNode& n : ns)
            node(n, in, out);
    }

    void node(const AstNode& n, const std::string& in, std::string& out) {
        switch (n.kind) {
        case AstNode::Kind::Block:
        case AstNode::Kind::Mark:
            nodes(n.body, in, out);
            return;
        case AstNode::Kind::If:
            out += in + "if (" + c_index_expr(n.condition) + ") {\n";
            nodes(n.body, in + "    ", out);
            if (!n.else_body.empty()) {
                out += in + "} else {\n";
                nodes(n.else_body, in + "    ", out);
            }
            out += in + "}\n";
            return;
        case AstNode::Kind::For:
            out += in + c_loop_header(n) + " {\n";
            nodes(n.body, in + "    ", out);
            out += in + "}\n";
            return;
        case AstNode::Kind::Call:
            call(n, in, out);
            return;
        }
    }

    KernelParams params;

private:
    void call(const AstNode& n, const std::string& in, std::string& out) {
        const poly::Statement& st = k_.statements.at(n.statement);
        KernelParams p = statement_params(st);
        for (std::size_t i = 0; i < p.buffers.size(); ++i)
            params.add(p.buffers[i], p.written[i]);
        std::string i2 = in + "    ";
        out += in + "{\n";
        out += c_counter_lines(n, i2);
        if (!st.tuple_writes.empty()) {
            std::vector<std::string> values = print_tuple_values(b_, st, i2, "t", out);
            std::vector<int> buffers{st.write_buffer};
            for (const poly::Statement::TupleWrite& w : st.tuple_writes)
                buffers.push_back(w.buffer);
            for (std::size_t j = 0; j < buffers.size(); ++j)
                out += store_line(b_, buffers[j], st.write_access, values[j], i2);
            out += in + "}\n";
            return;
        }
        DType t = b_.buffer_dtype(st.write_buffer);
        std::string value = print_value(b_, st, i2, "t", out);
        if (st.kind == poly::StatementKind::Update) {
            std::string acc = load(b_, st.write_buffer, st.write_access);
            out += i2 + "const " + c_value_type(t) + " hd_acc = " + acc + ";\n";
            value = print_combine(st, t, "hd_acc", value, i2, "u", out);
        }
        out += store_line(b_, st.write_buffer, st.write_access, value, i2) + in + "}\n";
    }

    const SourceBuilder& b_;
    const poly::Kernel& k_;
};

void emit_nest(SourceBuilder& b, int kernel, const AstNode& top, const sched::GpuGenericNest& g) {
    if (g.thread_loops > 0 && g.points == 0) return; // no thread has work
    std::vector<const AstNode*> mapped;
    for (const AstNode* n = sched::unwrap_marks(&top);
         static_cast<int>(mapped.size()) < g.thread_loops; n = sched::unwrap_marks(&n->body.at(0)))
        mapped.push_back(n);
    NestPrinter printer(b, b.program.kernels.at(kernel));
    std::string body, in = "        ";
    if (mapped.empty()) {
        body = "    if (blockIdx.x != 0 || threadIdx.x != 0) return;\n";
        printer.node(top, "    ", body);
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
        printer.nodes(mapped.back()->body, in, body);
        body += "    }\n";
    }
    if (printer.params.buffers.empty()) return; // no statement instance
    b.launch(kernel, mapped.empty() ? "generic_serial" : "generic",
             {static_cast<unsigned>(g.blocks), 1, 1}, {static_cast<unsigned>(g.threads), 1, 1},
             printer.params, static_cast<int>(g.max_threads), body);
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

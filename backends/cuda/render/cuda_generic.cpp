// The generic CUDA path, for kernels of no known form (and, in tests, for every kernel): the
// loop AST of the scheduler's kernel passes without tiling (scheduler/lower.hpp: its schedule
// with reduction inits hoisted into their own nests, and its loop AST with PPCG's per-loop
// dependence test), computed before printing (cuda_lower.cpp). Each
// top-level nest is one launch: its outer loops that passed the dependence test and have constant
// bounds (up to three, perfectly nested) are flattened over a grid-stride thread index; everything
// inside runs sequentially in the thread. A nest whose outer loop is not parallel runs on one
// thread.
#include <optional>

#include "backends/common/c_access.hpp"
#include "backends/common/c_expr.hpp"
#include "backends/cuda/render/cuda_kernels.hpp"
#include "core/error.hpp"
#include "scheduler/loop_ast.hpp"

namespace hedra::backend::cuda {

namespace {

using sched::AstExpr;
using sched::AstNode;

std::string expr(const AstExpr& e) {
    return c_index_expr(e);
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// The value of an expression without iterators; nothing if it has one or an unknown op.
std::optional<std::int64_t> constant(const AstExpr& e) {
    if (e.kind == AstExpr::Kind::Int) return e.value;
    if (e.kind == AstExpr::Kind::Id) return std::nullopt;
    std::vector<std::int64_t> v;
    for (const AstExpr& a : e.args) {
        auto x = constant(a);
        if (!x) return std::nullopt;
        v.push_back(*x);
    }
    switch (e.op) {
    case AstExpr::Op::Add:
        return v[0] + v[1];
    case AstExpr::Op::Sub:
        return v[0] - v[1];
    case AstExpr::Op::Mul:
        return v[0] * v[1];
    case AstExpr::Op::Neg:
        return -v[0];
    case AstExpr::Op::Div:
    case AstExpr::Op::PDivQ:
        return v[1] ? std::optional(v[0] / v[1]) : std::nullopt;
    case AstExpr::Op::FloorDiv:
        return v[1] > 0 ? std::optional(floor_div(v[0], v[1])) : std::nullopt;
    case AstExpr::Op::Min:
    case AstExpr::Op::Max: {
        std::int64_t r = v[0];
        for (std::int64_t x : v)
            r = e.op == AstExpr::Op::Min ? std::min(r, x) : std::max(r, x);
        return r;
    }
    default:
        return std::nullopt;
    }
}

// The trip count of `for (it = init; it <= ub or it < ub; it += inc)` with constant bounds.
std::optional<std::int64_t> trip_count(const AstNode& loop) {
    const AstExpr& c = loop.cond;
    if (c.kind != AstExpr::Kind::Op || (c.op != AstExpr::Op::Le && c.op != AstExpr::Op::Lt) ||
        c.args[0].kind != AstExpr::Kind::Id || c.args[0].name != loop.iterator)
        return std::nullopt;
    auto init = constant(loop.init), ub = constant(c.args[1]), inc = constant(loop.inc);
    if (!init || !ub || !inc || *inc <= 0) return std::nullopt;
    std::int64_t last = c.op == AstExpr::Op::Le ? *ub : *ub - 1;
    return last < *init ? 0 : (last - *init) / *inc + 1;
}

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
            out += in + "if (" + expr(n.condition) + ") {\n";
            nodes(n.body, in + "    ", out);
            if (!n.else_body.empty()) {
                out += in + "} else {\n";
                nodes(n.else_body, in + "    ", out);
            }
            out += in + "}\n";
            return;
        case AstNode::Kind::For:
            out += in + "for (long " + n.iterator + " = " + expr(n.init) + "; " + expr(n.cond) +
                   "; " + n.iterator + " += " + expr(n.inc) + ") {\n";
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
        for (const KernelParams& p : {statement_params(st)})
            for (std::size_t i = 0; i < p.buffers.size(); ++i)
                params.add(p.buffers[i], p.written[i]);
        std::string i2 = in + "    ";
        out += in + "{\n";
        for (std::size_t k = 0; k < n.counters.size(); ++k)
            out += i2 + "const long i" + std::to_string(k) + " = " + expr(n.counters[k]) + ";\n";
        if (!st.tuple_writes.empty()) {
            std::vector<std::string> values = print_tuple_values(b_, st, i2, "t", out);
            std::vector<int> buffers{st.write_buffer};
            for (const poly::Statement::TupleWrite& w : st.tuple_writes)
                buffers.push_back(w.buffer);
            for (std::size_t j = 0; j < buffers.size(); ++j)
                out += i2 + b_.buffer_name(buffers[j]) + "[" +
                       linear_index(b_, buffers[j], st.write_access) +
                       "] = " + store_value(b_.buffer_dtype(buffers[j]), values[j]) + ";\n";
            out += in + "}\n";
            return;
        }
        DType t = b_.buffer_dtype(st.write_buffer);
        std::string value = print_value(b_, st, i2, "t", out);
        std::string target = b_.buffer_name(st.write_buffer) + "[" +
                             linear_index(b_, st.write_buffer, st.write_access) + "]";
        if (st.kind == poly::StatementKind::Update) {
            std::string acc = load(b_, st.write_buffer, st.write_access);
            out += i2 + "const " + c_value_type(t) + " hd_acc = " + acc + ";\n";
            value = print_combine(st, t, "hd_acc", value, i2, "u", out);
        }
        out += i2 + target + " = " + store_value(t, value) + ";\n" + in + "}\n";
    }

    const SourceBuilder& b_;
    const poly::Kernel& k_;
};

// A mark (e.g. "permutable") around a single node is transparent to the mapping.
const AstNode* unwrap(const AstNode* n) {
    while (n->kind == AstNode::Kind::Mark && n->body.size() == 1)
        n = &n->body[0];
    return n;
}

void emit_nest(SourceBuilder& b, int kernel, const AstNode& top) {
    std::vector<const AstNode*> mapped;
    std::vector<std::int64_t> trips;
    const AstNode* n = unwrap(&top);
    while (n->kind == AstNode::Kind::For && n->parallel && mapped.size() < 3) {
        auto trip = trip_count(*n);
        if (!trip) break;
        mapped.push_back(n);
        trips.push_back(*trip);
        if (n->body.size() != 1 || unwrap(&n->body[0])->kind != AstNode::Kind::For) break;
        n = unwrap(&n->body[0]);
    }
    std::int64_t total = mapped.empty() ? 1 : product(trips);
    if (total == 0) return;
    NestPrinter printer(b, b.program.kernels.at(kernel));
    std::string body, in = "        ";
    if (mapped.empty()) {
        body = "    if (blockIdx.x != 0 || threadIdx.x != 0) return;\n";
        printer.node(top, "    ", body);
    } else {
        body = "    const long hd_stride = (long)gridDim.x * blockDim.x;\n";
        body += "    for (long hd_flat = (long)blockIdx.x * blockDim.x + threadIdx.x; hd_flat < " +
                int_text(total) + "; hd_flat += hd_stride) {\n";
        std::vector<std::string> idx;
        for (std::size_t d = 0; d < mapped.size(); ++d)
            idx.push_back("hd_t" + std::to_string(d));
        print_unflatten("hd_flat", trips, idx, in, body);
        for (std::size_t d = 0; d < mapped.size(); ++d)
            body += in + "const long " + mapped[d]->iterator + " = " + expr(mapped[d]->init) +
                    " + " + expr(mapped[d]->inc) + " * " + idx[d] + ";\n";
        printer.nodes(mapped.back()->body, in, body);
        body += "    }\n";
    }
    if (printer.params.buffers.empty()) return; // no statement instance
    CudaLaunch l;
    l.function = b.next_name(kernel);
    l.strategy = mapped.empty() ? "generic_serial" : "generic";
    l.kernel = kernel;
    std::int64_t threads =
        mapped.empty() ? 1 : std::min<std::int64_t>(256, ceil_div(total, 32) * 32);
    l.block = {static_cast<unsigned>(threads), 1, 1};
    l.grid = {static_cast<unsigned>(std::min<std::int64_t>(ceil_div(total, threads), 1 << 20)), 1,
              1};
    l.buffers = printer.params.buffers;
    emit_kernel(b, l.function, printer.params, 256, body);
    b.launches.push_back(std::move(l));
}

} // namespace

void emit_generic(SourceBuilder& b, int kernel, const AstNode& root) {
    if (root.kind == AstNode::Kind::Block) {
        for (const AstNode& top : root.body)
            emit_nest(b, kernel, top);
    } else {
        emit_nest(b, kernel, root);
    }
}

} // namespace hedra::backend::cuda

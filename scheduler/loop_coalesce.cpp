// Which perfect loop nests walk memory contiguously (see loop_coalesce.hpp).
#include "scheduler/loop_coalesce.hpp"

#include "scheduler/ast_access.hpp"

namespace hedra::sched {
namespace {

// The calls of a body made only of calls and blocks; false when it has anything else.
bool collect_calls(const std::vector<AstNode>& body, std::vector<const AstNode*>& calls) {
    for (const AstNode& n : body) {
        if (n.kind == AstNode::Kind::Call)
            calls.push_back(&n);
        else if (n.kind != AstNode::Kind::Block || !collect_calls(n.body, calls))
            return false;
    }
    return true;
}

// Whether `outer` (trip irrelevant) and `inner` (trip `trip`) are contiguous for `access`.
bool contiguous(const poly::Buffer& buffer, const AffineMap& access, const AstNode& call,
                const AstNode& outer, const AstNode& inner, std::int64_t trip) {
    auto co = element_coefficient(buffer, access, call, outer.iterator);
    auto ci = element_coefficient(buffer, access, call, inner.iterator);
    return co && ci && *co == trip * *ci;
}

} // namespace

std::int64_t constant_trip(const AstNode& loop) {
    const AstExpr& c = loop.cond;
    if (loop.kind != AstNode::Kind::For || loop.init.kind != AstExpr::Kind::Int ||
        loop.inc.kind != AstExpr::Kind::Int || loop.inc.value != 1 || c.kind != AstExpr::Kind::Op ||
        c.args.size() != 2 || c.args[0].kind != AstExpr::Kind::Id ||
        c.args[0].name != loop.iterator || c.args[1].kind != AstExpr::Kind::Int)
        return 0;
    std::int64_t last = c.args[1].value;
    if (c.op == AstExpr::Op::Lt)
        --last;
    else if (c.op != AstExpr::Op::Le)
        return 0;
    return last >= loop.init.value ? last - loop.init.value + 1 : 0;
}

std::vector<const AstNode*> coalescible_chain(const poly::ProgramIR& program,
                                              const poly::Kernel& kernel, const AstNode& loop) {
    std::vector<const AstNode*> chain{&loop};
    while (chain.back()->body.size() == 1 && chain.back()->body[0].kind == AstNode::Kind::For)
        chain.push_back(&chain.back()->body[0]);
    if (chain.size() < 2) return {};
    for (const AstNode* l : chain)
        if (constant_trip(*l) == 0) return {};
    std::vector<const AstNode*> calls;
    if (!collect_calls(chain.back()->body, calls) || calls.empty()) return {};
    for (const AstNode* call : calls) {
        const poly::Statement& st = kernel.statements.at(call->statement);
        if (!st.write_indirect.empty()) return {}; // writes at data-dependent elements
        for (std::size_t i = 0; i + 1 < chain.size(); ++i) {
            const AstNode& outer = *chain[i];
            const AstNode& inner = *chain[i + 1];
            std::int64_t trip = constant_trip(inner);
            if (!contiguous(program.buffers.at(st.write_buffer), st.write_access, *call, outer,
                            inner, trip))
                return {};
            for (const poly::Read& r : st.reads) {
                // An index value depends on the iterators; a data-dependent read is not a run.
                if (r.buffer < 0 || r.is_indirect()) return {};
                if (!contiguous(program.buffers.at(r.buffer), r.access, *call, outer, inner, trip))
                    return {};
            }
        }
    }
    return chain;
}

void mark_coalescible_loops(const poly::ProgramIR& program, const poly::Kernel& kernel,
                            AstNode& root) {
    if (root.kind == AstNode::Kind::For)
        root.coalesce = static_cast<int>(coalescible_chain(program, kernel, root).size());
    for (AstNode& child : root.body)
        mark_coalescible_loops(program, kernel, child);
    for (AstNode& child : root.else_body)
        mark_coalescible_loops(program, kernel, child);
}

} // namespace hedra::sched

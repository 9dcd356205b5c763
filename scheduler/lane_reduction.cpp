// The lane-reduction pass (see lane_reduction.hpp).
#include "scheduler/lane_reduction.hpp"

#include "scheduler/ast_access.hpp"
#include "scheduler/loop_coalesce.hpp"

namespace hedra::sched {

int reduction_lanes(const poly::ProgramIR& program, const poly::Kernel& kernel, const AstNode& loop,
                    const CpuTarget& cpu) {
    const AstExpr& c = loop.cond;
    const bool canonical = c.kind == AstExpr::Kind::Op &&
                           (c.op == AstExpr::Op::Le || c.op == AstExpr::Op::Lt) &&
                           c.args[0].kind == AstExpr::Kind::Id && c.args[0].name == loop.iterator;
    if (loop.kind != AstNode::Kind::For || contains_for(loop.body) || !canonical ||
        loop.inc.kind != AstExpr::Kind::Int || loop.inc.value != 1)
        return 0;
    const AstNode* call = &loop;
    while (call->kind != AstNode::Kind::Call) {
        if (call->body.size() != 1 || !call->else_body.empty() ||
            (call != &loop && call->kind != AstNode::Kind::Block))
            return 0;
        call = &call->body[0];
    }
    const poly::Statement& st = kernel.statements.at(call->statement);
    const poly::Buffer& wb = program.buffers.at(st.write_buffer);
    const bool op = st.reduce_op == ReduceOp::Sum || st.reduce_op == ReduceOp::Max ||
                    st.reduce_op == ReduceOp::Min;
    if (st.kind != poly::StatementKind::Update || !st.tuple_writes.empty() || !op ||
        !is_float(wb.dtype) || is_half(wb.dtype) || poly::has_indirect(st))
        return 0;
    auto moves = element_coefficient(wb, st.write_access, *call, loop.iterator);
    if (!moves || *moves != 0) return 0;
    // Two vectors of lanes, fewer on a short row (84 logits: 5 x 16 + 4 rather than 2 x 32 +
    // 20 left to the scalar loop).
    const int size = static_cast<int>(dtype_size(wb.dtype));
    int lanes = 2 * cpu.vector_bytes / size;
    const std::int64_t trip = constant_trip(loop);
    while (trip > 0 && trip < 4 * lanes && lanes * size > 32)
        lanes /= 2;
    return lanes;
}

void choose_lane_reductions(const poly::ProgramIR& program, const poly::Kernel& kernel,
                            AstNode& root, const CpuTarget& cpu) {
    if (root.kind == AstNode::Kind::For)
        root.reduction_lanes = reduction_lanes(program, kernel, root, cpu);
    for (auto* list : {&root.body, &root.else_body})
        for (AstNode& c : *list)
            choose_lane_reductions(program, kernel, c, cpu);
}

} // namespace hedra::sched

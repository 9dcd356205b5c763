// Recognizing a register tile's nest (see register_tile_nest.hpp).
#include "backends/common/register_tile_nest.hpp"

#include "backends/common/c_access.hpp"
#include "backends/common/c_expr.hpp"

namespace hedra::backend::register_tile_detail {

// The inclusive upper bound of a canonical loop (`it <= e` or `it < e`), or null.
std::optional<std::string> upper_bound(const AstNode& loop) {
    const AstExpr& c = loop.cond;
    if (c.kind != AstExpr::Kind::Op || c.args.size() != 2 || c.args[0].kind != AstExpr::Kind::Id ||
        c.args[0].name != loop.iterator)
        return std::nullopt;
    if (c.op == AstExpr::Op::Le) return c_index_expr(c.args[1]);
    if (c.op == AstExpr::Op::Lt) return "(" + c_index_expr(c.args[1]) + " - 1L)";
    return std::nullopt;
}

// A constant bound on the trip count of a canonical loop, from constants in its init (a
// number or a max with one) and its bound (a number or a min with one).
std::optional<std::int64_t> max_trip(const AstNode& loop) {
    auto constant_in = [](const AstExpr& e, AstExpr::Op combine) -> std::optional<std::int64_t> {
        if (e.kind == AstExpr::Kind::Int) return e.value;
        if (e.kind == AstExpr::Kind::Op && e.op == combine)
            for (const AstExpr& a : e.args)
                if (a.kind == AstExpr::Kind::Int) return a.value;
        return std::nullopt;
    };
    auto lo = constant_in(loop.init, AstExpr::Op::Max);
    if (loop.cond.kind != AstExpr::Kind::Op || loop.cond.args.size() != 2) return std::nullopt;
    auto hi = constant_in(loop.cond.args[1], AstExpr::Op::Min);
    if (!lo || !hi) return std::nullopt;
    std::int64_t trip = *hi - *lo + (loop.cond.op == AstExpr::Op::Le ? 1 : 0);
    return trip > 0 ? std::optional<std::int64_t>(trip) : std::nullopt;
}

namespace {

// `loop` is `for (...) { one call }` over the same columns as the update's V loop `v`.
bool is_column_row(const AstNode& loop, const AstNode& v) {
    return loop.kind == AstNode::Kind::For && loop.body.size() == 1 &&
           loop.body[0].kind == AstNode::Kind::Call && loop.cond.kind == AstExpr::Kind::Op &&
           v.cond.kind == AstExpr::Kind::Op && loop.cond.args.size() == 2 &&
           v.cond.args.size() == 2 && c_index_expr(loop.init) == c_index_expr(v.init) &&
           c_index_expr(loop.cond.args[1]) == c_index_expr(v.cond.args[1]) &&
           loop.cond.op == v.cond.op && sched::to_string(loop.inc) == sched::to_string(v.inc);
}

// `loop` is `for (V) { init(...) }` over the columns of the update's V loop `v`, with init an
// assignment of 0 to the update's buffer.
bool is_init_row(const RegisterTileContext& cx, const AstNode& loop, const AstNode& v,
                 const poly::Statement& update) {
    if (!is_column_row(loop, v)) return false;
    const poly::Statement& init = cx.kernel.statements.at(loop.body[0].statement);
    return init.kind == poly::StatementKind::Assign && init.write_buffer == update.write_buffer &&
           init.value->op == ScalarOp::Const && init.value->fvalue == 0.0;
}

// `loop` is `for (V') { epilogue(...) }` over the columns of the update's V loop `v`: an Assign
// to another buffer of the update's dtype that reads the update's result (partition.hpp).
bool is_epilogue_row(const RegisterTileContext& cx, const AstNode& loop, const AstNode& v,
                     const poly::Statement& update) {
    if (!is_column_row(loop, v)) return false;
    const poly::Statement& e = cx.kernel.statements.at(loop.body[0].statement);
    bool reads_result = false;
    for (const poly::Read& r : e.reads)
        reads_result = reads_result || r.buffer == update.write_buffer;
    return e.kind == poly::StatementKind::Assign && e.write_buffer != update.write_buffer &&
           e.write_buffer >= 0 && reads_result &&
           cx.program.buffers.at(e.write_buffer).dtype ==
               cx.program.buffers.at(update.write_buffer).dtype;
}

} // namespace

std::optional<std::int64_t> pack_elements(const Nest& n, std::int64_t width) {
    std::int64_t rows = 1;
    for (const AstNode* k : n.ks) {
        auto trip = max_trip(*k);
        if (!trip) return std::nullopt;
        rows *= *trip;
    }
    return rows * ((n.trip_v + width - 1) / width * width);
}

std::optional<Nest> match(const RegisterTileContext& cx, const AstNode& mark) {
    std::vector<const AstNode*> loops;
    const std::vector<AstNode>* body = &mark.body;
    const AstNode* init_loop = nullptr;
    const AstNode* epi_loop = nullptr;
    std::size_t init_after = 0;
    while (true) {
        if (body->size() == 1 && (*body)[0].kind == AstNode::Kind::For) {
            loops.push_back(&(*body)[0]);
            body = &(*body)[0].body;
        } else if ((body->size() == 2 || body->size() == 3) && !init_loop && !loops.empty() &&
                   (*body)[1].kind == AstNode::Kind::For) {
            init_loop = &(*body)[0]; // checked below, once V is known
            if (body->size() == 3) epi_loop = &(*body)[2];
            init_after = loops.size() - 1;
            loops.push_back(&(*body)[1]);
            body = &(*body)[1].body;
        } else {
            break;
        }
    }
    if (body->size() != 1 || (*body)[0].kind != AstNode::Kind::Call || loops.size() < 3)
        return std::nullopt;
    Nest n;
    n.call = &(*body)[0];
    n.init_loop = init_loop;
    n.init_after = init_after;
    const poly::Statement& st = cx.kernel.statements.at(n.call->statement);
    const poly::Buffer& out = cx.program.buffers.at(st.write_buffer);
    if (st.kind != poly::StatementKind::Update || st.reduce_op != ReduceOp::Sum ||
        !is_float(out.dtype) || !vector_expression(st.value, out.dtype))
        return std::nullopt;
    auto write_coef = [&](const AstNode* l) {
        return element_coefficient(out, st.write_access, *n.call, l->iterator);
    };
    n.v = loops.back();
    auto cv_out = write_coef(n.v);
    if (!cv_out || *cv_out == 0) return std::nullopt;
    n.c_stride = *cv_out;
    std::size_t i = loops.size() - 1;
    while (i > 0 && write_coef(loops[i - 1]) == 0)
        n.ks.insert(n.ks.begin(), loops[--i]);
    if (n.ks.empty() || i == 0) return std::nullopt;
    n.a = loops[i - 1];
    if (n.init_loop && (n.init_after != i - 1 || !is_init_row(cx, *n.init_loop, *n.v, st)))
        return std::nullopt;
    if (epi_loop && !is_epilogue_row(cx, *epi_loop, *n.v, st)) return std::nullopt;
    n.epi_loop = epi_loop;
    auto ca = write_coef(n.a);
    auto trip = max_trip(*n.v);
    auto trip_a = max_trip(*n.a);
    if (!ca || !trip) return std::nullopt;
    std::int64_t sa = *ca < 0 ? -*ca : *ca, sv = n.c_stride < 0 ? -n.c_stride : n.c_stride;
    if (sa < *trip * sv && (!trip_a || sv < *trip_a * sa)) return std::nullopt; // overlap
    n.trip_v = *trip;
    n.outer.assign(loops.begin(), loops.begin() + static_cast<long>(i) - 1);
    // Rectangular, unit-step loops.
    std::vector<const AstNode*> inner = n.ks;
    inner.insert(inner.begin(), n.a);
    inner.push_back(n.v);
    for (const AstNode* l : inner) {
        if (l->inc.kind != AstExpr::Kind::Int || l->inc.value != 1 || !upper_bound(*l))
            return std::nullopt;
        for (const AstNode* other : inner)
            if (mentions(l->init, other->iterator) || mentions(l->cond.args[1], other->iterator))
                return std::nullopt;
    }
    n.ua = *upper_bound(*n.a);
    n.uv = *upper_bound(*n.v);
    for (const poly::Read& r : st.reads) {
        if (r.buffer < 0 || r.buffer == st.write_buffer) return std::nullopt;
        const poly::Buffer& b = cx.program.buffers[r.buffer];
        auto cv = element_coefficient(b, r.access, *n.call, n.v->iterator);
        if (!cv) return std::nullopt;
        if (*cv != 0 && *cv != 1) { // strided along V: only as a packed panel
            std::int64_t width =
                2 * std::int64_t{sched::tile_vector_bytes(n.trip_v, dtype_size(b.dtype))} /
                static_cast<std::int64_t>(dtype_size(b.dtype));
            auto elements = pack_elements(n, width);
            if (element_coefficient(b, r.access, *n.call, n.a->iterator) != 0 || !elements ||
                std::size_t(*elements) * dtype_size(b.dtype) > kMaxPackBytes)
                return std::nullopt;
        }
        for (const AstNode* l : inner)
            if (!element_coefficient(cx.program.buffers[r.buffer], r.access, *n.call, l->iterator))
                return std::nullopt;
    }
    return n;
}
} // namespace hedra::backend::register_tile_detail

// The generic kernels' thread mapping (see gpu_generic_threads.hpp).
#include "scheduler/gpu_generic_threads.hpp"

#include <algorithm>

namespace hedra::sched {
namespace {

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
    return (a + b - 1) / b;
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

GpuGenericNest map_nest(const AstNode& top, const GpuTarget& target) {
    GpuGenericNest g;
    const AstNode* n = unwrap_marks(&top);
    while (n->kind == AstNode::Kind::For && n->parallel && g.thread_loops < 3) {
        auto trip = constant_trip_count(*n);
        if (!trip) break;
        ++g.thread_loops;
        g.trips.push_back(*trip);
        if (n->body.size() != 1 || unwrap_marks(&n->body[0])->kind != AstNode::Kind::For) break;
        n = unwrap_marks(&n->body[0]);
    }
    for (std::int64_t t : g.trips)
        g.points *= t;
    const std::int64_t warp = std::max(1, target.warp_size);
    g.max_threads = std::min<std::int64_t>(kGenericThreads, target.max_threads_per_block);
    g.threads = g.thread_loops == 0
                    ? 1
                    : std::min(g.max_threads / warp * warp, ceil_div(g.points, warp) * warp);
    g.threads = std::max<std::int64_t>(g.threads, 1);
    g.blocks = grid_stride_blocks(ceil_div(std::max<std::int64_t>(g.points, 1), g.threads), target);
    return g;
}

} // namespace

std::int64_t grid_stride_blocks(std::int64_t blocks, const GpuTarget& target) {
    return std::min<std::int64_t>({blocks, std::int64_t{1} << 20, target.max_grid_x});
}

const AstNode* unwrap_marks(const AstNode* n) {
    while (n->kind == AstNode::Kind::Mark && n->body.size() == 1)
        n = &n->body[0];
    return n;
}

std::optional<std::int64_t> constant_trip_count(const AstNode& loop) {
    const AstExpr& c = loop.cond;
    if (c.kind != AstExpr::Kind::Op || (c.op != AstExpr::Op::Le && c.op != AstExpr::Op::Lt) ||
        c.args[0].kind != AstExpr::Kind::Id || c.args[0].name != loop.iterator)
        return std::nullopt;
    auto init = constant(loop.init), ub = constant(c.args[1]), inc = constant(loop.inc);
    if (!init || !ub || !inc || *inc <= 0) return std::nullopt;
    std::int64_t last = c.op == AstExpr::Op::Le ? *ub : *ub - 1;
    return last < *init ? 0 : (last - *init) / *inc + 1;
}

std::vector<const AstNode*> generic_nests(const AstNode& root) {
    std::vector<const AstNode*> out;
    if (root.kind == AstNode::Kind::Block)
        for (const AstNode& top : root.body)
            out.push_back(&top);
    else
        out.push_back(&root);
    return out;
}

std::vector<GpuGenericNest> map_generic_threads(const AstNode& root, const GpuTarget& target) {
    std::vector<GpuGenericNest> out;
    for (const AstNode* top : generic_nests(root))
        out.push_back(map_nest(*top, target));
    return out;
}

std::string to_string(const GpuGenericNest& g) {
    std::string s = g.thread_loops == 0 ? "one thread" : "threads over";
    for (std::int64_t t : g.trips)
        s += " " + std::to_string(t);
    return s + " block=" + std::to_string(g.threads) + " grid=" + std::to_string(g.blocks);
}

} // namespace hedra::sched

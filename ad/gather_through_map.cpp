// The view adjoint's gather pushed through a map cotangent. The cotangent ȳ of a convolution's
// window view is a Map, ȳ_out(n, co, oh, ow) · w(co, c, kh, kw), over the whole window box.
// Padding and dilating that product (view_adjoint.cpp's P) would make a padded temporary with
// the kernel axes in it. Instead, each operand of the map is gathered on its own:
//   - an operand that depends on the placed (primary) axes, through one source axis each with
//     coefficient ±1, has its *source* dilated and zero-padded along those axes (the output
//     gradient: (n, co, [lo, hi], [lo, hi])) and is then read through one View;
//   - an operand independent of the placed axes (the weights) is read through one View as is;
// and x̄ = Σ map(operands) over the summed axes: the same structure as a forward convolution
// (a reduction of a map of views of a padded array). This is valid when the map's value is 0
// wherever its padded operands are 0 (ZeroAnalysis below), which holds for the map
// adjoints this layer emits (ȳ · ∂f/∂x, select(c, ȳ, 0)).
#include <algorithm>
#include <unordered_map>

#include "ad/gather_plan.hpp"
#include "core/node_builders.hpp"
#include "core/primitives.hpp"

namespace hedra::ad {
namespace {

// Memoized over the expression DAG (shared subexpressions are visited once).
class ZeroAnalysis {
public:
    explicit ZeroAnalysis(const std::vector<bool>& padded) : padded_(padded) {}

    // Whether e reads a padded input.
    bool uses(const ScalarExpr& e) {
        if (auto it = uses_.find(e.get()); it != uses_.end()) return it->second;
        bool r = e->op == ScalarOp::Input
                     ? padded_[static_cast<std::size_t>(e->ivalue)]
                     : std::any_of(e->args.begin(), e->args.end(),
                                   [&](const ScalarExpr& a) { return uses(a); });
        return uses_[e.get()] = r;
    }

    // Whether e is 0 whenever the padded inputs are 0 (other inputs finite).
    bool zero(const ScalarExpr& e) {
        if (auto it = zero_.find(e.get()); it != zero_.end()) return it->second;
        const auto& x = e->args;
        bool r = false;
        switch (e->op) {
        case ScalarOp::Input:
            r = padded_[static_cast<std::size_t>(e->ivalue)];
            break;
        case ScalarOp::Const:
            r = is_float(e->dtype) ? e->fvalue == 0.0 : e->ivalue == 0;
            break;
        case ScalarOp::Neg:
            r = zero(x[0]);
            break;
        case ScalarOp::Cast:
            r = is_float(x[0]->dtype) && zero(x[0]);
            break;
        case ScalarOp::Mul:
            r = zero(x[0]) || zero(x[1]);
            break;
        case ScalarOp::Div:
            r = zero(x[0]) && !uses(x[1]);
            break;
        case ScalarOp::Add:
        case ScalarOp::Sub:
            r = zero(x[0]) && zero(x[1]);
            break;
        case ScalarOp::Select:
            r = zero(x[1]) && zero(x[2]);
            break;
        default:
            break;
        }
        return zero_[e.get()] = r;
    }

private:
    const std::vector<bool>& padded_;
    std::unordered_map<const ScalarNode*, bool> uses_, zero_;
};

// An operand of the map: its source and the access from the map's counters to the source's.
struct MapOperand {
    NodePtr source;
    AffineMap access;
    std::vector<int> owner; // per source axis: the plan row it is placed along, or -1
    bool padded = false;
};

bool needs_padding(const GatherPlan& plan, int r) {
    return !(plan.tshape[r] == plan.pshape[r]);
}

// Fills `op.owner`; false if the operand depends on a placed axis that needs padding other
// than through one source axis with coefficient ±1 that depends on nothing else, or does not
// depend on all of them.
bool classify(MapOperand& op, const GatherPlan& plan) {
    const AffineMap& m = op.access;
    op.owner.assign(static_cast<std::size_t>(m.out_rank()), -1);
    int padding_rows = 0, owned = 0;
    for (int r = 0; r < plan.rank(); ++r) {
        const int o = plan.rows[r].primary;
        if (o < 0 || !needs_padding(plan, r)) continue;
        ++padding_rows;
        int source_axis = -1, count = 0;
        for (int s = 0; s < m.out_rank(); ++s)
            if (m.coeff(s, o) != 0) source_axis = s, ++count;
        if (count == 0) continue;
        if (count > 1 || std::abs(m.coeff(source_axis, o)) != 1) return false;
        for (int a = 0; a < m.in_rank(); ++a)
            if (a != o && plan.n[a] > 1 && m.coeff(source_axis, a) != 0) return false;
        op.owner[source_axis] = r;
        ++owned;
    }
    op.padded = owned > 0;
    return owned == 0 || owned == padding_rows;
}

// The operand's source dilated and zero-padded along its owned axes (P's ranges there).
NodePtr padded_source(const MapOperand& op, const GatherPlan& plan, SourceLocation loc) {
    const NodePtr& src = op.source;
    const int rs = src->shape.rank();
    std::vector<Range> tranges, pranges;
    std::vector<std::int64_t> map(static_cast<std::size_t>(rs * rs), 0), off(rs, 0);
    for (int s = 0; s < rs; ++s) {
        const int r = op.owner[s];
        const std::size_t diag = static_cast<std::size_t>(s * rs + s);
        if (r < 0) {
            const Range& whole = src->shape[s]; // a symbolic extent stays symbolic
            tranges.push_back(whole.is_dynamic() ? whole : Range(0, 1, whole.size));
            pranges.push_back(tranges.back());
            map[diag] = 1;
            continue;
        }
        // T's counter t along this row reads cotangent counter k_o = t (or n_o - 1 - t when
        // the row's coefficient is negative), i.e. source counter β·k_o + e.
        const int o = plan.rows[r].primary;
        const std::int64_t beta = op.access.coeff(s, o), e = op.access.offset(s);
        const bool reversed = plan.t_access.coeff(o, r) < 0;
        tranges.push_back(plan.tshape[r]);
        pranges.push_back(plan.pshape[r]);
        map[diag] = reversed ? -beta : beta;
        off[s] = e + (reversed ? beta * (plan.n[o] - 1) : 0);
    }
    Shape tshape(tranges), pshape(pranges);
    NodePtr t = detail::make_view(src, tshape, AffineMap(rs, rs, map, off), loc);
    if (tshape == pshape) return t;
    return overwrite({zeros(pshape, src->dtype, loc), Array(t)}, loc).node();
}

// The operand read over V's box: owned axes follow P's row counters, the others the summed
// cotangent axes.
NodePtr gathered(const MapOperand& op, const NodePtr& source, const GatherPlan& plan,
                 SourceLocation loc) {
    const int rv = plan.vshape.rank(), rs = source->shape.rank();
    std::vector<std::int64_t> map(static_cast<std::size_t>(rs * rv), 0), off(rs, 0);
    for (int s = 0; s < rs; ++s) {
        const int r = op.owner.empty() ? -1 : op.owner[s];
        if (r >= 0) {
            for (int v = 0; v < rv; ++v)
                map[static_cast<std::size_t>(s * rv + v)] = plan.v_access.coeff(r, v);
            off[s] = plan.v_access.offset(r);
            continue;
        }
        off[s] = op.access.offset(s);
        for (int a : plan.summed)
            map[static_cast<std::size_t>(s * rv + plan.summed_position(a))] = op.access.coeff(s, a);
        // A placed axis without padding: T's counter there is V's, k_o = ±t + offset.
        for (int q = 0; q < plan.rank(); ++q) {
            const int o = plan.rows[q].primary;
            if (o < 0 || needs_padding(plan, q) || op.access.coeff(s, o) == 0) continue;
            map[static_cast<std::size_t>(s * rv + q)] +=
                op.access.coeff(s, o) * plan.t_access.coeff(o, q);
            off[s] += op.access.coeff(s, o) * plan.t_access.offset(o);
        }
    }
    return detail::make_view(source, plan.vshape, AffineMap(rv, rs, map, off), loc);
}

} // namespace

NodePtr gather_through_map(const NodePtr& ybar, const GatherPlan& plan, SourceLocation loc) {
    if (ybar->kind != NodeKind::Map) return nullptr;
    for (int r = 0; r < plan.rank(); ++r)
        if (plan.rows[r].primary < 0 && plan.pshape[r].size != 1) return nullptr;
    std::vector<MapOperand> ops;
    std::vector<bool> padded;
    for (const NodePtr& u : ybar->inputs) {
        MapOperand op;
        if (u->kind == NodeKind::View) {
            op.source = u->inputs.at(0);
            op.access = u->access;
        } else {
            op.source = u;
            op.access = AffineMap::identity(u->shape.rank());
        }
        if (!classify(op, plan)) return nullptr;
        padded.push_back(op.padded);
        ops.push_back(std::move(op));
    }
    if (std::none_of(padded.begin(), padded.end(), [](bool p) { return p; }) ||
        !ZeroAnalysis(padded).zero(ybar->expr))
        return nullptr;
    std::vector<NodePtr> operands;
    for (const MapOperand& op : ops)
        operands.push_back(
            gathered(op, op.padded ? padded_source(op, plan, loc) : op.source, plan, loc));
    return detail::make_map_node(ybar->expr, operands, plan.vshape, loc);
}

} // namespace hedra::ad

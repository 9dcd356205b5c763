// The map primitive: a traced scalar expression applied elementwise to broadcast operands.
// Operands are aligned from the right (NumPy); a size-1 axis broadcasts, other ranges must be
// equal. Broadcasting inserts View nodes, so a Map's inputs all have the Map's shape. Maps are
// kept canonical (unused operands dropped, repeated ones merged) so that hash-consing finds
// equal computations however they were written.
#include <algorithm>

#include "core/node_builders.hpp"
#include "core/primitives.hpp"
#include "core/scalar_dag.hpp"

namespace hedra {
namespace detail {
namespace {

void collect_inputs(const ScalarExpr& e, std::vector<bool>& used) {
    for (const ScalarExpr& x : topological_order(e)) {
        if (x->op != ScalarOp::Input) continue;
        auto k = static_cast<std::size_t>(x->ivalue);
        HEDRA_INTERNAL_CHECK(k < used.size(), "map expression reads a missing input");
        used[k] = true;
    }
}

// The common shape of the array operands, or an error naming the first conflicting pair.
Shape broadcast_shape(const std::vector<NodePtr>& arrays, const std::vector<std::size_t>& names,
                      const std::string& op) {
    int rank = 0;
    for (const NodePtr& n : arrays)
        rank = std::max(rank, n->shape.rank());
    std::vector<Range> out;
    for (int d = 0; d < rank; ++d) {
        int chosen = -1, first = -1;
        for (int j = 0; j < static_cast<int>(arrays.size()); ++j) {
            const Shape& s = arrays[j]->shape;
            int axis = d - (rank - s.rank());
            if (axis < 0) continue;
            if (first < 0) first = j;
            const Range& rg = s[axis];
            if (rg.size == 1) continue;
            if (chosen < 0) {
                chosen = j;
                continue;
            }
            const Shape& c = arrays[chosen]->shape;
            const Range& cr = c[d - (rank - c.rank())];
            if (rg == cr || (rg.empty() && cr.empty())) continue;
            throw Error("cannot broadcast in '" + op + "': axis " + std::to_string(d) +
                        " has ranges " + cr.to_string() + " and " + rg.to_string() + "; shapes " +
                        c.to_string() + " and " + s.to_string() + "; " +
                        operand_name(names[chosen]) + " created at " + site(arrays[chosen]) + ", " +
                        operand_name(names[j]) + " at " + site(arrays[j]));
        }
        const Shape& s = arrays[chosen >= 0 ? chosen : first]->shape;
        out.push_back(s[d - (rank - s.rank())]);
    }
    return Shape(std::move(out));
}

} // namespace

NodePtr make_map_node(const ScalarExpr& expr, const std::vector<NodePtr>& inputs,
                      const Shape& shape, SourceLocation loc) {
    std::vector<bool> used(inputs.size(), false);
    collect_inputs(expr, used);
    // Renumber: keep each used input once, in order of first use.
    std::vector<NodePtr> kept;
    std::vector<ScalarExpr> replacement(inputs.size());
    bool renumbered = false;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        if (!used[k]) {
            renumbered = true;
            replacement[k] = scalar_input(0, inputs[k]->dtype); // never substituted
            continue;
        }
        std::size_t j = 0;
        while (j < kept.size() && kept[j] != inputs[k])
            ++j;
        if (j == kept.size()) kept.push_back(inputs[k]);
        renumbered = renumbered || j != k;
        replacement[k] = scalar_input(static_cast<int>(j), inputs[k]->dtype);
    }
    ScalarExpr e =
        share_common_subexpressions(renumbered ? substitute_inputs(expr, replacement) : expr);
    if (e->op == ScalarOp::Input) return kept.at(static_cast<std::size_t>(e->ivalue));
    auto n = new_node(NodeKind::Map, e->dtype, shape, std::move(kept), loc);
    n->expr = std::move(e);
    return intern(std::move(n));
}

NodePtr cast_node(const NodePtr& a, DType to, SourceLocation loc) {
    if (a->dtype == to) return a;
    return make_map_node(scalar_cast(scalar_input(0, a->dtype), to), {a}, a->shape, loc);
}

std::vector<Sym> trace_arguments(const std::vector<Operand>& operands) {
    std::vector<Sym> syms;
    int k = 0;
    for (const Operand& op : operands) {
        if (op.is_array())
            syms.emplace_back(scalar_input(k++, op.array().dtype()));
        else
            syms.push_back(op.literal());
    }
    return syms;
}

std::vector<Array> make_map(const std::vector<ScalarExpr>& outputs,
                            const std::vector<Operand>& operands, const std::string& op,
                            SourceLocation loc) {
    std::vector<NodePtr> arrays;
    std::vector<std::size_t> names;
    for (std::size_t i = 0; i < operands.size(); ++i) {
        if (!operands[i].is_array()) continue;
        arrays.push_back(operands[i].array().node());
        names.push_back(i);
    }
    Shape shape = broadcast_shape(arrays, names, op);
    std::vector<NodePtr> inputs;
    for (const NodePtr& n : arrays)
        inputs.push_back(broadcast_node(n, shape, loc));
    std::vector<Array> results;
    for (const ScalarExpr& e : outputs) {
        HEDRA_INTERNAL_CHECK(e.get() != nullptr, "null traced expression");
        if (scalar_num_inputs(e) > static_cast<int>(inputs.size()))
            throw Error("'" + op + "': the traced expression " + to_string(e) +
                        " reads more inputs than the " + std::to_string(inputs.size()) +
                        " array operands");
        results.emplace_back(make_map_node(e, inputs, shape, loc));
    }
    return results;
}

} // namespace detail
} // namespace hedra

// The reverse sweep: find the nodes between the parameters and the outputs through which a
// gradient can flow (float nodes depending on a parameter, not behind stop_gradient), visit
// them from the outputs down, sum each node's cotangent contributions into one Map (fan-out),
// and hand it to the node's adjoint rule (ad/adjoints.cpp). Also stop_gradient, which is an
// identity map tagged by an input no user array can be (a private rank-0 Data node).
#include "ad/grad.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ad/adjoints.hpp"
#include "ad/scan_adjoint.hpp"
#include "core/node_builders.hpp"
#include "core/primitives.hpp"

namespace hedra {
namespace {

const NodePtr& stop_marker() {
    static const NodePtr marker =
        detail::make_array_leaf(HostArray(std::vector<std::int64_t>{}, DType::Bool), Shape(),
                                SourceLocation::current())
            .node();
    return marker;
}

std::string describe(const std::string& what, std::size_t i, const NodePtr& n) {
    return what + " " + std::to_string(i) + " (" + std::string(dtype_name(n->dtype)) + " " +
           n->shape.to_string() + ", created at " + location_string(n->loc) + ")";
}

// The piece of a contribution that is zero outside one box, overwrite(zeros, piece) (the
// adjoint of a slice), or null.
const Node* padded_piece(const NodePtr& p) {
    if (p->kind != NodeKind::Fuse || !p->overwrite || p->inputs.size() != 2) return nullptr;
    const Node* z = p->inputs[0].get();
    while (z->kind == NodeKind::View)
        z = z->inputs.at(0).get();
    if (z->kind != NodeKind::Constant || z->expr->op != ScalarOp::Const ||
        (is_float(z->expr->dtype) ? z->expr->fvalue != 0.0 : z->expr->ivalue != 0))
        return nullptr;
    return p->inputs[1].get();
}

// Whether two boxes of one shape share no index (conservatively: on some axis their spans
// do not overlap).
bool disjoint_boxes(const Shape& a, const Shape& b) {
    for (int d = 0; d < a.rank(); ++d) {
        const Range &x = a[d], &y = b[d];
        if (x.size == 0 || y.size == 0) return true;
        const std::int64_t x_end = x.start + x.step * (x.size - 1),
                           y_end = y.start + y.step * (y.size - 1);
        if (x_end < y.start || y_end < x.start) return true;
    }
    return false;
}

// Contributions that are slices' adjoints (zero outside a box each) are summed box by box
// and written into one padded array: the gates of an LSTM, each sliced from one projection
// and read several times, give one array of their gradients, not one zero-padded copy per
// use. Returns the parts left to add (the combined one among them).
std::vector<NodePtr> combine_padded(const NodePtr& node, const std::vector<NodePtr>& parts) {
    std::vector<std::vector<NodePtr>> boxes; // pieces of one box each
    std::vector<NodePtr> rest;
    for (const NodePtr& p : parts) {
        const Node* piece = padded_piece(p);
        if (!piece || !(p->shape == node->shape)) {
            rest.push_back(p);
            continue;
        }
        auto same = std::find_if(boxes.begin(), boxes.end(), [&](const std::vector<NodePtr>& b) {
            return b[0]->shape == piece->shape;
        });
        if (same != boxes.end())
            same->push_back(p->inputs[1]);
        else
            boxes.push_back({p->inputs[1]});
    }
    std::size_t padded = parts.size() - rest.size();
    if (padded < 2) return parts;
    for (std::size_t i = 0; i < boxes.size(); ++i)
        for (std::size_t j = i + 1; j < boxes.size(); ++j)
            if (!disjoint_boxes(boxes[i][0]->shape, boxes[j][0]->shape)) return parts;
    std::vector<Array> pieces{zeros(node->shape, node->dtype, node->loc)};
    for (const std::vector<NodePtr>& b : boxes) {
        ScalarExpr e = scalar_input(0, node->dtype);
        for (std::size_t k = 1; k < b.size(); ++k)
            e = scalar_binary(ScalarOp::Add, e, scalar_input(static_cast<int>(k), node->dtype));
        pieces.emplace_back(b.size() == 1 ? b[0]
                                          : detail::make_map_node(e, b, b[0]->shape, node->loc));
    }
    rest.push_back(overwrite(pieces, node->loc).node());
    return rest;
}

// The sum of a node's cotangent contributions, as one Map.
Array total(const NodePtr& node, const std::vector<NodePtr>& raw_parts) {
    if (raw_parts.size() == 1) return Array(raw_parts[0]);
    const std::vector<NodePtr> parts = combine_padded(node, raw_parts);
    if (parts.size() == 1) return Array(parts[0]);
    ScalarExpr e = scalar_input(0, node->dtype);
    for (std::size_t k = 1; k < parts.size(); ++k)
        e = scalar_binary(ScalarOp::Add, e, scalar_input(static_cast<int>(k), node->dtype));
    return Array(detail::make_map_node(e, parts, node->shape, node->loc));
}

// A parameter that is a View disappears from the graph when its users are views too (a view
// of a view is composed into one view of the source): its gradient would silently be zero.
void check_views_not_composed_away(const std::vector<NodePtr>& order,
                                   const std::vector<Array>& inputs, SourceLocation loc) {
    std::unordered_set<const Node*> reached;
    for (const NodePtr& n : order)
        reached.insert(n.get());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const NodePtr& p = inputs[i].node();
        if (p->kind != NodeKind::View || reached.count(p.get()) ||
            !reached.count(p->inputs.at(0).get()))
            continue;
        throw Error("grad: " + describe("parameter", i, p) +
                    " is a view (reshape, transpose, broadcast, ...) that the outputs read only "
                    "through views composed with it, so it is not part of their graph; "
                    "differentiate with respect to the array it views (created at " +
                    location_string(p->inputs[0]->loc) + ") instead; at " + location_string(loc));
    }
}

} // namespace

namespace ad {
bool is_stop_gradient(const Node& node) {
    if (node.kind != NodeKind::Map || node.inputs.size() != 2) return false;
    const NodePtr& tag = node.inputs[1];
    return tag == stop_marker() ||
           (tag->kind == NodeKind::View && tag->inputs.at(0) == stop_marker());
}
} // namespace ad

Array stop_gradient(const Array& a, SourceLocation loc) {
    const NodePtr& n = a.node();
    if (!is_float(n->dtype)) return a;
    NodePtr tag = detail::broadcast_node(stop_marker(), n->shape, loc);
    ScalarExpr x = scalar_input(0, n->dtype);
    ScalarExpr e = scalar_select(scalar_input(1, DType::Bool), x, x);
    NodePtr result = detail::make_map_node(e, {n, tag}, n->shape, loc);
    HEDRA_INTERNAL_CHECK(ad::is_stop_gradient(*result), "stop_gradient lost its tag");
    return Array(result);
}

std::vector<Array> vjp(const std::vector<Array>& outputs, const std::vector<Array>& cotangents,
                       const std::vector<Array>& inputs, SourceLocation loc) {
    if (outputs.size() != cotangents.size())
        throw Error("vjp: " + std::to_string(outputs.size()) + " outputs but " +
                    std::to_string(cotangents.size()) + " cotangents; at " + location_string(loc));
    std::unordered_set<const Node*> params;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const NodePtr& p = inputs[i].node();
        if (!is_float(p->dtype))
            throw Error("grad: cannot differentiate with respect to " + describe("input", i, p) +
                        ": only float arrays have gradients; at " + location_string(loc));
        params.insert(p.get());
    }
    std::vector<NodePtr> roots;
    std::unordered_map<const Node*, std::vector<NodePtr>> parts;
    for (std::size_t o = 0; o < outputs.size(); ++o) {
        const NodePtr& y = outputs[o].node();
        NodePtr g = cotangents[o].node();
        if (!is_float(y->dtype))
            throw Error("grad: cannot differentiate " + describe("output", o, y) +
                        ": only float arrays have derivatives; at " + location_string(loc));
        if (!(g->shape == y->shape))
            throw Error("vjp: cotangent " + std::to_string(o) + " has shape " +
                        g->shape.to_string() + " but its output has shape " + y->shape.to_string() +
                        "; output created at " + location_string(y->loc) + ", cotangent at " +
                        location_string(g->loc));
        roots.push_back(y);
        parts[y.get()].push_back(detail::cast_node(g, y->dtype, loc));
    }

    // Nodes through which a gradient flows to a parameter, inputs before users.
    std::vector<NodePtr> order = topological_order(roots);
    check_views_not_composed_away(order, inputs, loc);
    std::unordered_set<const Node*> active;
    for (const NodePtr& n : order) {
        bool on_path = params.count(n.get()) > 0;
        if (!on_path && is_float(n->dtype) && !ad::is_stop_gradient(*n))
            for (const NodePtr& x : n->inputs)
                on_path = on_path || active.count(x.get());
        if (on_path) active.insert(n.get());
    }

    std::unordered_map<const Node*, Array> cotangent;
    // A scan's components' cotangents, gathered for its one adjoint (a scan the other way).
    std::unordered_map<const Node*, std::vector<Array>> scan_parts;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const NodePtr& n = *it;
        auto found = parts.find(n.get());
        auto scan_found = scan_parts.find(n.get());
        const bool is_scan = n->kind == NodeKind::Scan;
        if (!active.count(n.get()) ||
            (is_scan ? scan_found == scan_parts.end() : found == parts.end()))
            continue;
        Array ybar;
        if (!is_scan) {
            ybar = total(n, found->second);
            parts.erase(found);
            if (params.count(n.get())) cotangent.emplace(n.get(), ybar);
        }
        if (n->kind == NodeKind::ScanOutput) {
            const Node* scan = n->inputs.at(0).get();
            auto& c = scan_parts[scan];
            c.resize(static_cast<std::size_t>(scan->body->components()));
            c[static_cast<std::size_t>(n->component)] = ybar;
            continue;
        }
        std::vector<bool> wanted;
        bool any = false;
        for (const NodePtr& x : n->inputs) {
            wanted.push_back(active.count(x.get()) > 0);
            any = any || wanted.back();
        }
        if (!any) continue;
        std::vector<Array> contributions = is_scan ? ad::scan_adjoint(n, scan_found->second, wanted)
                                                   : ad::adjoint(n, ybar, wanted);
        for (std::size_t k = 0; k < contributions.size(); ++k) {
            if (!wanted[k] || !contributions[k].valid()) continue;
            const NodePtr& x = n->inputs[k];
            parts[x.get()].push_back(detail::cast_node(contributions[k].node(), x->dtype, loc));
        }
    }

    std::vector<Array> result;
    for (const Array& p : inputs) {
        auto it = cotangent.find(p.node().get());
        result.push_back(it != cotangent.end() ? it->second
                                               : zeros(p.shape(), p.dtype(), p.node()->loc));
    }
    return result;
}

std::vector<Array> grad(const Array& loss, const std::vector<Array>& params, SourceLocation loc) {
    const NodePtr& l = loss.node();
    if (l->shape.rank() != 0)
        throw Error("grad: the loss must have rank 0 but has shape " + l->shape.to_string() +
                    " (created at " + location_string(l->loc) +
                    "); reduce it with sum or mean, or use vjp; at " + location_string(loc));
    if (!is_float(l->dtype))
        throw Error("grad: the loss has dtype " + std::string(dtype_name(l->dtype)) +
                    " (created at " + location_string(l->loc) +
                    "); only float arrays have derivatives; at " + location_string(loc));
    return vjp({loss}, {constant(1.0, l->dtype, loc)}, params, loc);
}

Array grad(const Array& loss, const Array& param, SourceLocation loc) {
    return grad(loss, std::vector<Array>{param}, loc).at(0);
}

} // namespace hedra

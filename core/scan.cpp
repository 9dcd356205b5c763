// scan (scan.hpp): tracing the step on placeholders, cutting its closures out of the traced
// graph so that the body is closed, and the Scan and ScanOutput nodes.
#include "core/scan.hpp"

#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "core/collective.hpp"
#include "core/library.hpp"
#include "core/node_builders.hpp"
#include "core/primitives.hpp"

namespace hedra {
namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

// A closure that stays in the body: computed from constants and index components alone, it is
// as cheap to recompute in every step as to read.
bool inline_closure(const NodePtr& n) {
    for (const NodePtr& m : topological_order({n}))
        if (m->kind == NodeKind::Data || m->kind == NodeKind::Placeholder ||
            m->kind == NodeKind::Scan || m->kind == NodeKind::Reduce || m->memo())
            return false;
    return true;
}

// Moves axis `axis` of `a` to the front (a view).
NodePtr axis_first(const NodePtr& a, int axis, SourceLocation loc) {
    if (axis == 0) return a;
    const int rank = a->shape.rank();
    std::vector<int> order{axis};
    for (int d = 0; d < rank; ++d)
        if (d != axis) order.push_back(d);
    std::vector<Range> ranges;
    std::vector<std::int64_t> m(static_cast<std::size_t>(rank * rank), 0);
    for (int r = 0; r < rank; ++r) {
        ranges.push_back(a->shape[order[static_cast<std::size_t>(r)]]);
        m[static_cast<std::size_t>(order[static_cast<std::size_t>(r)] * rank + r)] = 1;
    }
    return detail::make_view(a, Shape(std::move(ranges)),
                             AffineMap(rank, rank, std::move(m),
                                       std::vector<std::int64_t>(static_cast<std::size_t>(rank))),
                             loc);
}

// Moves the leading axis of `a` to position `axis` (a view).
Array axis_back(const NodePtr& a, int axis, SourceLocation loc) {
    if (axis == 0) return Array(a);
    const int rank = a->shape.rank();
    std::vector<int> order; // result axis r reads input axis order[r]
    for (int d = 1; d <= axis; ++d)
        order.push_back(d);
    order.push_back(0);
    for (int d = axis + 1; d < rank; ++d)
        order.push_back(d);
    std::vector<Range> ranges;
    std::vector<std::int64_t> m(static_cast<std::size_t>(rank * rank), 0);
    for (int r = 0; r < rank; ++r) {
        ranges.push_back(a->shape[order[static_cast<std::size_t>(r)]]);
        m[static_cast<std::size_t>(order[static_cast<std::size_t>(r)] * rank + r)] = 1;
    }
    return Array(
        detail::make_view(a, Shape(std::move(ranges)),
                          AffineMap(rank, rank, std::move(m),
                                    std::vector<std::int64_t>(static_cast<std::size_t>(rank))),
                          loc));
}

Shape without_leading(const Shape& s) {
    std::vector<Range> r(s.ranges().begin() + 1, s.ranges().end());
    return Shape(std::move(r));
}

std::size_t body_hash(const ScanBody& b) {
    std::uint64_t h = 0x7363616e;
    for (const NodePtr& p : b.params)
        h = mix(h, p->hash);
    for (const NodePtr& o : b.outputs)
        h = mix(h, o->hash);
    h = mix(h, static_cast<std::uint64_t>(b.carries));
    h = mix(h, static_cast<std::uint64_t>(b.xs));
    h = mix(h, static_cast<std::uint64_t>(b.steps.size));
    h = mix(h, static_cast<std::uint64_t>(b.steps.param + 1));
    h = mix(h, b.reverse);
    return static_cast<std::size_t>(h);
}

std::string describe(const NodePtr& n) {
    return std::string(dtype_name(n->dtype)) + " " + n->shape.to_string() + " (created at " +
           detail::site(n) + ")";
}

} // namespace

namespace detail {

NodePtr scan_slot(ScanSlot kind, int k, const Shape& shape, DType dtype, SourceLocation loc) {
    auto n = new_node(NodeKind::Placeholder, dtype, shape, {}, loc);
    n->id = fresh_node_id();
    n->name = std::string(kind == ScanSlot::Carry ? "carry"
                          : kind == ScanSlot::X   ? "x"
                                                  : "closure") +
              std::to_string(k);
    return intern(std::move(n));
}

NodePtr make_scan_node(const std::vector<NodePtr>& params, const std::vector<NodePtr>& outputs,
                       const std::vector<NodePtr>& inits, const std::vector<NodePtr>& xs,
                       const Range& steps, bool reverse, SourceLocation loc) {
    HEDRA_INTERNAL_CHECK(params.size() == inits.size() + xs.size(), "scan: a slot per input");
    // The nodes that depend on a slot are the body; the others it reads are closures.
    std::unordered_set<const Node*> slots;
    for (const NodePtr& p : params)
        slots.insert(p.get());
    std::vector<NodePtr> order = topological_order(outputs);
    std::unordered_set<const Node*> varying;
    for (const NodePtr& n : order) {
        bool v = slots.count(n.get()) > 0;
        for (const NodePtr& in : n->inputs)
            v = v || varying.count(in.get());
        if (v) varying.insert(n.get());
    }
    auto body = std::make_shared<ScanBody>();
    body->params = params;
    body->carries = static_cast<int>(inits.size());
    body->xs = static_cast<int>(xs.size());
    body->steps = steps;
    body->reverse = reverse;
    std::vector<NodePtr> closures;
    std::unordered_map<const Node*, NodePtr> rebuilt;
    std::function<NodePtr(const NodePtr&)> closure_slot = [&](const NodePtr& n) -> NodePtr {
        if (auto it = rebuilt.find(n.get()); it != rebuilt.end()) return it->second;
        NodePtr slot = n;
        if (n->kind == NodeKind::View && !n->memo() && !inline_closure(n)) {
            // Views move no data: the body views the array itself (a weight read transposed
            // or broadcast is not copied into that shape).
            const NodePtr& base = n->inputs.at(0);
            NodePtr base_slot = closure_slot(base);
            slot = base_slot == base ? n : intern(copy_node_with(*n, {base_slot}));
        } else if (!inline_closure(n)) {
            slot = scan_slot(ScanSlot::Closure, static_cast<int>(closures.size()), n->shape,
                             n->dtype, n->loc);
            closures.push_back(n);
            body->params.push_back(slot);
        }
        rebuilt.emplace(n.get(), slot);
        return slot;
    };
    for (const NodePtr& n : order) {
        if (!varying.count(n.get()) || slots.count(n.get())) continue;
        std::vector<NodePtr> inputs;
        bool changed = false;
        for (const NodePtr& in : n->inputs) {
            NodePtr r = varying.count(in.get())
                            ? (rebuilt.count(in.get()) ? rebuilt.at(in.get()) : in)
                            : closure_slot(in);
            changed = changed || r != in;
            inputs.push_back(std::move(r));
        }
        rebuilt.emplace(n.get(), changed ? intern(copy_node_with(*n, std::move(inputs))) : n);
    }
    for (const NodePtr& out : outputs) {
        if (slots.count(out.get()))
            body->outputs.push_back(out);
        else if (varying.count(out.get()))
            body->outputs.push_back(rebuilt.at(out.get()));
        else
            body->outputs.push_back(closure_slot(out));
    }
    body->hash = body_hash(*body);
    std::vector<NodePtr> inputs = inits;
    inputs.insert(inputs.end(), xs.begin(), xs.end());
    inputs.insert(inputs.end(), closures.begin(), closures.end());
    auto n = new_node(NodeKind::Scan, DType::F32, Shape(), std::move(inputs), loc);
    n->body = std::move(body);
    return intern(std::move(n));
}

std::size_t scan_body_hash(const ScanBody& body) {
    return body_hash(body);
}

NodePtr extend_scan(const NodePtr& scan, const std::vector<NodePtr>& extra) {
    auto body = std::make_shared<ScanBody>(*scan->body);
    body->outputs.insert(body->outputs.end(), extra.begin(), extra.end());
    body->hash = body_hash(*body);
    auto n = new_node(NodeKind::Scan, scan->dtype, scan->shape, scan->inputs, scan->loc);
    n->body = std::move(body);
    return intern(std::move(n));
}

int extended_component(const ScanBody& scan, const ScanBody& larger, int c) {
    return scan.component_kind(c) == ScanBody::Component::Final ? c + larger.ys() - scan.ys() : c;
}

NodePtr scan_output(const NodePtr& scan, int c, SourceLocation loc) {
    const ScanBody& b = *scan->body;
    HEDRA_INTERNAL_CHECK(c >= 0 && c < b.components(), "scan_output: no such component");
    NodePtr value;
    std::vector<Range> ranges;
    switch (b.component_kind(c)) {
    case ScanBody::Component::States:
        value = b.params[static_cast<std::size_t>(c)];
        ranges.push_back(b.steps);
        break;
    case ScanBody::Component::Ys:
        value = b.outputs[static_cast<std::size_t>(c)];
        ranges.push_back(b.steps);
        break;
    case ScanBody::Component::Final:
        value = b.params[static_cast<std::size_t>(c - b.carries - b.ys())];
        break;
    }
    for (const Range& r : value->shape.ranges())
        ranges.push_back(r);
    auto n = new_node(NodeKind::ScanOutput, value->dtype, Shape(std::move(ranges)), {scan}, loc);
    n->component = c;
    return intern(std::move(n));
}

} // namespace detail

namespace {

// Stacked results (the scan axis first) at `axis` (from the end when negative).
Array stacked_at(const NodePtr& n, int axis, const std::string& at, SourceLocation loc) {
    const int rank = n->shape.rank();
    const int a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank)
        throw Error("scan: axis " + std::to_string(axis) +
                    " cannot place the scan axis in a "
                    "stacked result of rank " +
                    std::to_string(rank) + " (" + describe(n) +
                    "); use an axis every stacked output has, or 0" + at);
    return axis_back(n, a, loc);
}

// ScanOptions::checkpoint: an outer scan over segments whose step is an inner scan over one
// segment's steps. The outer scan's adjoint stores its carries (one per segment) and recomputes
// the inner scan from them, whose own adjoint stores one segment's worth.
ScanResult checkpointed_scan(const ScanFunction& f, const std::vector<Array>& init,
                             const std::vector<NodePtr>& xs_first, const Range& steps, int axis,
                             const ScanOptions& options, SourceLocation loc) {
    const std::string at = "; scan at " + location_string(loc);
    const std::int64_t k = options.checkpoint, T = steps.size;
    if (steps.is_dynamic() || T % k != 0)
        throw Error("scan: checkpoint " + std::to_string(k) +
                    " needs a static number of steps "
                    "that it divides; the scan has " +
                    steps.to_string() + " steps; choose a divisor of the length" + at);
    std::vector<Array> segments;
    for (const NodePtr& x : xs_first)
        segments.push_back(unflatten(rebase(Array(x), loc), 0, {T / k, k}, loc));
    ScanOptions inner = options, outer = options;
    inner.checkpoint = outer.checkpoint = 0;
    inner.length = k;
    outer.length = T / k;
    int ys = 0;
    ScanResult o = scan(
        [&](const std::vector<Array>& c, const std::vector<Array>& seg) {
            ScanResult r = scan(f, c, seg, 0, inner, loc);
            ys = static_cast<int>(r.ys.size());
            std::vector<Array> out = r.ys;
            out.insert(out.end(), r.states.begin(), r.states.end());
            return ScanStep{r.carries, out};
        },
        init, segments, 0, outer, loc);
    ScanResult result;
    result.carries = o.carries;
    for (std::size_t j = 0; j < o.ys.size(); ++j) {
        Array whole = flatten(o.ys[j], 0, 1, loc); // (T/k, k, ...) -> (T, ...)
        (static_cast<int>(j) < ys ? result.ys : result.states)
            .push_back(stacked_at(whole.node(), axis, at, loc));
    }
    return result;
}

} // namespace

ScanResult scan(const ScanFunction& f, const std::vector<Array>& init, const std::vector<Array>& xs,
                int axis, const ScanOptions& options, SourceLocation loc) {
    const std::string at = "; scan at " + location_string(loc);
    std::vector<NodePtr> inits, xs_first;
    Range steps = range(options.length < 0 ? 0 : options.length);
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const NodePtr& x = xs[i].node();
        if (x->shape.rank() == 0)
            throw Error("scan: scanned array " + std::to_string(i) + " is " + describe(x) +
                        ", of rank 0; a scanned array needs the scan axis " + std::to_string(axis) +
                        at);
        int a = detail::normalize_axis("scan", axis, x->shape.rank(), x->shape, x);
        const Range& r = x->shape[a];
        if (i == 0) {
            steps = r;
        } else if (r.size != steps.size || r.param != steps.param) {
            throw Error("scan: the scanned arrays differ in length along the scan axis: array 0 "
                        "has " +
                        steps.to_string() + ", array " + std::to_string(i) + " (" + describe(x) +
                        ") has " + r.to_string() + " along axis " + std::to_string(axis) + at);
        }
        xs_first.push_back(axis_first(x, a, loc));
    }
    if (xs.empty() && options.length < 0)
        throw Error("scan: no scanned arrays and no ScanOptions::length; give the number of "
                    "steps" +
                    at);
    if (steps.size == 0)
        throw Error("scan: the scan has no steps (the scan axis is empty); a scan runs at least "
                    "once" +
                    at);
    if (options.checkpoint > 1 && options.checkpoint < steps.size)
        return checkpointed_scan(f, init, xs_first, steps, axis, options, loc);
    // The stacked outputs keep the scanned arrays' range along the scan axis, counted from 0.
    Range stacked = steps.is_dynamic() ? steps : range(steps.size);
    std::vector<NodePtr> params;
    std::vector<Array> carry_slots, x_slots;
    for (std::size_t k = 0; k < init.size(); ++k) {
        const NodePtr& c = init[k].node();
        inits.push_back(c);
        params.push_back(detail::scan_slot(detail::ScanSlot::Carry, static_cast<int>(k), c->shape,
                                           c->dtype, loc));
        carry_slots.emplace_back(params.back());
    }
    for (std::size_t i = 0; i < xs_first.size(); ++i) {
        const NodePtr& x = xs_first[i];
        params.push_back(detail::scan_slot(detail::ScanSlot::X, static_cast<int>(i),
                                           without_leading(x->shape), x->dtype, loc));
        x_slots.emplace_back(params.back());
    }
    ScanStep step = f(carry_slots, x_slots);
    if (step.carries.size() != init.size())
        throw Error("scan: the step returned " + std::to_string(step.carries.size()) +
                    " carries but the scan has " + std::to_string(init.size()) +
                    " initial carries; return one new value per carry, in order" + at);
    std::vector<NodePtr> outputs;
    for (std::size_t k = 0; k < init.size(); ++k) {
        const NodePtr& c = step.carries[k].node();
        if (!(c->shape == inits[k]->shape) || c->dtype != inits[k]->dtype)
            throw Error("scan: the step changes carry " + std::to_string(k) + " from " +
                        describe(inits[k]) + " to " + describe(c) +
                        "; a carry keeps its shape and dtype from step to step (broadcast or "
                        "cast the new value, or start from an initial value of that shape)" +
                        at);
        outputs.push_back(c);
    }
    for (const Array& y : step.ys)
        outputs.push_back(y.node());
    std::vector<NodePtr> stacked_xs = xs_first;
    // Scanned arrays whose range along the axis is not [0, T) are read in counter space: view
    // them on [0, T) so that step t is counter t everywhere.
    for (NodePtr& x : stacked_xs) {
        if (x->shape[0] == stacked) continue;
        std::vector<Range> r = x->shape.ranges();
        r[0] = stacked;
        const int rank = x->shape.rank();
        std::vector<std::int64_t> m(static_cast<std::size_t>(rank * rank), 0);
        for (int d = 0; d < rank; ++d)
            m[static_cast<std::size_t>(d * rank + d)] = 1;
        x = detail::make_view(x, Shape(std::move(r)),
                              AffineMap(rank, rank, std::move(m),
                                        std::vector<std::int64_t>(static_cast<std::size_t>(rank))),
                              loc);
    }
    NodePtr node =
        detail::make_scan_node(params, outputs, inits, stacked_xs, stacked, options.reverse, loc);
    const ScanBody& b = *node->body;
    if (has_collectives(b.outputs))
        throw Error("scan: the step has a collective (all_reduce or copy_to_group); a loop's "
                    "body runs inside one kernel, so reduce across ranks outside the scan" +
                    at);
    ScanResult result;
    for (int c = 0; c < b.carries; ++c) {
        result.states.push_back(stacked_at(detail::scan_output(node, c, loc), axis, at, loc));
        result.carries.emplace_back(detail::scan_output(node, b.carries + b.ys() + c, loc));
    }
    for (int y = 0; y < b.ys(); ++y)
        result.ys.push_back(
            stacked_at(detail::scan_output(node, b.carries + y, loc), axis, at, loc));
    return result;
}

std::pair<Array, Array>
scan(const std::function<std::pair<Array, Array>(const Array&, const Array&)>& f, const Array& init,
     const Array& xs, int axis, const ScanOptions& options, SourceLocation loc) {
    ScanResult r = scan(
        [&](const std::vector<Array>& c, const std::vector<Array>& x) {
            auto [carry, y] = f(c.at(0), x.at(0));
            return ScanStep{{carry}, {y}};
        },
        {init}, {xs}, axis, options, loc);
    return {r.carries.at(0), r.ys.at(0)};
}

} // namespace hedra

// The adjoint of a scan (scan_adjoint.hpp): a scan in the other direction. Its carries are the
// cotangents of the forward carries and one accumulator per differentiated closure; it scans
// the forward carries entering each step (the forward scan's States), the forward xs and the
// cotangents of the stacked outputs. Its step recomputes the forward step from the stored
// carry and differentiates it (vjp), so only the carries are stored between the sweeps.
#include "ad/scan_adjoint.hpp"

#include <unordered_map>
#include <unordered_set>

#include "ad/grad.hpp"
#include "core/library.hpp"
#include "core/node_builders.hpp"
#include "core/primitives.hpp"
#include "core/scan.hpp"

namespace hedra::ad {
namespace {

// `outputs` rebuilt with every node in `replace` swapped for its replacement.
std::vector<NodePtr> substitute(const std::vector<NodePtr>& outputs,
                                const std::unordered_map<const Node*, NodePtr>& replace,
                                std::unordered_map<const Node*, NodePtr>* image = nullptr) {
    return detail::rebuild_graph(
        outputs,
        [&](const NodePtr& n, const std::unordered_map<const Node*, NodePtr>&) -> NodePtr {
            auto it = replace.find(n.get());
            return it != replace.end() ? it->second : nullptr;
        },
        image);
}

} // namespace

std::vector<Array> scan_adjoint(const NodePtr& scan, const std::vector<Array>& cotangents,
                                const std::vector<bool>& wanted) {
    const ScanBody& b = *scan->body;
    const SourceLocation loc = scan->loc;
    const int C = b.carries, X = b.xs, M = b.closures(), Y = b.ys();
    auto cot = [&](int c) -> const Array* {
        return static_cast<std::size_t>(c) < cotangents.size() &&
                       cotangents[static_cast<std::size_t>(c)].valid()
                   ? &cotangents[static_cast<std::size_t>(c)]
                   : nullptr;
    };
    auto input = [&](int k) -> const NodePtr& { return scan->inputs[static_cast<std::size_t>(k)]; };
    std::vector<int> carries; // the float carries: the others have no cotangent
    for (int k = 0; k < C; ++k)
        if (is_float(b.params[static_cast<std::size_t>(k)]->dtype)) carries.push_back(k);
    std::vector<int> closures; // the closures whose gradient is wanted
    for (int m = 0; m < M; ++m)
        if (wanted[static_cast<std::size_t>(C + X + m)] && is_float(input(C + X + m)->dtype))
            closures.push_back(m);
    std::vector<int> dys, dstates;
    for (int j = 0; j < Y; ++j)
        if (cot(C + j) && is_float(b.outputs[static_cast<std::size_t>(C + j)]->dtype))
            dys.push_back(j);
    for (int k : carries)
        if (cot(k)) dstates.push_back(k);

    // The reverse scan's slots: carries (carry cotangents, closure accumulators), then xs
    // (forward carries entering the step, forward xs, output cotangents, state cotangents).
    std::vector<NodePtr> params, inits, xs;
    auto slot = [&](detail::ScanSlot kind, const Shape& shape, DType dtype) {
        params.push_back(
            detail::scan_slot(kind, static_cast<int>(params.size()), shape, dtype, loc));
        return params.back();
    };
    std::vector<NodePtr> dc, acc, s, x, dy, dstate;
    for (int k : carries) {
        const NodePtr& p = b.params[static_cast<std::size_t>(k)];
        dc.push_back(slot(detail::ScanSlot::Carry, p->shape, p->dtype));
        const Array* f = cot(C + Y + k);
        inits.push_back(f ? f->node() : zeros(p->shape, p->dtype, loc).node());
    }
    for (int m : closures) {
        const NodePtr& c = input(C + X + m);
        acc.push_back(slot(detail::ScanSlot::Carry, c->shape, c->dtype));
        inits.push_back(zeros(c->shape, c->dtype, loc).node());
    }
    for (int k = 0; k < C; ++k) {
        const NodePtr& p = b.params[static_cast<std::size_t>(k)];
        s.push_back(slot(detail::ScanSlot::X, p->shape, p->dtype));
        xs.push_back(detail::scan_output(scan, k, loc));
    }
    for (int i = 0; i < X; ++i) {
        const NodePtr& p = b.params[static_cast<std::size_t>(C + i)];
        x.push_back(slot(detail::ScanSlot::X, p->shape, p->dtype));
        xs.push_back(input(C + i));
    }
    for (int j : dys) {
        const NodePtr& o = b.outputs[static_cast<std::size_t>(C + j)];
        dy.push_back(slot(detail::ScanSlot::X, o->shape, o->dtype));
        xs.push_back(cot(C + j)->node());
    }
    for (int k : dstates) {
        const NodePtr& p = b.params[static_cast<std::size_t>(k)];
        dstate.push_back(slot(detail::ScanSlot::X, p->shape, p->dtype));
        xs.push_back(cot(k)->node());
    }

    // The forward step on the stored carry and this step's x, its closures read from outside.
    std::unordered_map<const Node*, NodePtr> replace;
    for (int k = 0; k < C; ++k)
        replace.emplace(b.params[static_cast<std::size_t>(k)].get(),
                        s[static_cast<std::size_t>(k)]);
    for (int i = 0; i < X; ++i)
        replace.emplace(b.params[static_cast<std::size_t>(C + i)].get(),
                        x[static_cast<std::size_t>(i)]);
    for (int m = 0; m < M; ++m)
        replace.emplace(b.params[static_cast<std::size_t>(C + X + m)].get(), input(C + X + m));
    std::unordered_map<const Node*, NodePtr> image; // forward step node -> its recomputation
    std::vector<NodePtr> step = substitute(b.outputs, replace, &image);

    std::vector<Array> outs, cots, ins;
    for (std::size_t q = 0; q < carries.size(); ++q) {
        outs.emplace_back(step[static_cast<std::size_t>(carries[q])]);
        cots.emplace_back(dc[q]);
    }
    for (std::size_t q = 0; q < dys.size(); ++q) {
        outs.emplace_back(step[static_cast<std::size_t>(C + dys[q])]);
        cots.emplace_back(dy[q]);
    }
    for (int k : carries)
        ins.emplace_back(s[static_cast<std::size_t>(k)]);
    for (int i = 0; i < X; ++i)
        if (is_float(x[static_cast<std::size_t>(i)]->dtype))
            ins.emplace_back(x[static_cast<std::size_t>(i)]);
    for (int m : closures)
        ins.emplace_back(input(C + X + m));
    std::vector<Array> grads = vjp(outs, cots, ins, loc);

    // The reverse step: carry cotangents one step back, accumulated closure gradients, and the
    // xs' cotangents as outputs.
    std::vector<NodePtr> new_carries, ys;
    std::size_t g = 0;
    for (std::size_t q = 0; q < carries.size(); ++q) {
        Array d = grads[g++];
        for (std::size_t r = 0; r < dstates.size(); ++r)
            if (dstates[r] == carries[q]) d = d + Array(dstate[r]);
        new_carries.push_back(detail::cast_node(d.node(), dc[q]->dtype, loc));
    }
    std::vector<int> float_xs;
    for (int i = 0; i < X; ++i)
        if (is_float(x[static_cast<std::size_t>(i)]->dtype)) {
            float_xs.push_back(i);
            ys.push_back(grads[g++].node());
        }
    for (std::size_t q = 0; q < closures.size(); ++q)
        new_carries.push_back(
            detail::cast_node((Array(acc[q]) + grads[g++]).node(), acc[q]->dtype, loc));
    std::vector<NodePtr> outputs = new_carries;
    outputs.insert(outputs.end(), ys.begin(), ys.end());

    // The forward step's reductions (its contractions) and its sigmoids and tanhs that the
    // reverse step reads are stored by the forward scan as outputs of its own, not recomputed:
    // the scan that computes the forward values then also computes these (extend_scan;
    // sched::merge_scans runs one loop). An LSTM's backward step then evaluates no gate again.
    auto activation = [](const Node& f) {
        return f.kind == NodeKind::Map && f.expr &&
               (f.expr->op == ScalarOp::Sigmoid || f.expr->op == ScalarOp::Tanh);
    };
    std::vector<NodePtr> saved;
    std::unordered_map<const Node*, NodePtr> to_slot;
    {
        std::unordered_set<const Node*> reached;
        for (const NodePtr& n : topological_order(outputs))
            reached.insert(n.get());
        for (const NodePtr& f : topological_order(b.outputs)) {
            if ((f->kind != NodeKind::Reduce && !activation(*f)) || !is_float(f->dtype)) continue;
            auto it = image.find(f.get());
            if (it == image.end() || !reached.count(it->second.get())) continue;
            saved.push_back(f);
            to_slot.emplace(it->second.get(), slot(detail::ScanSlot::X, f->shape, f->dtype));
        }
    }
    if (!saved.empty()) {
        const NodePtr forward = detail::extend_scan(scan, saved);
        outputs = substitute(outputs, to_slot);
        for (int k = 0; k < C; ++k)
            xs[static_cast<std::size_t>(k)] = detail::scan_output(forward, k, loc);
        for (std::size_t r = 0; r < saved.size(); ++r)
            xs.push_back(detail::scan_output(forward, C + Y + static_cast<int>(r), loc));
    }
    NodePtr reverse = detail::make_scan_node(params, outputs, inits, xs, b.steps, !b.reverse, loc);
    const ScanBody& rb = *reverse->body;

    std::vector<Array> result(scan->inputs.size());
    for (std::size_t q = 0; q < carries.size(); ++q)
        if (wanted[static_cast<std::size_t>(carries[q])])
            result[static_cast<std::size_t>(carries[q])] = Array(
                detail::scan_output(reverse, rb.carries + rb.ys() + static_cast<int>(q), loc));
    for (std::size_t q = 0; q < float_xs.size(); ++q)
        if (wanted[static_cast<std::size_t>(C + float_xs[q])])
            result[static_cast<std::size_t>(C + float_xs[q])] =
                Array(detail::scan_output(reverse, rb.carries + static_cast<int>(q), loc));
    for (std::size_t q = 0; q < closures.size(); ++q)
        result[static_cast<std::size_t>(C + X + closures[q])] = Array(detail::scan_output(
            reverse, rb.carries + rb.ys() + static_cast<int>(carries.size() + q), loc));
    return result;
}

} // namespace hedra::ad

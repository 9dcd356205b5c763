// The shrinker (see fuzz_shrink.hpp).
#include "fuzz/lib/fuzz_shrink.hpp"

#include <algorithm>
#include <cmath>

#include "fuzz/lib/fuzz_data.hpp"

namespace hedra::fuzz {

namespace {

// The expression node number `n` in preorder (0 = the root), or nullptr.
Expr* nth_node(Expr& e, int& n) {
    if (n-- == 0) return &e;
    for (Expr& a : e.args)
        if (Expr* found = nth_node(a, n)) return found;
    return nullptr;
}

bool uses_input(const Expr& e, int k) {
    if (e.kind == Expr::Kind::Input) return e.input == k;
    return std::any_of(e.args.begin(), e.args.end(),
                       [k](const Expr& a) { return uses_input(a, k); });
}

void renumber_inputs_above(Expr& e, int k) {
    if (e.kind == Expr::Kind::Input && e.input > k) --e.input;
    for (Expr& a : e.args)
        renumber_inputs_above(a, k);
}

// Expressions with one node replaced by one of its arguments or by an operand.
std::vector<Expr> simpler(const Expr& expr, int operands) {
    std::vector<Expr> out;
    int nodes = expr.size();
    for (int n = 0; n < nodes; ++n) {
        Expr copy = expr;
        int idx = n;
        Expr* node = nth_node(copy, idx);
        std::vector<Expr> replacements = node->args;
        for (int k = 0; k < operands; ++k)
            if (!(node->kind == Expr::Kind::Input && node->input == k))
                replacements.push_back(Expr::in(k));
        for (const Expr& r : replacements) {
            Expr e = expr;
            int j = n;
            *nth_node(e, j) = r;
            out.push_back(e);
        }
    }
    return out;
}

// Uses of op `from` (inputs and outputs) redirected to op `to`.
FuzzProgram forward(const FuzzProgram& p, int from, int to) {
    FuzzProgram q = p;
    for (std::size_t i = static_cast<std::size_t>(from) + 1; i < q.ops.size(); ++i)
        for (int& k : q.ops[i].inputs)
            if (k == from) k = to;
    for (int& o : q.outputs)
        if (o == from) o = to;
    return q;
}

std::vector<FuzzProgram> output_edits(const FuzzProgram& p) {
    std::vector<FuzzProgram> out;
    for (std::size_t i = 0; i < p.ops.size(); ++i) { // a sub-program: one op as the only output
        if (p.ops[i].kind == OpKind::Data || p.outputs == std::vector<int>{static_cast<int>(i)})
            continue;
        FuzzProgram q = p;
        q.outputs = {static_cast<int>(i)};
        out.push_back(q);
    }
    for (std::size_t k = 0; p.outputs.size() > 1 && k < p.outputs.size(); ++k) {
        FuzzProgram q = p;
        q.outputs.erase(q.outputs.begin() + static_cast<std::ptrdiff_t>(k));
        out.push_back(q);
    }
    return out;
}

std::vector<FuzzProgram> freeze_edits(const FuzzProgram& p) {
    std::vector<FuzzProgram> out;
    for (int i = static_cast<int>(p.ops.size()) - 1; i >= 0; --i) {
        if (p.ops[static_cast<std::size_t>(i)].kind == OpKind::Data) continue;
        if (std::find(p.outputs.begin(), p.outputs.end(), i) != p.outputs.end()) continue;
        if (auto q = freeze_op(p, i)) out.push_back(*q);
    }
    return out;
}

std::vector<FuzzProgram> leaf_edits(const FuzzProgram& p) {
    std::vector<FuzzProgram> out;
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        const Op& op = p.ops[i];
        if (op.kind != OpKind::Data) continue;
        if (op.placeholder) {
            FuzzProgram q = p;
            q.ops[i].placeholder = false;
            out.push_back(q);
        }
        if (op.values.empty() && op.shape.size() > 0 && op.shape.size() <= 256) {
            FuzzProgram q = p; // explicit values print better; then simpler ones
            q.ops[i].values = op_values(op);
            std::vector<double> v = q.ops[i].values;
            for (std::size_t k = 0; k < v.size(); ++k)
                if (std::isfinite(v[k])) v[k] = std::trunc(v[k]);
            FuzzProgram r = p;
            r.ops[i].values = v;
            out.push_back(r);
            out.push_back(q);
        }
    }
    return out;
}

std::vector<FuzzProgram> forward_edits(const FuzzProgram& p, const std::vector<Array>& values) {
    std::vector<FuzzProgram> out;
    for (std::size_t i = 0; i < p.ops.size(); ++i)
        for (int k : p.ops[i].inputs)
            if (values[static_cast<std::size_t>(k)].shape() == values[i].shape() &&
                values[static_cast<std::size_t>(k)].dtype() == values[i].dtype())
                out.push_back(forward(p, static_cast<int>(i), k));
    return out;
}

std::vector<FuzzProgram> expression_edits(const FuzzProgram& p) {
    std::vector<FuzzProgram> out;
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        const Op& op = p.ops[i];
        if (op.kind == OpKind::Reduce || op.kind == OpKind::CustomReduce) {
            for (std::size_t a = 0; op.axes.size() > 1 && a < op.axes.size(); ++a) {
                FuzzProgram q = p;
                q.ops[i].axes.erase(q.ops[i].axes.begin() + static_cast<std::ptrdiff_t>(a));
                out.push_back(q);
            }
            if (op.keepdims) {
                FuzzProgram q = p;
                q.ops[i].keepdims = false;
                out.push_back(q);
            }
        }
        if (op.kind != OpKind::Map) continue;
        for (std::size_t k = 0; k < op.operands.size(); ++k) // unused operands
            if (!uses_input(op.expr, static_cast<int>(k)) && op.operands.size() > 1) {
                FuzzProgram q = p;
                Op& m = q.ops[i];
                int slot = m.operands[k].slot;
                m.operands.erase(m.operands.begin() + static_cast<std::ptrdiff_t>(k));
                renumber_inputs_above(m.expr, static_cast<int>(k));
                if (slot >= 0 &&
                    std::none_of(m.operands.begin(), m.operands.end(),
                                 [&](const MapOperand& o) { return o.slot == slot; })) {
                    m.inputs.erase(m.inputs.begin() + slot); // the op no longer reads it
                    for (MapOperand& o : m.operands)
                        if (o.slot > slot) --o.slot;
                }
                out.push_back(q);
            }
        for (const Expr& e : simpler(op.expr, static_cast<int>(op.operands.size()))) {
            FuzzProgram q = p;
            q.ops[i].expr = e;
            out.push_back(q);
        }
    }
    return out;
}

// Op `op` inserted at index `at`, the ops from there on moved up by one.
FuzzProgram insert_op(const FuzzProgram& p, int at, const Op& op) {
    FuzzProgram q = p;
    for (Op& o : q.ops)
        for (int& k : o.inputs)
            if (k >= at) ++k;
    for (int& o : q.outputs)
        if (o >= at) ++o;
    q.ops.insert(q.ops.begin() + at, op);
    return q;
}

// Scans with fewer steps (a prefix of xs along the scan axis), replaced by their initial
// carry, without their closure or extra, forwards, and with simpler step expressions.
std::vector<FuzzProgram> scan_edits(const FuzzProgram& p, const std::vector<Array>& values) {
    std::vector<FuzzProgram> out;
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        const Op& op = p.ops[i];
        if (op.kind != OpKind::Scan) continue;
        const int at = static_cast<int>(i);
        const Array& xs = values.at(static_cast<std::size_t>(op.inputs[0]));
        const int axis = op.axis < 0 ? op.axis + xs.rank() : op.axis;
        const Range along = xs.shape()[axis];
        for (std::int64_t steps : {std::int64_t{1}, (along.size + 1) / 2}) {
            if (steps >= along.size) continue;
            std::vector<Range> r = xs.shape().ranges();
            r[static_cast<std::size_t>(axis)] = Range(along.start, along.step, steps);
            Op sel;
            sel.kind = OpKind::ReshapeShape;
            sel.inputs = {op.inputs[0]};
            sel.shape = Shape(r);
            FuzzProgram q = insert_op(p, at, sel);
            q.ops[i + 1].inputs[0] = at;
            out.push_back(q);
        }
        const int init = op.inputs.at(static_cast<std::size_t>(1 + op.component));
        if (op.scan_value != ScanValue::Carry) { // the initial carry, broadcast along the steps
            FuzzProgram q = p;
            Op b;
            b.kind = OpKind::BroadcastTo;
            b.inputs = {init};
            b.shape = values[i].shape();
            q.ops[i] = b;
            out.push_back(q);
        }
        if (op.reverse) {
            FuzzProgram q = p;
            q.ops[i].reverse = false;
            out.push_back(q);
        }
        const int n = scan_operands(op);
        auto unused = [&](int k) {
            return std::none_of(op.step.begin(), op.step.end(),
                                [k](const Expr& e) { return uses_input(e, k); });
        };
        if (op.extra != ScanExtra::None && unused(n - 1)) {
            FuzzProgram q = p;
            if (op.extra == ScanExtra::Matmul) q.ops[i].inputs.pop_back();
            q.ops[i].extra = ScanExtra::None;
            out.push_back(q);
        }
        const int closure = op.carries + 1;
        if (op.closure && unused(closure)) {
            FuzzProgram q = p;
            Op& s = q.ops[i];
            s.closure = false;
            s.inputs.erase(s.inputs.begin() + closure);
            for (Expr& e : s.step)
                renumber_inputs_above(e, closure);
            out.push_back(q);
        }
        for (std::size_t k = 0; k < op.step.size(); ++k)
            for (const Expr& e : simpler(op.step[k], n)) {
                FuzzProgram q = p;
                q.ops[i].step[k] = e;
                out.push_back(q);
            }
    }
    return out;
}

} // namespace

std::optional<FuzzProgram> freeze_op(const FuzzProgram& p, int i) {
    try {
        BuiltProgram b = build(p);
        ComputeOptions ref;
        ref.backend = "reference";
        const Array& a = b.values.at(static_cast<std::size_t>(i));
        HostArray h = compile({a}, b.placeholders, ref)(b.inputs).at(0);
        FuzzProgram q = p;
        Op d;
        d.kind = OpKind::Data;
        d.shape = a.shape();
        d.dtype = a.dtype();
        d.values = h.to_doubles();
        q.ops[static_cast<std::size_t>(i)] = d;
        return q;
    } catch (const Error&) {
        return std::nullopt;
    }
}

FuzzProgram shrink(const FuzzProgram& failing, const FailurePredicate& still_fails,
                   int max_attempts, ShrinkStats* stats) {
    ShrinkStats local;
    ShrinkStats& s = stats ? *stats : local;
    FuzzProgram cur = without_dead_ops(failing);
    bool progress = true;
    while (progress && s.attempts < max_attempts) {
        progress = false;
        for (int phase = 0; phase < 6 && !progress; ++phase) {
            std::vector<FuzzProgram> candidates;
            switch (phase) {
            case 0:
                candidates = output_edits(cur);
                break;
            case 1:
                candidates = freeze_edits(cur);
                break;
            case 2:
                try {
                    candidates = forward_edits(cur, build(cur).values);
                } catch (const Error&) {
                }
                break;
            case 3:
                candidates = expression_edits(cur);
                break;
            case 4:
                try {
                    candidates = scan_edits(cur, build(cur).values);
                } catch (const Error&) {
                }
                break;
            default:
                candidates = leaf_edits(cur);
                break;
            }
            for (const FuzzProgram& c : candidates) {
                if (s.attempts >= max_attempts) break;
                FuzzProgram q = without_dead_ops(c);
                ++s.attempts;
                if (still_fails(q)) {
                    cur = q;
                    ++s.accepted;
                    progress = true;
                    break;
                }
            }
        }
    }
    return cur;
}

} // namespace hedra::fuzz

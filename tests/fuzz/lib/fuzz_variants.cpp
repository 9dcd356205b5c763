// Near-identical variants of a program (see fuzz_variants.hpp).
#include "fuzz/lib/fuzz_variants.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "fuzz/lib/fuzz_analysis.hpp"
#include "fuzz/lib/fuzz_data.hpp"

namespace hedra::fuzz {

namespace {

// The literals of an expression, in preorder.
void literals(Expr& e, std::vector<Expr*>& out) {
    if (e.kind == Expr::Kind::Literal) out.push_back(&e);
    for (Expr& a : e.args)
        literals(a, out);
}

void arithmetic(Expr& e, std::vector<Expr*>& out) {
    static const std::vector<ScalarOp> ops = {ScalarOp::Add, ScalarOp::Sub, ScalarOp::Mul,
                                              ScalarOp::Min, ScalarOp::Max};
    if (e.kind == Expr::Kind::Binary && std::find(ops.begin(), ops.end(), e.op) != ops.end())
        out.push_back(&e);
    for (Expr& a : e.args)
        arithmetic(a, out);
}

double changed(double v) {
    return std::isfinite(v) ? v + 1.0 : 0.5;
}

// One edit of op `op`; an empty description when the op has nothing to change.
std::string edit(Op& op, std::mt19937_64& rng) {
    auto coin = [&] { return rng() % 2 == 0; };
    switch (op.kind) {
    case OpKind::Data:
        if (op.values.empty())
            op.seed = rng() >> 1;
        else
            for (double& v : op.values)
                v = changed(v);
        return "leaf values";
    case OpKind::Constant:
    case OpKind::Full:
    case OpKind::Pad:
        op.value = changed(op.value);
        return "value";
    case OpKind::Iota:
        if (op.shape.rank() < 2) return "";
        op.axis = (op.axis + 1) % op.shape.rank();
        return "iota axis";
    case OpKind::Map: {
        std::vector<Expr*> lits, ariths;
        literals(op.expr, lits);
        arithmetic(op.expr, ariths);
        if (!lits.empty() && (ariths.empty() || coin())) {
            Expr* l = lits[rng() % lits.size()];
            l->value = l->literal == Expr::Literal::Bool ? 1.0 - l->value : changed(l->value);
            return "literal";
        }
        if (!ariths.empty()) {
            Expr* b = ariths[rng() % ariths.size()];
            b->op = b->op == ScalarOp::Add   ? ScalarOp::Sub
                    : b->op == ScalarOp::Sub ? ScalarOp::Mul
                    : b->op == ScalarOp::Mul ? ScalarOp::Add
                    : b->op == ScalarOp::Min ? ScalarOp::Max
                                             : ScalarOp::Min;
            return "operation";
        }
        for (MapOperand& m : op.operands)
            if (m.slot < 0) {
                m.value = changed(m.value);
                return "literal operand";
            }
        return "";
    }
    case OpKind::ReshapeTransform: {
        std::vector<TransformAxis> outs = op.transform->outputs();
        if (outs.empty()) return "";
        outs[rng() % outs.size()].offset += coin() ? 1 : -1;
        op.transform = Transform(op.transform->input_rank(), outs, op.transform->input_pins());
        return "transform offset";
    }
    case OpKind::View: {
        if (op.map.out_rank() == 0) return "";
        std::vector<std::int64_t> off = op.map.offsets();
        off[rng() % off.size()] += coin() ? 1 : -1;
        op.map = AffineMap(op.map.in_rank(), op.map.out_rank(), op.map.matrix(), off);
        return "view offset";
    }
    case OpKind::ReshapeShape:
    case OpKind::BroadcastTo: {
        if (op.shape.rank() == 0) return "";
        std::vector<Range> r = op.shape.ranges();
        Range& x = r[rng() % r.size()];
        x = Range(x.start + 1, x.step, x.size);
        op.shape = Shape(r);
        return "target range";
    }
    case OpKind::Reduce:
        if (coin())
            op.keepdims = !op.keepdims;
        else
            op.reduce_op = op.reduce_op == ReduceOp::Max    ? ReduceOp::Min
                           : op.reduce_op == ReduceOp::Min  ? ReduceOp::Max
                           : op.reduce_op == ReduceOp::Sum  ? ReduceOp::Prod
                           : op.reduce_op == ReduceOp::Prod ? ReduceOp::Sum
                           : op.reduce_op == ReduceOp::And  ? ReduceOp::Or
                                                            : ReduceOp::And;
        return "reduction";
    case OpKind::CustomReduce:
        op.keepdims = !op.keepdims;
        return "keepdims";
    case OpKind::Cast:
        op.dtype = op.dtype == DType::F64 ? DType::F32 : DType::F64;
        return "cast dtype";
    case OpKind::Stack:
        op.axis = op.axis == 0 ? 1 : 0;
        return "stack axis";
    case OpKind::Overwrite:
        std::reverse(op.inputs.begin(), op.inputs.end());
        return "overwrite order";
    case OpKind::Transpose:
        if (op.axes.size() < 2) return "";
        std::swap(op.axes[0], op.axes[1]);
        return "permutation";
    case OpKind::Scan:
        op.reverse = !op.reverse;
        return "scan direction";
    default:
        return "";
    }
}

} // namespace

std::optional<FuzzProgram> variant(const FuzzProgram& p, std::uint64_t seed, std::string* what) {
    std::mt19937_64 rng(splitmix64(seed ^ 0x7a71a47ull));
    for (int attempt = 0; attempt < 24 && !p.ops.empty(); ++attempt) {
        FuzzProgram q = p;
        std::size_t i = rng() % q.ops.size();
        std::string desc;
        try {
            desc = edit(q.ops[i], rng);
            if (desc.empty()) continue;
            BuiltProgram b = build(q);
            if (!analyze(q, b.values)) continue;
        } catch (const Error&) {
            continue;
        }
        if (what) *what = "v" + std::to_string(i) + ": " + desc;
        return q;
    }
    return std::nullopt;
}

} // namespace hedra::fuzz

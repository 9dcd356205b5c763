// Exactness classes and error bounds of fuzz program values (see fuzz_analysis.hpp).
#include "fuzz/lib/fuzz_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "fuzz/lib/fuzz_data.hpp"

namespace hedra::fuzz {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using M = std::optional<Meta>;

double unit_roundoff(DType t) {
    if (t == DType::F32) return 0x1p-24;
    if (t == DType::F64) return 0x1p-53;
    return 0.0;
}

double type_max(DType t) {
    switch (t) {
    case DType::Bool:
        return 1.0;
    case DType::I32:
        return 2147483648.0;
    case DType::I64:
        return 9223372036854775808.0;
    default:
        return kInf;
    }
}

bool approx(const Meta& m) {
    return m.frag == Frag::Approx;
}
Frag worst(Frag a, Frag b) {
    return std::max(a, b);
}

// An exact (or zero-sign) result of dtype t with magnitude bound mag.
Meta exact(double mag, DType t, Frag frag = Frag::Exact) {
    if (!is_float(t)) frag = Frag::Exact;
    return {frag, std::min(std::isnan(mag) ? kInf : mag, type_max(t)), 0.0};
}

// An approximate float result; invalid when the bound is useless.
M approximate(double mag, double err, DType t) {
    if (!(mag <= approx_limit(t)) || !std::isfinite(err)) return std::nullopt;
    return Meta{Frag::Approx, mag, err};
}

M unary(ScalarOp op, const Meta& x, DType t) {
    double u = unit_roundoff(t);
    switch (op) {
    case ScalarOp::Neg:
    case ScalarOp::Abs:
        return approx(x) ? x : exact(x.mag, t, x.frag);
    case ScalarOp::Not:
        if (approx(x)) return std::nullopt;
        return exact(1, t);
    case ScalarOp::Exp:
        if (approx(x)) {
            if (x.mag > 20) return std::nullopt;
            double m = std::exp(x.mag);
            return approximate(m, 1.01 * m * x.err + 2 * u * m, t);
        }
        return exact(std::exp(x.mag), t);
    case ScalarOp::Log:
        if (approx(x)) return std::nullopt;
        return exact(kInf, t);
    case ScalarOp::Sqrt:
        if (approx(x)) return std::nullopt;
        return exact(std::sqrt(x.mag), t, x.frag);
    case ScalarOp::Tanh:
        if (approx(x)) return approximate(std::min(1.0, x.mag), x.err + 2 * u, t);
        return exact(std::min(1.0, x.mag), t, x.frag);
    case ScalarOp::Sigmoid:
        if (approx(x)) return approximate(1.0, x.err / 4 + 2 * u, t);
        return exact(1.0, t);
    case ScalarOp::Sin:
    case ScalarOp::Cos:
        if (approx(x)) return approximate(1.0, x.err + 2 * u, t);
        return exact(1.0, t);
    case ScalarOp::Erf: // |erf'| <= 2 / sqrt(pi)
        if (approx(x)) return approximate(1.0, 1.13 * x.err + 2 * u, t);
        return exact(1.0, t);
    case ScalarOp::Log1p:
        if (approx(x)) return std::nullopt;
        return exact(kInf, t);
    case ScalarOp::Expm1:
        if (approx(x)) {
            if (x.mag > 20) return std::nullopt;
            double m = std::exp(x.mag);
            return approximate(m, 1.01 * m * x.err + 2 * u * m, t);
        }
        return exact(std::exp(x.mag), t);
    case ScalarOp::Floor: // jumps: only of exact operands
    case ScalarOp::Ceil:
    case ScalarOp::Round:
        if (approx(x)) return std::nullopt;
        return exact(x.mag + 1, t, x.frag);
    default:
        break;
    }
    return std::nullopt;
}

M cast(const Meta& x, DType from, DType to) {
    if (!is_float(to)) {
        if (approx(x)) return std::nullopt;
        return exact(x.mag, to);
    }
    if (!is_float(from) || !approx(x)) return exact(x.mag, to, x.frag);
    if (from == DType::F64 && to == DType::F32)
        return approximate(x.mag, x.err + unit_roundoff(to) * x.mag, to);
    return x;
}

// `b_literal`: the divisor's value when it is a literal.
M binary(ScalarOp op, const Meta& a, const Meta& b, DType t, std::optional<double> b_literal) {
    bool any = approx(a) || approx(b);
    double u = unit_roundoff(t);
    Frag f = worst(a.frag, b.frag);
    switch (op) {
    case ScalarOp::Lt:
    case ScalarOp::Le:
    case ScalarOp::Gt:
    case ScalarOp::Ge:
    case ScalarOp::Eq:
    case ScalarOp::Ne:
    case ScalarOp::And:
    case ScalarOp::Or:
        if (any) return std::nullopt;
        return exact(1, DType::Bool);
    case ScalarOp::Add:
    case ScalarOp::Sub:
        if (any) return approximate(a.mag + b.mag, a.err + b.err + 2 * u * (a.mag + b.mag), t);
        return exact(a.mag + b.mag, t, f);
    case ScalarOp::Mul: {
        double m = a.mag * b.mag;
        if (a.mag == 0 || b.mag == 0) m = 0;
        if (any)
            return approximate(m, a.mag * b.err + b.mag * a.err + a.err * b.err + 2 * u * m, t);
        return exact(is_float(t) ? m : type_max(t), t, f);
    }
    case ScalarOp::Div:
        if (b.frag != Frag::Exact) return std::nullopt;
        if (approx(a)) {
            if (!b_literal || std::fabs(*b_literal) < 0.25) return std::nullopt;
            double c = std::fabs(*b_literal);
            return approximate(a.mag / c, a.err / c + 2 * u * a.mag / c, t);
        }
        if (!is_float(t)) return exact(a.mag, t);
        return exact(b_literal && *b_literal != 0 ? a.mag / std::fabs(*b_literal) : kInf, t, f);
    case ScalarOp::Pow:
        if (a.frag != Frag::Exact || b.frag != Frag::Exact) return std::nullopt;
        return exact(kInf, t);
    case ScalarOp::Mod: // jumps in a, and as b crosses the divisors of a
        if (any || b.frag != Frag::Exact) return std::nullopt;
        return exact(a.mag, t, f);
    case ScalarOp::BitAnd:
    case ScalarOp::BitOr:
    case ScalarOp::BitXor:
    case ScalarOp::Shl:
    case ScalarOp::Shr:
        if (any) return std::nullopt;
        return exact(type_max(t), t, f);
    case ScalarOp::Min:
    case ScalarOp::Max:
        if (any)
            return approximate(std::max(a.mag, b.mag),
                               std::max(approx(a) ? a.err : 0.0, approx(b) ? b.err : 0.0), t);
        return exact(std::max(a.mag, b.mag), t, f);
    default:
        break;
    }
    return std::nullopt;
}

struct Info {
    Sym sym;
    Meta meta;
};

std::optional<Info> expr_info(const Expr& e, const std::vector<Meta>& ops,
                              const std::vector<Sym>& syms, const Info* running = nullptr) {
    switch (e.kind) {
    case Expr::Kind::Input:
        if (e.input == Expr::kRunning) {
            if (!running) return std::nullopt;
            return *running;
        }
        return Info{syms.at(e.input), ops.at(e.input)};
    case Expr::Kind::Repeat: {
        auto y = expr_info(e.args[0], ops, syms, running);
        for (int r = 0; y && r < e.input; ++r) {
            auto next = expr_info(e.args[1], ops, syms, &*y);
            if (!next) return std::nullopt;
            DType t = y->sym.dtype();
            M m = next->sym.dtype() == t ? M(next->meta) : cast(next->meta, next->sym.dtype(), t);
            if (!m) return std::nullopt;
            y = Info{cast(next->sym, t), *m};
        }
        return y;
    }
    case Expr::Kind::Literal: {
        Sym s = build_expr(e, syms);
        return Info{s, exact(std::fabs(e.value), s.dtype())};
    }
    default:
        break;
    }
    std::vector<Info> args;
    std::vector<Sym> arg_syms;
    for (const Expr& a : e.args) {
        auto info = expr_info(a, ops, syms, running);
        if (!info) return std::nullopt;
        args.push_back(*info);
    }
    // Rebuild this node from the children's syms (same calls as build_expr).
    std::vector<Sym> local;
    Expr shallow = e;
    for (std::size_t k = 0; k < args.size(); ++k) {
        local.push_back(args[k].sym);
        shallow.args[k] = Expr::in(static_cast<int>(k));
    }
    Sym s = build_expr(shallow, local);
    DType t = s.dtype();
    M m;
    switch (e.kind) {
    case Expr::Kind::Unary:
        m = unary(e.op, args[0].meta, t);
        break;
    case Expr::Kind::Cast:
        m = cast(args[0].meta, args[0].sym.dtype(), t);
        break;
    case Expr::Kind::Binary: {
        std::optional<double> lit;
        if (e.args[1].kind == Expr::Kind::Literal) lit = e.args[1].value;
        m = binary(e.op, args[0].meta, args[1].meta, t, lit);
        break;
    }
    case Expr::Kind::Select: {
        if (approx(args[0].meta)) return std::nullopt;
        const Meta &x = args[1].meta, &y = args[2].meta;
        if (approx(x) || approx(y))
            m = approximate(std::max(x.mag, y.mag),
                            std::max(approx(x) ? x.err : 0.0, approx(y) ? y.err : 0.0), t);
        else
            m = exact(std::max(x.mag, y.mag), t, worst(x.frag, y.frag));
        break;
    }
    default:
        break;
    }
    if (!m) return std::nullopt;
    return Info{s, *m};
}

Meta structural(const std::vector<Meta>& ins, DType t) {
    Meta m{Frag::Exact, 0.0, 0.0};
    for (const Meta& x : ins) {
        m.frag = worst(m.frag, x.frag);
        m.mag = std::max(m.mag, x.mag);
        m.err = std::max(m.err, x.err);
    }
    if (!is_float(t)) m.frag = Frag::Exact;
    return m;
}

double data_mag(const Op& op) {
    double m = 0;
    for (double v : op_values(op))
        if (!std::isnan(v)) m = std::max(m, std::fabs(v));
    return m;
}

std::int64_t reduced_count(const Array& in, const Array& out) {
    if (out.size() == 0) return 0;
    return in.size() / out.size();
}

M reduction(ReduceOp op, const Meta& x, std::int64_t n, DType in_t, DType out_t, DType acc_t) {
    double u = unit_roundoff(acc_t);
    if (!is_float(out_t)) {
        if (approx(x)) return std::nullopt;
        double mag = op == ReduceOp::Sum    ? x.mag * static_cast<double>(n)
                     : op == ReduceOp::Prod ? kInf
                                            : x.mag;
        return exact(mag, out_t);
    }
    if (!is_float(in_t) && (op == ReduceOp::Max || op == ReduceOp::Min)) return exact(x.mag, out_t);
    switch (op) {
    case ReduceOp::Sum: {
        if (n == 0) return exact(0, out_t);
        double dn = static_cast<double>(n);
        return approximate(dn * x.mag, dn * x.err + dn * dn * u * x.mag + u * dn * x.mag, out_t);
    }
    case ReduceOp::Prod: {
        if (n == 0) return exact(1, out_t);
        double dn = static_cast<double>(n);
        double m = std::pow(std::max(x.mag, 1.0), dn);
        return approximate(m, dn * m * x.err + 2 * dn * u * m, out_t);
    }
    case ReduceOp::Max:
    case ReduceOp::Min:
        if (n == 0) return exact(kInf, out_t);
        return Meta{worst(x.frag, Frag::ZeroSign), x.mag, x.err};
    default:
        break;
    }
    return std::nullopt;
}

Meta join(const Meta& a, const Meta& b) {
    return {worst(a.frag, b.frag), std::max(a.mag, b.mag), std::max(a.err, b.err)};
}

// matmul of operands x and y of dtype t over a contraction of k.
M matmul_meta(const Meta& x, const Meta& y, std::int64_t k, DType t) {
    if (!is_float(t)) return exact(kInf, t);
    if (k == 0) return exact(0, t);
    double dk = static_cast<double>(k), u = unit_roundoff(t);
    double m = x.mag * y.mag;
    if (x.mag == 0 || y.mag == 0) m = 0;
    double e = (approx(x) ? x.err * y.mag : 0) + (approx(y) ? y.err * x.mag : 0) +
               (approx(x) && approx(y) ? x.err * y.err : 0);
    return approximate(dk * m, dk * e + (dk * dk + 2 * dk) * u * m, t);
}

// A scan: the step's metas carried through its T steps one by one, so an error bound grows
// step by step as the step's expressions make it grow (T is small: the generator's scans run
// at most a few steps). States join the carries entering each step, ys the outputs of all.
M scan_meta(const Op& op, const std::vector<Meta>& ins, const std::vector<Array>& values) {
    auto in_array = [&](std::size_t k) -> const Array& { return values.at(op.inputs.at(k)); };
    const Array& xs = in_array(0);
    const int a = op.axis < 0 ? op.axis + xs.rank() : op.axis;
    const std::int64_t steps = xs.shape()[a].size;
    const std::int64_t slice = steps == 0 ? 0 : xs.size() / steps;
    const DType xt = xs.dtype();
    std::vector<Meta> carries(ins.begin() + 1, ins.begin() + 1 + op.carries);
    std::vector<Sym> syms;
    for (int k = 0; k < op.carries; ++k)
        syms.emplace_back(scalar_input(k, in_array(1 + static_cast<std::size_t>(k)).dtype()));
    syms.emplace_back(scalar_input(op.carries, xt));
    std::size_t next = 1 + static_cast<std::size_t>(op.carries);
    std::optional<Meta> closure, matrix;
    if (op.closure) {
        syms.emplace_back(scalar_input(static_cast<int>(syms.size()), in_array(next).dtype()));
        closure = ins.at(next++);
    }
    if (op.extra != ScanExtra::None) {
        // The generator draws sums of float slices and matmuls of float carries only.
        DType t = op.extra == ScanExtra::Matmul ? in_array(1).dtype() : xt;
        if (!is_float(t)) return std::nullopt;
        syms.emplace_back(scalar_input(static_cast<int>(syms.size()), t));
    }
    std::optional<Meta> extra;
    if (op.extra == ScanExtra::Sum) extra = reduction(ReduceOp::Sum, ins[0], slice, xt, xt, xt);
    if (op.extra == ScanExtra::Matmul) matrix = ins.at(next);
    if (op.extra == ScanExtra::Inner) { // a * 0.5 + sum(v) over the slice's leading axis
        std::vector<Range> r = xs.shape().ranges();
        r.erase(r.begin() + a);
        if (r.empty() || r[0].size == 0) return std::nullopt;
        const std::int64_t inner = r[0].size, row = slice / inner;
        M v = reduction(ReduceOp::Sum, ins[0], row, xt, xt, xt);
        if (!v) return std::nullopt;
        Meta acc = exact(0, xt);
        std::vector<Sym> inner_syms = {Sym(scalar_input(0, xt)), Sym(scalar_input(1, xt))};
        for (std::int64_t t = 0; t < inner; ++t) {
            auto m = analyze_expr(inner_scan_step(), {acc, *v}, inner_syms);
            if (!m) return std::nullopt;
            acc = *m;
        }
        extra = acc;
    }
    std::optional<Meta> states, ys;
    for (std::int64_t t = 0; t < steps; ++t) {
        const Meta& entering = carries.at(static_cast<std::size_t>(op.component));
        states = states ? join(*states, entering) : entering;
        std::vector<Meta> operands = carries;
        operands.push_back(ins[0]);
        if (closure) operands.push_back(*closure);
        if (op.extra == ScanExtra::Matmul) {
            const Array& c0 = in_array(1);
            if (c0.rank() == 0) return std::nullopt;
            extra = matmul_meta(carries[0], *matrix, c0.shape()[c0.rank() - 1].size, c0.dtype());
            if (!extra) return std::nullopt;
        }
        if (op.extra != ScanExtra::None) {
            if (!extra) return std::nullopt; // a sum past the approx limit
            operands.push_back(*extra);
        }
        std::vector<Meta> next_carries;
        for (int k = 0; k < op.carries; ++k) {
            auto m = analyze_expr(op.step.at(static_cast<std::size_t>(k)), operands, syms);
            if (!m) return std::nullopt;
            next_carries.push_back(*m);
        }
        auto y = analyze_expr(op.step.at(static_cast<std::size_t>(op.carries)), operands, syms);
        if (!y) return std::nullopt;
        ys = ys ? join(*ys, *y) : *y;
        carries = next_carries;
    }
    if (!states || !ys) return std::nullopt; // the generator never scans an empty axis
    switch (op.scan_value) {
    case ScanValue::Carry:
        return carries.at(static_cast<std::size_t>(op.component));
    case ScanValue::Ys:
        return ys;
    case ScanValue::States:
        return states;
    }
    return std::nullopt;
}

} // namespace

const char* frag_name(Frag f) {
    switch (f) {
    case Frag::Exact:
        return "exact";
    case Frag::ZeroSign:
        return "zero-sign";
    case Frag::Approx:
        return "approx";
    }
    return "?";
}

double approx_limit(DType t) {
    return t == DType::F32 ? 1e30 : 1e250;
}

std::optional<Meta> analyze_expr(const Expr& e, const std::vector<Meta>& operands,
                                 const std::vector<Sym>& syms) {
    try {
        auto info = expr_info(e, operands, syms);
        if (!info) return std::nullopt;
        return info->meta;
    } catch (const Error&) { // e.g. 'neg' of a bool: not a well-typed expression
        return std::nullopt;
    }
}

std::optional<Meta> analyze_op(const FuzzProgram& p, int i, const std::vector<Meta>& metas,
                               const std::vector<Array>& values) {
    const Op& op = p.ops.at(i);
    const Array& self = values.at(i);
    std::vector<Meta> ins;
    for (int k : op.inputs)
        ins.push_back(metas.at(k));
    auto in_array = [&](int k) -> const Array& { return values.at(op.inputs.at(k)); };
    switch (op.kind) {
    case OpKind::Data:
        return exact(data_mag(op), op.dtype);
    case OpKind::Constant:
    case OpKind::Full:
        return exact(std::fabs(op.value), op.dtype);
    case OpKind::Iota: {
        const Range& r = op.shape[op.axis];
        return exact(r.size == 0
                         ? 0.0
                         : static_cast<double>(std::max(std::llabs(r.start), std::llabs(r.last()))),
                     DType::I64);
    }
    case OpKind::Map: {
        std::vector<Meta> operand_metas;
        std::vector<Sym> syms;
        for (const MapOperand& m : op.operands) {
            if (m.slot >= 0) {
                syms.emplace_back(
                    scalar_input(static_cast<int>(syms.size()), in_array(m.slot).dtype()));
                operand_metas.push_back(ins.at(m.slot));
            } else {
                syms.push_back(build_expr(Expr::lit(m.literal, m.value), {}));
                operand_metas.push_back(exact(std::fabs(m.value), syms.back().dtype()));
            }
        }
        return analyze_expr(op.expr, operand_metas, syms);
    }
    case OpKind::ReshapeTransform:
    case OpKind::ReshapeShape:
    case OpKind::View:
    case OpKind::BroadcastTo:
    case OpKind::Fuse:
    case OpKind::Overwrite:
    case OpKind::Stack:
    case OpKind::Transpose:
    case OpKind::Flatten:
    case OpKind::Unflatten:
    case OpKind::Rebase:
        return structural(ins, self.dtype());
    case OpKind::Pad: {
        Meta m = structural(ins, self.dtype());
        m.mag = std::max(m.mag, std::fabs(op.value));
        return m;
    }
    case OpKind::Cast:
        return cast(ins.at(0), in_array(0).dtype(), op.dtype);
    case OpKind::Take: // copies of src's elements; the indices are exact integers
        if (approx(ins.at(1))) return std::nullopt;
        return structural({ins.at(0)}, self.dtype());
    case OpKind::Scan:
        return scan_meta(op, ins, values);
    case OpKind::Reduce: {
        const Array& a = in_array(0);
        std::int64_t n = reduced_count(a, self);
        if (op.reduce_op == ReduceOp::And || op.reduce_op == ReduceOp::Or) {
            if (approx(ins[0])) return std::nullopt;
            return exact(1, DType::Bool);
        }
        return reduction(op.reduce_op, ins[0], n, a.dtype(), self.dtype(), self.dtype());
    }
    case OpKind::CustomReduce: {
        const Array& a = in_array(0);
        std::int64_t n = reduced_count(a, self);
        Meta x = ins[0];
        if (op.combiner == Combiner::ArgMax) { // comparisons: only of exact values
            if (approx(x)) return std::nullopt;
            return exact(kInf, self.dtype());
        }
        if (!is_float(a.dtype()))
            return exact(op.combiner == Combiner::Add ? x.mag * n : kInf, a.dtype());
        x.mag = std::max(x.mag, std::fabs(op.value));
        switch (op.combiner) {
        case Combiner::Add:
            return reduction(ReduceOp::Sum, x, n + 1, a.dtype(), a.dtype(), a.dtype());
        case Combiner::Mul:
            return reduction(ReduceOp::Prod, x, n + 1, a.dtype(), a.dtype(), a.dtype());
        case Combiner::Max:
        case Combiner::Min:
            return reduction(ReduceOp::Max, x, n, a.dtype(), a.dtype(), a.dtype());
        case Combiner::SelectMax:
            return std::nullopt; // NaN handling depends on the order
        case Combiner::ArgMax:
            break; // above
        }
        return std::nullopt;
    }
    case OpKind::Matmul: {
        const Array& a = in_array(0);
        return matmul_meta(ins[0], ins[1], a.shape()[a.rank() - 1].size, self.dtype());
    }
    }
    return std::nullopt;
}

std::optional<std::vector<Meta>> analyze(const FuzzProgram& p, const std::vector<Array>& values) {
    std::vector<Meta> metas;
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        auto m = analyze_op(p, static_cast<int>(i), metas, values);
        if (!m) return std::nullopt;
        metas.push_back(*m);
    }
    return metas;
}

} // namespace hedra::fuzz

// Building a FuzzProgram with hedra's public API, op by op, and pruning dead ops.
#include "fuzz/lib/fuzz_program.hpp"

#include "fuzz/lib/fuzz_data.hpp"

namespace hedra::fuzz {

Expr Expr::in(int k) {
    Expr e;
    e.kind = Kind::Input;
    e.input = k;
    return e;
}
Expr Expr::lit(Literal kind, double value) {
    Expr e;
    e.kind = Kind::Literal;
    e.literal = kind;
    e.value = value;
    return e;
}
Expr Expr::unary(ScalarOp op, Expr a) {
    Expr e;
    e.kind = Kind::Unary;
    e.op = op;
    e.args = {std::move(a)};
    return e;
}
Expr Expr::binary(ScalarOp op, Expr a, Expr b) {
    Expr e;
    e.kind = Kind::Binary;
    e.op = op;
    e.args = {std::move(a), std::move(b)};
    return e;
}
Expr Expr::select(Expr c, Expr a, Expr b) {
    Expr e;
    e.kind = Kind::Select;
    e.args = {std::move(c), std::move(a), std::move(b)};
    return e;
}
Expr Expr::cast(Expr a, DType to) {
    Expr e;
    e.kind = Kind::Cast;
    e.to = to;
    e.args = {std::move(a)};
    return e;
}
Expr Expr::repeat(Expr init, Expr step, int count) {
    Expr e;
    e.kind = Kind::Repeat;
    e.input = count;
    e.args = {std::move(init), std::move(step)};
    return e;
}
int Expr::size() const {
    int n = 1;
    for (const Expr& a : args)
        n += a.size();
    return n;
}

const char* op_kind_name(OpKind k) {
    static const char* names[] = {"data",          "constant",  "full",      "iota",      "map",
                                  "reshape_t",     "reshape_s", "view",      "broadcast", "reduce",
                                  "custom_reduce", "fuse",      "overwrite", "stack",     "matmul",
                                  "transpose",     "pad",       "flatten",   "unflatten", "rebase",
                                  "cast",          "take",      "scan"};
    return names[static_cast<int>(k)];
}

namespace {

Sym literal_sym(Expr::Literal kind, double value) {
    switch (kind) {
    case Expr::Literal::Int:
        return Sym(static_cast<int>(value));
    case Expr::Literal::Bool:
        return Sym(value != 0);
    case Expr::Literal::Double:
        break;
    }
    return Sym(value);
}

Operand literal_operand(const MapOperand& m) {
    switch (m.literal) {
    case Expr::Literal::Int:
        return Operand(static_cast<int>(m.value));
    case Expr::Literal::Bool:
        return Operand(m.value != 0);
    case Expr::Literal::Double:
        break;
    }
    return Operand(m.value);
}

Sym unary_sym(ScalarOp op, const Sym& a) {
    switch (op) {
    case ScalarOp::Neg:
        return -a;
    case ScalarOp::Not:
        return !a;
    case ScalarOp::Abs:
        return abs(a);
    case ScalarOp::Exp:
        return exp(a);
    case ScalarOp::Log:
        return log(a);
    case ScalarOp::Sqrt:
        return sqrt(a);
    case ScalarOp::Tanh:
        return tanh(a);
    case ScalarOp::Sigmoid:
        return sigmoid(a);
    case ScalarOp::Sin:
        return sin(a);
    case ScalarOp::Cos:
        return cos(a);
    case ScalarOp::Erf:
        return erf(a);
    case ScalarOp::Log1p:
        return log1p(a);
    case ScalarOp::Expm1:
        return expm1(a);
    case ScalarOp::Floor:
        return floor(a);
    case ScalarOp::Ceil:
        return ceil(a);
    case ScalarOp::Round:
        return round(a);
    default:
        break;
    }
    throw Error(std::string("fuzz: not a unary op: ") + scalar_op_name(op));
}

Sym binary_sym(ScalarOp op, const Sym& a, const Sym& b) {
    switch (op) {
    case ScalarOp::Add:
        return a + b;
    case ScalarOp::Sub:
        return a - b;
    case ScalarOp::Mul:
        return a * b;
    case ScalarOp::Div:
        return a / b;
    case ScalarOp::Mod:
        return a % b;
    case ScalarOp::BitAnd:
        return a & b;
    case ScalarOp::BitOr:
        return a | b;
    case ScalarOp::BitXor:
        return a ^ b;
    case ScalarOp::Shl:
        return a << b;
    case ScalarOp::Shr:
        return a >> b;
    case ScalarOp::Pow:
        return pow(a, b);
    case ScalarOp::Min:
        return min(a, b);
    case ScalarOp::Max:
        return max(a, b);
    case ScalarOp::Lt:
        return a < b;
    case ScalarOp::Le:
        return a <= b;
    case ScalarOp::Gt:
        return a > b;
    case ScalarOp::Ge:
        return a >= b;
    case ScalarOp::Eq:
        return a == b;
    case ScalarOp::Ne:
        return a != b;
    case ScalarOp::And:
        return a && b;
    case ScalarOp::Or:
        return a || b;
    default:
        break;
    }
    throw Error(std::string("fuzz: not a binary op: ") + scalar_op_name(op));
}

template <class T>
Array data_array(const Op& op) {
    return array(typed_values<T>(op_values(op)), op.shape);
}

Array data_leaf(const Op& op) {
    switch (op.dtype) {
    case DType::Bool:
        return data_array<bool>(op);
    case DType::I32:
        return data_array<std::int32_t>(op);
    case DType::I64:
        return data_array<std::int64_t>(op);
    case DType::F32:
        return data_array<float>(op);
    case DType::F64:
        return data_array<double>(op);
    case DType::BF16:
    case DType::F16: // the fuzzer makes no half data
        break;
    }
    throw Error("fuzz: bad dtype");
}

Array custom_reduce(const Op& op, const Array& a) {
    switch (op.combiner) {
    case Combiner::Add:
        return reduce([](Sym acc, Sym x) { return acc + x; }, op.value, a, op.axes, op.keepdims);
    case Combiner::Mul:
        return reduce([](Sym acc, Sym x) { return acc * x; }, op.value, a, op.axes, op.keepdims);
    case Combiner::Max:
        return reduce([](Sym acc, Sym x) { return max(acc, x); }, op.value, a, op.axes,
                      op.keepdims);
    case Combiner::Min:
        return reduce([](Sym acc, Sym x) { return min(acc, x); }, op.value, a, op.axes,
                      op.keepdims);
    case Combiner::SelectMax:
        return reduce([](Sym acc, Sym x) { return select(acc < x, x, acc); }, op.value, a, op.axes,
                      op.keepdims);
    case Combiner::ArgMax:
        return reduce_multiple_value(
            [](const std::vector<Sym>& acc, const std::vector<Sym>& x) {
                Sym take = x[0] > acc[0] || (x[0] == acc[0] && x[1] < acc[1]);
                return std::vector<Sym>{select(take, x[0], acc[0]), select(take, x[1], acc[1])};
            },
            {op.value, 0}, {a, index_components(a.shape(), op.axes.at(0))}, op.axes,
            op.keepdims)[1];
    }
    throw Error("fuzz: bad combiner");
}

} // namespace

Expr inner_scan_step() {
    return Expr::binary(
        ScalarOp::Add,
        Expr::binary(ScalarOp::Mul, Expr::in(0), Expr::lit(Expr::Literal::Double, 0.5)),
        Expr::in(1));
}

int scan_operands(const Op& op) {
    return op.carries + 1 + (op.closure ? 1 : 0) + (op.extra != ScanExtra::None ? 1 : 0);
}

namespace {

Array map_of(const Expr& e, const std::vector<Operand>& operands) {
    return lazy_n_ary([&e](const std::vector<Sym>& s) { return build_expr(e, s); }, operands);
}

// The extra value of a scan's step (ScanExtra) from its carries, x slice and matrix.
Array scan_extra(const Op& op, const std::vector<Array>& c, const Array& x, const Array* matrix) {
    switch (op.extra) {
    case ScanExtra::Sum:
        return sum(x);
    case ScanExtra::Matmul:
        return matmul(c.at(0), *matrix);
    case ScanExtra::Inner: {
        static const Expr inner = inner_scan_step();
        return scan(
                   [](const Array& a, const Array& v) {
                       Array n = map_of(inner, {Operand(a), Operand(sum(v))});
                       return std::pair{n, n};
                   },
                   full(Shape{}, 0.0, x.dtype()), x)
            .first;
    }
    case ScanExtra::None:
        break;
    }
    throw Error("fuzz: a scan without an extra value");
}

Array build_scan(const Op& op, const std::vector<Array>& ins) {
    const Array& xs = ins.at(0);
    std::vector<Array> inits(ins.begin() + 1, ins.begin() + 1 + op.carries);
    std::size_t next = 1 + static_cast<std::size_t>(op.carries);
    const Array* closure = op.closure ? &ins.at(next++) : nullptr;
    const Array* matrix = op.extra == ScanExtra::Matmul ? &ins.at(next++) : nullptr;
    auto step = [&](const std::vector<Array>& c, const std::vector<Array>& x) {
        std::vector<Operand> operands(c.begin(), c.end());
        operands.emplace_back(x.at(0));
        if (closure) operands.emplace_back(*closure);
        if (op.extra != ScanExtra::None) operands.emplace_back(scan_extra(op, c, x.at(0), matrix));
        ScanStep s;
        for (int k = 0; k < op.carries; ++k)
            s.carries.push_back(map_of(op.step.at(static_cast<std::size_t>(k)), operands));
        s.ys.push_back(map_of(op.step.at(static_cast<std::size_t>(op.carries)), operands));
        return s;
    };
    ScanOptions o;
    o.reverse = op.reverse;
    ScanResult r = scan(step, inits, {xs}, op.axis, o);
    switch (op.scan_value) {
    case ScanValue::Carry:
        return r.carries.at(static_cast<std::size_t>(op.component));
    case ScanValue::Ys:
        return r.ys.at(0);
    case ScanValue::States:
        return r.states.at(static_cast<std::size_t>(op.component));
    }
    throw Error("fuzz: bad scan value");
}

} // namespace

Sym build_expr(const Expr& e, const std::vector<Sym>& in, const Sym* running) {
    auto sub = [&](int k) { return build_expr(e.args[static_cast<std::size_t>(k)], in, running); };
    switch (e.kind) {
    case Expr::Kind::Input:
        if (e.input == Expr::kRunning) {
            if (!running) throw Error("fuzz: a Repeat's running value outside its step");
            return *running;
        }
        return in.at(e.input);
    case Expr::Kind::Literal:
        return literal_sym(e.literal, e.value);
    case Expr::Kind::Unary:
        return unary_sym(e.op, sub(0));
    case Expr::Kind::Binary:
        return binary_sym(e.op, sub(0), sub(1));
    case Expr::Kind::Select:
        return select(sub(0), sub(1), sub(2));
    case Expr::Kind::Cast:
        return cast(sub(0), e.to);
    case Expr::Kind::Repeat: {
        Sym y = sub(0);
        for (int r = 0; r < e.input; ++r)
            y = cast(build_expr(e.args[1], in, &y), y.dtype());
        return y;
    }
    }
    throw Error("fuzz: bad expression");
}

Array build_op(const Op& op, const std::vector<Array>& v, std::vector<Array>* placeholders,
               std::vector<HostArray>* inputs) {
    auto in = [&](int k) -> const Array& { return v.at(op.inputs.at(k)); };
    std::vector<Array> ins;
    for (int i : op.inputs)
        ins.push_back(v.at(i));
    switch (op.kind) {
    case OpKind::Data:
        if (op.placeholder && placeholders != nullptr) {
            Array p = placeholder(op.shape, op.dtype, "p" + std::to_string(placeholders->size()));
            placeholders->push_back(p);
            inputs->push_back(leaf_host_array(op));
            return p;
        }
        return data_leaf(op);
    case OpKind::Constant:
        return constant(op.value, op.dtype);
    case OpKind::Full:
        return full(op.shape, op.value, op.dtype);
    case OpKind::Iota:
        return index_components(op.shape, op.axis);
    case OpKind::Map: {
        std::vector<Operand> operands;
        for (const MapOperand& m : op.operands)
            operands.push_back(m.slot >= 0 ? Operand(in(m.slot)) : literal_operand(m));
        const Expr& e = op.expr;
        return lazy_n_ary([&e](const std::vector<Sym>& s) { return build_expr(e, s); }, operands);
    }
    case OpKind::ReshapeTransform:
        return reshape(in(0), *op.transform);
    case OpKind::ReshapeShape:
        return reshape(in(0), op.shape);
    case OpKind::View:
        return view(in(0), op.shape, op.map);
    case OpKind::BroadcastTo:
        return broadcast_to(in(0), op.shape);
    case OpKind::Reduce:
        return reduce(op.reduce_op, in(0), op.axes, op.keepdims);
    case OpKind::CustomReduce:
        return custom_reduce(op, in(0));
    case OpKind::Fuse:
        return fuse(ins);
    case OpKind::Overwrite:
        return overwrite(ins);
    case OpKind::Stack:
        return stack(op.axis, ins);
    case OpKind::Matmul:
        return matmul(in(0), in(1));
    case OpKind::Transpose:
        return transpose(in(0), op.axes);
    case OpKind::Pad:
        return pad(in(0), op.pads, op.value);
    case OpKind::Flatten:
        return flatten(in(0), op.axis, op.last);
    case OpKind::Unflatten:
        return unflatten(in(0), op.axis, op.sizes);
    case OpKind::Rebase:
        return rebase(in(0));
    case OpKind::Cast:
        return cast(in(0), op.dtype);
    case OpKind::Take:
        return take(in(0), in(1), op.axis);
    case OpKind::Scan:
        return build_scan(op, ins);
    }
    throw Error("fuzz: bad op kind");
}

BuiltProgram build(const FuzzProgram& p) {
    BuiltProgram b;
    for (const Op& op : p.ops)
        b.values.push_back(build_op(op, b.values, &b.placeholders, &b.inputs));
    for (int o : p.outputs)
        b.outputs.push_back(b.values.at(o));
    return b;
}

std::optional<BuiltProgram> build_symbolic(const FuzzProgram& p, int& symbolic_input) {
    int tries = 0;
    for (std::size_t c = 0; c < p.ops.size() && tries < 3; ++c) {
        const Op& candidate = p.ops[c];
        if (candidate.kind != OpKind::Data || candidate.shape.rank() == 0) continue;
        const Range& lead = candidate.shape[0];
        if (lead.start != 0 || lead.step != 1 || lead.size < 2) continue;
        ++tries;
        try {
            BuiltProgram b;
            for (std::size_t i = 0; i < p.ops.size(); ++i) {
                const Op& op = p.ops[i];
                if (i != c) {
                    b.values.push_back(build_op(op, b.values, &b.placeholders, &b.inputs));
                    continue;
                }
                std::vector<Range> ranges = op.shape.ranges();
                ranges[0] = dynamic("fz", lead.size);
                symbolic_input = static_cast<int>(b.placeholders.size());
                Array x = placeholder(Shape(std::move(ranges)), op.dtype, "fz");
                b.placeholders.push_back(x);
                b.inputs.push_back(leaf_host_array(op));
                b.values.push_back(x);
            }
            for (int o : p.outputs)
                b.outputs.push_back(b.values.at(o));
            return b;
        } catch (const Error&) {
            continue; // the program uses that axis in a way a symbolic extent cannot take
        }
    }
    return std::nullopt;
}

FuzzProgram without_dead_ops(const FuzzProgram& p) {
    std::vector<bool> live(p.ops.size(), false);
    for (int o : p.outputs)
        live.at(o) = true;
    for (int i = static_cast<int>(p.ops.size()) - 1; i >= 0; --i)
        if (live[i])
            for (int k : p.ops[i].inputs)
                live.at(k) = true;
    std::vector<int> renumber(p.ops.size(), -1);
    FuzzProgram q;
    q.seed = p.seed;
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        if (!live[i]) continue;
        renumber[i] = static_cast<int>(q.ops.size());
        Op op = p.ops[i];
        for (int& k : op.inputs)
            k = renumber.at(k);
        q.ops.push_back(std::move(op));
    }
    for (int o : p.outputs)
        q.outputs.push_back(renumber.at(o));
    return q;
}

} // namespace hedra::fuzz

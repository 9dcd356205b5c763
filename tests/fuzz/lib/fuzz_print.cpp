// Printing a FuzzProgram as a C++ doctest case that rebuilds the same graph with hedra's API
// and runs it through the differential harness (tests/differential/differential.hpp).
#include <sstream>

#include "fuzz/lib/fuzz_data.hpp"
#include "fuzz/lib/fuzz_program.hpp"

namespace hedra::fuzz {

namespace {

std::string f64(double v) {
    return cpp_value(v, DType::F64);
}

std::string range_cpp(const Range& r) {
    if (r.start == 0 && r.step == 1) return "range(" + std::to_string(r.size) + ")";
    return "Range(" + std::to_string(r.start) + ", " + std::to_string(r.step) + ", " +
           std::to_string(r.size) + ")";
}

std::string shape_cpp(const Shape& s) {
    std::string out = "Shape{";
    for (int d = 0; d < s.rank(); ++d)
        out += (d ? ", " : "") + range_cpp(s[d]);
    return out + "}";
}

template <class T>
std::string list_cpp(const std::vector<T>& v) {
    std::string out = "{";
    for (std::size_t i = 0; i < v.size(); ++i)
        out += (i ? ", " : "") + std::to_string(v[i]);
    return out + "}";
}

std::string transform_cpp(const Transform& t) {
    std::string out = "Transform(" + std::to_string(t.input_rank()) + ", {";
    for (std::size_t i = 0; i < t.outputs().size(); ++i) {
        const TransformAxis& a = t.outputs()[i];
        out += (i ? ", " : "") + std::string("{") + std::to_string(a.input_axis) + ", " +
               std::to_string(a.scale) + ", " + std::to_string(a.offset) + "}";
    }
    out += "}, {";
    for (std::size_t i = 0; i < t.input_pins().size(); ++i) {
        const auto& p = t.input_pins()[i];
        out += (i ? ", " : "") + (p ? std::to_string(*p) : std::string("std::nullopt"));
    }
    return out + "})";
}

std::string map_cpp(const AffineMap& m) {
    return "AffineMap(" + std::to_string(m.in_rank()) + ", " + std::to_string(m.out_rank()) + ", " +
           list_cpp(m.matrix()) + ", " + list_cpp(m.offsets()) + ")";
}

std::string literal_cpp(Expr::Literal kind, double value) {
    switch (kind) {
    case Expr::Literal::Int:
        return std::to_string(static_cast<int>(value));
    case Expr::Literal::Bool:
        return value != 0 ? "true" : "false";
    case Expr::Literal::Double:
        break;
    }
    return f64(value);
}

const char* reduce_op_cpp(ReduceOp op) {
    switch (op) {
    case ReduceOp::Sum:
        return "ReduceOp::Sum";
    case ReduceOp::Prod:
        return "ReduceOp::Prod";
    case ReduceOp::Max:
        return "ReduceOp::Max";
    case ReduceOp::Min:
        return "ReduceOp::Min";
    case ReduceOp::And:
        return "ReduceOp::And";
    case ReduceOp::Or:
        return "ReduceOp::Or";
    case ReduceOp::Custom:
        break;
    }
    return "ReduceOp::Custom";
}

const char* combiner_cpp(Combiner c) {
    switch (c) {
    case Combiner::Add:
        return "[](Sym acc, Sym x) { return acc + x; }";
    case Combiner::Mul:
        return "[](Sym acc, Sym x) { return acc * x; }";
    case Combiner::Max:
        return "[](Sym acc, Sym x) { return max(acc, x); }";
    case Combiner::Min:
        return "[](Sym acc, Sym x) { return min(acc, x); }";
    case Combiner::SelectMax:
        return "[](Sym acc, Sym x) { return select(acc < x, x, acc); }";
    case Combiner::ArgMax:
        break; // printed whole by argmax_cpp
    }
    return "?";
}

std::string data_cpp(const Op& op) {
    std::string type = cpp_type(op.dtype);
    if (op.values.empty() && op.shape.size() > 0)
        return "fuzz::leaf<" + type + ">(" + std::to_string(op.shape.size()) + ", " +
               std::to_string(op.seed) + "ull, " + value_kind_name(op.values_kind) + ")";
    std::string out = "std::vector<" + type + ">{";
    std::vector<double> v = op_values(op);
    for (std::size_t i = 0; i < v.size(); ++i)
        out += (i ? ", " : "") + cpp_value(v[i], op.dtype);
    return out + "}";
}

std::string expr_lambda(const Expr& e);

// A scan as a user writes it: the step as a lambda over the carries c and the slice x, the
// result picked from the ScanResult by an immediately invoked lambda.
std::string scan_cpp(const Op& op) {
    auto in = [&](std::size_t k) { return "v" + std::to_string(op.inputs.at(k)); };
    std::size_t next = 1 + static_cast<std::size_t>(op.carries);
    std::string closure = op.closure ? in(next++) : "";
    std::string matrix = op.extra == ScanExtra::Matmul ? in(next++) : "";
    std::string s = "[&] {\n";
    if (op.reverse) s += "        ScanOptions o;\n        o.reverse = true;\n";
    s += "        ScanResult r = scan(\n"
         "            [&](const std::vector<Array>& c, const std::vector<Array>& x) {\n"
         "                std::vector<Operand> ops = {";
    for (int k = 0; k < op.carries; ++k)
        s += "Operand(c[" + std::to_string(k) + "]), ";
    s += "Operand(x[0])";
    if (op.closure) s += ", Operand(" + closure + ")";
    switch (op.extra) {
    case ScanExtra::Sum:
        s += ", Operand(sum(x[0]))";
        break;
    case ScanExtra::Matmul:
        s += ", Operand(matmul(c[0], " + matrix + "))";
        break;
    case ScanExtra::Inner:
        s += ", Operand(scan([](const Array& a, const Array& v) { Array n = lazy_n_ary(" +
             expr_lambda(inner_scan_step()) +
             ", {Operand(a), Operand(sum(v))}); return std::pair{n, n}; }, full(Shape{}, 0.0, "
             "x[0].dtype()), x[0]).first)";
        break;
    case ScanExtra::None:
        break;
    }
    s += "};\n";
    std::string carries, ys;
    for (int k = 0; k <= op.carries; ++k) {
        std::string name = k < op.carries ? "n" + std::to_string(k) : "y";
        s += "                Array " + name + " = lazy_n_ary(" +
             expr_lambda(op.step.at(static_cast<std::size_t>(k))) + ", ops);\n";
        if (k < op.carries) carries += (k ? ", " : "") + name;
    }
    s += "                return ScanStep{{" + carries + "}, {y}};\n            },\n            {";
    for (int k = 0; k < op.carries; ++k)
        s += (k ? ", " : "") + in(1 + static_cast<std::size_t>(k));
    s += "}, {" + in(0) + "}, " + std::to_string(op.axis) + (op.reverse ? ", o" : "") + ");\n";
    std::string c = std::to_string(op.component);
    switch (op.scan_value) {
    case ScanValue::Carry:
        s += "        return r.carries[" + c + "];\n";
        break;
    case ScanValue::Ys:
        s += "        return r.ys[0];\n";
        break;
    case ScanValue::States:
        s += "        return r.states[" + c + "];\n";
        break;
    }
    return s + "    }()";
}

std::string op_cpp(const Op& op) {
    auto in = [&](int k) { return "v" + std::to_string(op.inputs.at(k)); };
    auto all = [&] {
        std::string s = "{";
        for (std::size_t k = 0; k < op.inputs.size(); ++k)
            s += (k ? ", " : "") + in(static_cast<int>(k));
        return s + "}";
    };
    switch (op.kind) {
    case OpKind::Data:
        if (op.placeholder)
            return "placeholder(" + shape_cpp(op.shape) + ", " + cpp_dtype(op.dtype) + ")";
        return "array(" + data_cpp(op) + ", " + shape_cpp(op.shape) + ")";
    case OpKind::Constant:
        return "constant(" + f64(op.value) + ", " + cpp_dtype(op.dtype) + ")";
    case OpKind::Full:
        return "full(" + shape_cpp(op.shape) + ", " + f64(op.value) + ", " + cpp_dtype(op.dtype) +
               ")";
    case OpKind::Iota:
        return "index_components(" + shape_cpp(op.shape) + ", " + std::to_string(op.axis) + ")";
    case OpKind::Map: {
        std::string s = "lazy_n_ary(" + expr_lambda(op.expr) + ", {";
        for (std::size_t k = 0; k < op.operands.size(); ++k) {
            const MapOperand& m = op.operands[k];
            s += (k ? ", " : "") + (m.slot >= 0
                                        ? "Operand(" + in(m.slot) + ")"
                                        : "Operand(" + literal_cpp(m.literal, m.value) + ")");
        }
        return s + "})";
    }
    case OpKind::ReshapeTransform:
        return "reshape(" + in(0) + ", " + transform_cpp(*op.transform) + ")";
    case OpKind::ReshapeShape:
        return "reshape(" + in(0) + ", " + shape_cpp(op.shape) + ")";
    case OpKind::View:
        return "view(" + in(0) + ", " + shape_cpp(op.shape) + ", " + map_cpp(op.map) + ")";
    case OpKind::BroadcastTo:
        return "broadcast_to(" + in(0) + ", " + shape_cpp(op.shape) + ")";
    case OpKind::Reduce:
        return std::string("reduce(") + reduce_op_cpp(op.reduce_op) + ", " + in(0) + ", " +
               list_cpp(op.axes) + ", " + (op.keepdims ? "true" : "false") + ")";
    case OpKind::CustomReduce:
        if (op.combiner == Combiner::ArgMax)
            return "reduce_multiple_value([](const std::vector<Sym>& acc, const std::vector<Sym>& "
                   "x) { Sym take = x[0] > acc[0] || (x[0] == acc[0] && x[1] < acc[1]); return "
                   "std::vector<Sym>{select(take, x[0], acc[0]), select(take, x[1], acc[1])}; }, "
                   "{" +
                   f64(op.value) + ", 0}, {" + in(0) + ", index_components(" + in(0) +
                   ".shape(), " + std::to_string(op.axes.at(0)) + ")}, " + list_cpp(op.axes) +
                   ", " + (op.keepdims ? "true" : "false") + ")[1]";
        return std::string("reduce(") + combiner_cpp(op.combiner) + ", " + f64(op.value) + ", " +
               in(0) + ", " + list_cpp(op.axes) + ", " + (op.keepdims ? "true" : "false") + ")";
    case OpKind::Fuse:
        return "fuse(" + all() + ")";
    case OpKind::Overwrite:
        return "overwrite(" + all() + ")";
    case OpKind::Stack:
        return "stack(" + std::to_string(op.axis) + ", " + all() + ")";
    case OpKind::Matmul:
        return "matmul(" + in(0) + ", " + in(1) + ")";
    case OpKind::Transpose:
        return "transpose(" + in(0) + ", " + list_cpp(op.axes) + ")";
    case OpKind::Pad: {
        std::string s = "pad(" + in(0) + ", {";
        for (std::size_t d = 0; d < op.pads.size(); ++d)
            s += (d ? ", {" : "{") + std::to_string(op.pads[d].first) + ", " +
                 std::to_string(op.pads[d].second) + "}";
        return s + "}, " + f64(op.value) + ")";
    }
    case OpKind::Flatten:
        return "flatten(" + in(0) + ", " + std::to_string(op.axis) + ", " +
               std::to_string(op.last) + ")";
    case OpKind::Unflatten:
        return "unflatten(" + in(0) + ", " + std::to_string(op.axis) + ", " + list_cpp(op.sizes) +
               ")";
    case OpKind::Rebase:
        return "rebase(" + in(0) + ")";
    case OpKind::Cast:
        return "cast(" + in(0) + ", " + cpp_dtype(op.dtype) + ")";
    case OpKind::Take:
        return "take(" + in(0) + ", " + in(1) + ", " + std::to_string(op.axis) + ")";
    case OpKind::Scan:
        return scan_cpp(op);
    }
    return "?";
}

std::string unary_cpp(ScalarOp op, const std::string& a) {
    switch (op) {
    case ScalarOp::Neg:
        return "-" + a;
    case ScalarOp::Not:
        return "!" + a;
    default:
        return std::string(scalar_op_name(op)) + "(" + a + ")";
    }
}

std::string binary_cpp(ScalarOp op, const std::string& a, const std::string& b) {
    const char* infix = nullptr;
    switch (op) {
    case ScalarOp::Add:
        infix = " + ";
        break;
    case ScalarOp::Sub:
        infix = " - ";
        break;
    case ScalarOp::Mul:
        infix = " * ";
        break;
    case ScalarOp::Div:
        infix = " / ";
        break;
    case ScalarOp::Mod:
        infix = " % ";
        break;
    case ScalarOp::BitAnd:
        infix = " & ";
        break;
    case ScalarOp::BitOr:
        infix = " | ";
        break;
    case ScalarOp::BitXor:
        infix = " ^ ";
        break;
    case ScalarOp::Shl:
        infix = " << ";
        break;
    case ScalarOp::Shr:
        infix = " >> ";
        break;
    case ScalarOp::Lt:
        infix = " < ";
        break;
    case ScalarOp::Le:
        infix = " <= ";
        break;
    case ScalarOp::Gt:
        infix = " > ";
        break;
    case ScalarOp::Ge:
        infix = " >= ";
        break;
    case ScalarOp::Eq:
        infix = " == ";
        break;
    case ScalarOp::Ne:
        infix = " != ";
        break;
    case ScalarOp::And:
        infix = " && ";
        break;
    case ScalarOp::Or:
        infix = " || ";
        break;
    default:
        break;
    }
    if (infix) return "(" + a + infix + b + ")";
    return std::string(scalar_op_name(op)) + "(" + a + ", " + b + ")";
}

std::string expr_lambda(const Expr& e) {
    return "[](const std::vector<Sym>& in) { return " + to_cpp(e) + "; }";
}

} // namespace

std::string to_cpp(const Expr& e) {
    switch (e.kind) {
    case Expr::Kind::Input:
        return e.input == Expr::kRunning ? "y" : "in[" + std::to_string(e.input) + "]";
    case Expr::Kind::Repeat: // the generator never nests them, so one name serves
        return "[&] { Sym y = " + to_cpp(e.args[0]) + "; for (int r = 0; r < " +
               std::to_string(e.input) + "; ++r) y = cast(" + to_cpp(e.args[1]) +
               ", y.dtype()); return y; }()";
    case Expr::Kind::Literal:
        return "Sym(" + literal_cpp(e.literal, e.value) + ")";
    case Expr::Kind::Unary:
        return unary_cpp(e.op, to_cpp(e.args[0]));
    case Expr::Kind::Binary:
        return binary_cpp(e.op, to_cpp(e.args[0]), to_cpp(e.args[1]));
    case Expr::Kind::Select:
        return "select(" + to_cpp(e.args[0]) + ", " + to_cpp(e.args[1]) + ", " + to_cpp(e.args[2]) +
               ")";
    case Expr::Kind::Cast:
        return "cast(" + to_cpp(e.args[0]) + ", " + cpp_dtype(e.to) + ")";
    }
    return "?";
}

std::string to_cpp(const FuzzProgram& p, const std::string& test_name) {
    std::ostringstream out;
    out << "// Reproducer printed by hedra's fuzzer (generator seed " << p.seed << ").\n"
        << "// Needs #include \"differential/differential.hpp\" and \"fuzz/lib/fuzz_data.hpp\".\n"
        << "TEST_CASE(\"" << test_name << "\") {\n";
    std::vector<std::string> phs, inputs;
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        const Op& op = p.ops[i];
        out << "    Array v" << i << " = " << op_cpp(op) << ";\n";
        if (op.kind == OpKind::Data && op.placeholder) {
            phs.push_back("v" + std::to_string(i));
            inputs.push_back("array(" + data_cpp(op) + ", " + shape_cpp(op.shape) +
                             ").node()->data");
        }
    }
    std::string outs = "{";
    for (std::size_t k = 0; k < p.outputs.size(); ++k)
        outs += (k ? ", v" : "v") + std::to_string(p.outputs[k]);
    outs += "}";
    if (phs.empty()) {
        out << "    test::check_differential(" << outs << ", test::Compare::Tolerance);\n";
    } else {
        std::string ph = "{", in = "{";
        for (std::size_t k = 0; k < phs.size(); ++k) {
            ph += (k ? ", " : "") + phs[k];
            in += (k ? ", " : "") + inputs[k];
        }
        out << "    std::vector<HostArray> inputs = " << in << "};\n"
            << "    ComputeOptions ref, omp;\n"
            << "    ref.backend = \"reference\";\n"
            << "    test::openmp_backend();\n"
            << "    omp.backend = \"openmp\";\n"
            << "    auto want = compile(" << outs << ", " << ph << "}, ref)(inputs);\n"
            << "    for (int threads : {1, 2}) {\n"
            << "        omp.num_threads = threads;\n"
            << "        auto got = compile(" << outs << ", " << ph << "}, omp)(inputs);\n"
            << "        for (std::size_t k = 0; k < want.size(); ++k)\n"
            << "            test::compare_arrays(got[k], want[k], test::Compare::Tolerance, {});\n"
            << "    }\n";
    }
    out << "}\n";
    return out.str();
}

} // namespace hedra::fuzz

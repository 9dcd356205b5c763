// Scalar expressions as C++ with the reference semantics (see c_expr.hpp).
#include "backends/common/c_expr.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

#include "core/error.hpp"
#include "core/f32_math_source.hpp"
#include "core/scalar_dag.hpp"
#include "scheduler/target.hpp"

namespace hedra::backend {
namespace {

// "i32", "i64" or "f32"/"f64" suffix of the prelude's helpers.
std::string suffix(DType t) {
    switch (t) {
    case DType::I32:
        return "i32";
    case DType::F32:
        return "f32";
    case DType::F64:
        return "f64";
    default:
        return "i64";
    }
}

std::string call(const std::string& f, const std::string& a) {
    return f + "(" + a + ")";
}
std::string call(const std::string& f, const std::string& a, const std::string& b) {
    return f + "(" + a + ", " + b + ")";
}

// Float unary math: f64 directly, f32 through double with one rounding (exp, log, tanh and
// sigmoid of f32 are the prelude's f32 functions, core/f32_math.hpp).
std::string float_math(const char* name, DType t, const std::string& x) {
    if (t == DType::F64) return std::string("__builtin_") + name + "(" + x + ")";
    return std::string("(float)__builtin_") + name + "((double)" + x + ")";
}

std::string unary(ScalarOp op, DType t, const std::string& x) {
    bool fl = is_float(t);
    switch (op) {
    case ScalarOp::Neg:
        if (fl) return "-" + x;
        return t == DType::Bool ? x : call("hd_neg_" + suffix(t), x);
    case ScalarOp::Not:
        return "!" + x;
    case ScalarOp::Abs:
        if (fl) return call(t == DType::F32 ? "__builtin_fabsf" : "__builtin_fabs", x);
        return t == DType::Bool ? x : call("hd_abs_" + suffix(t), x);
    case ScalarOp::Exp:
        return t == DType::F32 ? call("hd_exp_f32", x) : float_math("exp", t, x);
    case ScalarOp::Log:
        return t == DType::F32 ? call("hd_log_f32", x) : float_math("log", t, x);
    case ScalarOp::Sqrt:
        return call(t == DType::F32 ? "__builtin_sqrtf" : "__builtin_sqrt", x);
    case ScalarOp::Tanh:
        return t == DType::F32 ? call("hd_tanh_f32", x) : float_math("tanh", t, x);
    case ScalarOp::Sigmoid:
        return call("hd_sigmoid_" + suffix(t), x);
    case ScalarOp::Sin:
        return float_math("sin", t, x);
    case ScalarOp::Cos:
        return float_math("cos", t, x);
    case ScalarOp::Erf:
        return float_math("erf", t, x);
    case ScalarOp::Log1p:
        return float_math("log1p", t, x);
    case ScalarOp::Expm1:
        return float_math("expm1", t, x);
    case ScalarOp::Floor:
    case ScalarOp::Ceil:
    case ScalarOp::Round: {
        if (!fl) return x;
        const char* f = op == ScalarOp::Floor ? "floor" : op == ScalarOp::Ceil ? "ceil" : "rint";
        return std::string("__builtin_") + f + (t == DType::F32 ? "f(" : "(") + x + ")";
    }
    default:
        break;
    }
    internal_error(std::string("c_expr: unexpected unary '") + scalar_op_name(op) + "'");
}

std::string cast(DType from, DType to, const std::string& x) {
    if (from == to) return x;
    if (to == DType::Bool) return "(" + x + " != 0)";
    if (is_float(from) && is_integer(to)) return call("hd_to_" + suffix(to), "(double)" + x);
    return "(" + std::string(c_value_type(to)) + ")" + x;
}

std::string bool_arith(ScalarOp op, const std::string& a, const std::string& b) {
    switch (op) {
    case ScalarOp::Add:
        return "(" + a + " || " + b + ")";
    case ScalarOp::Sub:
        return "(" + a + " != " + b + ")";
    case ScalarOp::Mul:
        return "(" + a + " && " + b + ")";
    case ScalarOp::Div:
        return "(" + b + " && " + a + ")";
    case ScalarOp::Mod:
        return "(" + a + " && !" + b + ")";
    case ScalarOp::BitAnd:
        return "(" + a + " && " + b + ")";
    case ScalarOp::BitOr:
        return "(" + a + " || " + b + ")";
    case ScalarOp::BitXor:
        return "(" + a + " != " + b + ")";
    case ScalarOp::Pow:
        return "(!" + b + " || " + a + ")";
    case ScalarOp::Min:
        return "(" + a + " && " + b + ")";
    case ScalarOp::Max:
        return "(" + a + " || " + b + ")";
    default:
        break;
    }
    internal_error(std::string("c_expr: unexpected bool '") + scalar_op_name(op) + "'");
}

std::string binary(ScalarOp op, DType t, const std::string& a, const std::string& b) {
    switch (op) {
    case ScalarOp::Lt:
        return "(" + a + " < " + b + ")";
    case ScalarOp::Le:
        return "(" + a + " <= " + b + ")";
    case ScalarOp::Gt:
        return "(" + a + " > " + b + ")";
    case ScalarOp::Ge:
        return "(" + a + " >= " + b + ")";
    case ScalarOp::Eq:
        return "(" + a + " == " + b + ")";
    case ScalarOp::Ne:
        return "(" + a + " != " + b + ")";
    case ScalarOp::And:
        return "(" + a + " && " + b + ")";
    case ScalarOp::Or:
        return "(" + a + " || " + b + ")";
    default:
        break;
    }
    if (t == DType::Bool) return bool_arith(op, a, b);
    if (is_float(t)) {
        switch (op) {
        case ScalarOp::Add:
            return "(" + a + " + " + b + ")";
        case ScalarOp::Sub:
            return "(" + a + " - " + b + ")";
        case ScalarOp::Mul:
            return "(" + a + " * " + b + ")";
        case ScalarOp::Div:
            return "(" + a + " / " + b + ")";
        case ScalarOp::Mod:
            return call(t == DType::F32 ? "__builtin_fmodf" : "__builtin_fmod", a, b);
        default:
            break;
        }
    }
    switch (op) {
    case ScalarOp::Add:
        return call("hd_add_" + suffix(t), a, b);
    case ScalarOp::Sub:
        return call("hd_sub_" + suffix(t), a, b);
    case ScalarOp::Mul:
        return call("hd_mul_" + suffix(t), a, b);
    case ScalarOp::Div:
        return call("hd_div_" + suffix(t), a, b);
    case ScalarOp::Mod:
        return call("hd_mod_" + suffix(t), a, b);
    case ScalarOp::BitAnd:
        return "(" + a + " & " + b + ")";
    case ScalarOp::BitOr:
        return "(" + a + " | " + b + ")";
    case ScalarOp::BitXor:
        return "(" + a + " ^ " + b + ")";
    case ScalarOp::Shl:
        return call("hd_shl_" + suffix(t), a, b);
    case ScalarOp::Shr:
        return call("hd_shr_" + suffix(t), a, b);
    case ScalarOp::Pow:
        return call("hd_pow_" + suffix(t), a, b);
    case ScalarOp::Min:
        return call("hd_min_" + suffix(t), a, b);
    case ScalarOp::Max:
        return call("hd_max_" + suffix(t), a, b);
    default:
        break;
    }
    internal_error(std::string("c_expr: unexpected binary '") + scalar_op_name(op) + "'");
}

// Whether `e` is one parenthesized group, "(...)".
bool parenthesized(const std::string& e) {
    if (e.size() < 2 || e.front() != '(' || e.back() != ')') return false;
    int depth = 0;
    for (std::size_t i = 0; i + 1 < e.size(); ++i) {
        depth += e[i] == '(' ? 1 : e[i] == ')' ? -1 : 0;
        if (depth == 0) return false; // the first group closes before the end
    }
    return true;
}

struct Printer {
    const std::function<std::string(int)>& input;
    const std::string& indent;
    const std::string& prefix;
    std::string& out;
    std::unordered_map<const ScalarNode*, std::string> names;
    std::unordered_map<const ScalarNode*, int> depth; // of an expression written inline
    int next = 0;

    std::string bind(const ScalarNode& n, const std::string& value) {
        std::string name = prefix + std::to_string(next++);
        out += indent + "const " + c_value_type(n.dtype) + " " + name + " = " + value + ";\n";
        return name;
    }

    // Binds every node of `roots` not bound yet, operands first, and returns their values.
    // A root is always bound (its caller may read it several times); so is an input.
    std::vector<std::string> visit(const std::vector<ScalarExpr>& roots) {
        std::vector<ScalarExpr> order = topological_order(roots);
        std::vector<int> uses = use_counts(order, roots);
        std::unordered_set<const ScalarNode*> bound;
        for (const ScalarExpr& r : roots)
            bound.insert(r.get());
        for (std::size_t i = 0; i < order.size(); ++i) {
            const ScalarNode* n = order[i].get();
            if (!names.count(n)) names.emplace(n, value(*n, uses[i] == 1 && !bound.count(n)));
        }
        std::vector<std::string> values;
        for (const ScalarExpr& r : roots)
            values.push_back(names.at(r.get()));
        return values;
    }

    std::string value(const ScalarNode& n, bool used_once) {
        if (n.op == ScalarOp::Const) return c_literal(n);
        if (n.op == ScalarOp::Input) return bind(n, input(static_cast<int>(n.ivalue)));
        std::vector<std::string> a;
        int d = 0;
        for (const ScalarExpr& arg : n.args) {
            a.push_back(names.at(arg.get()));
            if (auto it = depth.find(arg.get()); it != depth.end()) d = std::max(d, it->second);
        }
        std::string e = c_operation(n, a);
        if (!used_once || d >= kMaxInlineDepth) return bind(n, e);
        depth.emplace(&n, d + 1);
        return operand_text(e);
    }
};

} // namespace

std::string operand_text(const std::string& e) {
    return parenthesized(e) ? e : "(" + e + ")";
}

std::string c_round_half(DType t, const std::string& x) {
    if (!is_half(t)) return x;
    return call(t == DType::BF16 ? "hd_round_bf16" : "hd_round_f16", x);
}

std::string c_operation(const ScalarNode& n, const std::vector<std::string>& a) {
    // The half formats compute in f32 and round each result (core/dtype.hpp).
    if (n.op == ScalarOp::Cast)
        return c_round_half(n.dtype,
                            cast(compute_dtype(n.args[0]->dtype), compute_dtype(n.dtype), a[0]));
    if (n.op == ScalarOp::Select) return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")";
    if (a.size() == 1) return c_round_half(n.dtype, unary(n.op, compute_dtype(n.dtype), a[0]));
    HEDRA_INTERNAL_CHECK(a.size() == 2, "c_operation: unexpected arity");
    return c_round_half(n.dtype, binary(n.op, compute_dtype(n.args[0]->dtype), a[0], a[1]));
}

// The spellings are core/dtypes.def's: bf16 and f16 compute in float and store as hd_bf16 /
// hd_f16 (the prelude's structs), bool stores as one byte.
const char* c_value_type(DType t) {
    return dtype_info(t).kernel_value;
}

const char* c_storage_type(DType t) {
    return dtype_info(t).kernel_storage;
}

std::string c_literal(const ScalarNode& e) {
    switch (e.dtype) {
    case DType::Bool:
        return e.ivalue ? "true" : "false";
    case DType::I32:
        if (e.ivalue == -2147483648LL) return "(-2147483647 - 1)";
        return e.ivalue < 0 ? "(" + std::to_string(e.ivalue) + ")" : std::to_string(e.ivalue);
    case DType::I64:
        if (e.ivalue == INT64_MIN) return "(-9223372036854775807LL - 1)";
        return "(" + std::to_string(e.ivalue) + "LL)";
    case DType::F32:
    case DType::F64:
    case DType::BF16:
    case DType::F16:
        break;
    }
    bool f32 = e.dtype != DType::F64; // a half constant holds a value of its format, in f32
    double v = e.fvalue;
    if (std::isnan(v)) return f32 ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
    if (std::isinf(v))
        return std::string(v < 0 ? "(-" : "(") + (f32 ? "__builtin_inff())" : "__builtin_inf())");
    char buf[64];
    std::snprintf(buf, sizeof buf, "%a", v);
    return "(" + std::string(buf) + (f32 ? "f)" : ")");
}

std::string print_scalar(const ScalarExpr& e, const std::function<std::string(int)>& input,
                         const std::string& indent, const std::string& prefix, std::string& out) {
    return print_scalars({e}, input, indent, prefix, out).at(0);
}

std::vector<std::string> print_scalars(const std::vector<ScalarExpr>& roots,
                                       const std::function<std::string(int)>& input,
                                       const std::string& indent, const std::string& prefix,
                                       std::string& out) {
    Printer p{input, indent, prefix, out, {}, {}, 0};
    return p.visit(roots);
}

std::string c_combine(ReduceOp op, DType t, const std::string& acc, const std::string& value) {
    t = compute_dtype(t); // half accumulators are f32 (c_value_type), rounded when stored
    switch (op) {
    case ReduceOp::Sum:
        return binary(ScalarOp::Add, t, acc, value);
    case ReduceOp::Prod:
        return binary(ScalarOp::Mul, t, acc, value);
    case ReduceOp::Max:
        return binary(ScalarOp::Max, t, acc, value);
    case ReduceOp::Min:
        return binary(ScalarOp::Min, t, acc, value);
    case ReduceOp::And:
        return "(" + acc + " && " + value + ")";
    case ReduceOp::Or:
        return "(" + acc + " || " + value + ")";
    case ReduceOp::Custom:
        break;
    }
    internal_error("c_expr: c_combine of a custom reduction");
}

std::string c_prelude(int vector_bytes) {
    // The register tile's vector types are one vector register of the target.
    return "#define HD_VECTOR_BYTES " + std::to_string(vector_bytes) + "\n" + c_prelude_body();
}

const std::string& c_prelude_body() {
    static const std::string text = R"(typedef unsigned int hd_u32;
typedef unsigned long long hd_u64;
#define HD_INT_OPS(S, T, U)                                                                       \
    static inline T hd_add_##S(T a, T b) { return (T)((U)a + (U)b); }                            \
    static inline T hd_sub_##S(T a, T b) { return (T)((U)a - (U)b); }                            \
    static inline T hd_mul_##S(T a, T b) { return (T)((U)a * (U)b); }                            \
    static inline T hd_neg_##S(T a) { return (T)((U)0 - (U)a); }                                 \
    static inline T hd_abs_##S(T a) { return a < 0 ? hd_neg_##S(a) : a; }                       \
    static inline T hd_div_##S(T a, T b) { return b == 0 ? 0 : b == -1 ? hd_neg_##S(a) : a / b; } \
    static inline T hd_mod_##S(T a, T b) { return b == 0 ? a : b == -1 ? 0 : a % b; }           \
    static inline T hd_shl_##S(T a, T b) {                                                       \
        return b < 0 || b >= (T)(8 * sizeof(T)) ? 0 : (T)((U)a << b);                            \
    }                                                                                            \
    static inline T hd_shr_##S(T a, T b) {                                                       \
        return b < 0 || b >= (T)(8 * sizeof(T)) ? (a < 0 ? -1 : 0) : a >> b;                     \
    }                                                                                            \
    static inline T hd_min_##S(T a, T b) { return b < a ? b : a; }                               \
    static inline T hd_max_##S(T a, T b) { return a < b ? b : a; }                               \
    static inline T hd_pow_##S(T a, T b) {                                                       \
        if (b < 0) return 0;                                                                     \
        U r = 1, x = (U)a;                                                                       \
        for (U e = (U)b; e; e >>= 1, x *= x)                                                     \
            if (e & 1) r *= x;                                                                   \
        return (T)r;                                                                             \
    }
HD_INT_OPS(i32, int, hd_u32)
HD_INT_OPS(i64, long long, hd_u64)
#undef HD_INT_OPS
static inline float hd_min_f32(float a, float b) { return a != a || b != b ? __builtin_nanf("") : b < a ? b : a; }
static inline float hd_max_f32(float a, float b) { return a != a || b != b ? __builtin_nanf("") : a < b ? b : a; }
static inline double hd_min_f64(double a, double b) { return a != a || b != b ? __builtin_nan("") : b < a ? b : a; }
static inline double hd_max_f64(double a, double b) { return a != a || b != b ? __builtin_nan("") : a < b ? b : a; }
static inline float hd_pow_f32(float a, float b) { return (float)__builtin_pow((double)a, (double)b); }
static inline double hd_pow_f64(double a, double b) { return __builtin_pow(a, b); }
static inline double hd_sigmoid_f64(double x) { return 1.0 / (1.0 + __builtin_exp(-x)); }
static inline int hd_to_i32(double v) { return v > -2147483649.0 && v < 2147483648.0 ? (int)v : 0; }
static inline long long hd_to_i64(double v) {
    return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? (long long)v : 0;
}
typedef float hd_vf __attribute__((vector_size(HD_VECTOR_BYTES), aligned(4)));
typedef double hd_vd __attribute__((vector_size(HD_VECTOR_BYTES), aligned(8)));
typedef float hd_vf32 __attribute__((vector_size(32), aligned(4)));
typedef double hd_vd32 __attribute__((vector_size(32), aligned(8)));
static inline long hd_floord(long a, long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
static inline long hd_lmin(long a, long b) { return a < b ? a : b; }
static inline long hd_lmax(long a, long b) { return a < b ? b : a; }
)" + std::string(f32_math_source()) +
                                    R"(
// The half formats in memory: read as f32, written rounded to nearest even.
#define HD_HALF_STORAGE(T, TO_F32, FROM_F32)                                                   \
    struct T {                                                                                  \
        unsigned short bits;                                                                    \
        operator float() const { return TO_F32(bits); }                                         \
        T& operator=(float v) {                                                                 \
            bits = FROM_F32(v);                                                                 \
            return *this;                                                                       \
        }                                                                                       \
        T& operator+=(float v) { return *this = (float)*this + v; }                            \
        T& operator*=(float v) { return *this = (float)*this * v; }                            \
    };
HD_HALF_STORAGE(hd_bf16, hd_bf16_to_f32, hd_f32_to_bf16)
HD_HALF_STORAGE(hd_f16, hd_f16_to_f32, hd_f32_to_f16)
#undef HD_HALF_STORAGE
)";
    return text;
}

} // namespace hedra::backend

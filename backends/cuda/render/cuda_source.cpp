// Printing helpers shared by the CUDA kernel templates (see cuda_source.hpp).
#include "backends/cuda/render/cuda_source.hpp"

#include <algorithm>

#include "backends/common/c_expr.hpp"
#include "core/error.hpp"
#include "core/scalar_dag.hpp"

namespace hedra::backend::cuda {

std::string SourceBuilder::next_name(int kernel) {
    int n = 0;
    for (const CudaLaunch& l : launches)
        n += l.kernel == kernel;
    return program.kernels.at(kernel).name + "_" + std::to_string(n);
}

int SourceBuilder::add_scratch(DType dtype, std::int64_t elements) {
    scratch.push_back({dtype, elements});
    return static_cast<int>(program.buffers.size() + scratch.size() - 1);
}

DType SourceBuilder::buffer_dtype(int buffer) const {
    std::size_t nb = program.buffers.size();
    return static_cast<std::size_t>(buffer) < nb ? program.buffers.at(buffer).dtype
                                                 : scratch.at(buffer - nb).dtype;
}

std::string SourceBuilder::buffer_name(int buffer) const {
    std::size_t nb = program.buffers.size();
    return static_cast<std::size_t>(buffer) < nb ? program.buffers.at(buffer).name
                                                 : "hd_scratch" + std::to_string(buffer - nb);
}

const std::vector<std::int64_t>& SourceBuilder::buffer_sizes(int buffer) const {
    return program.buffers.at(buffer).sizes;
}

void KernelParams::add(int buffer, bool write) {
    auto it = std::lower_bound(buffers.begin(), buffers.end(), buffer);
    std::size_t i = static_cast<std::size_t>(it - buffers.begin());
    if (it == buffers.end() || *it != buffer) {
        buffers.insert(it, buffer);
        written.insert(written.begin() + static_cast<std::ptrdiff_t>(i), write);
    } else if (write) {
        written[i] = true;
    }
}

std::string KernelParams::declaration(const SourceBuilder& b) const {
    std::string s;
    for (std::size_t i = 0; i < buffers.size(); ++i) {
        if (i) s += ", ";
        s += std::string(written[i] ? "" : "const ") + c_storage_type(b.buffer_dtype(buffers[i])) +
             "* __restrict__ " + b.buffer_name(buffers[i]);
    }
    return s;
}

KernelParams statement_params(const poly::Statement& st) {
    KernelParams p;
    p.add(st.write_buffer, true);
    for (const poly::Statement::TupleWrite& w : st.tuple_writes)
        p.add(w.buffer, true);
    for (const poly::Read& r : st.reads)
        if (r.buffer >= 0) p.add(r.buffer, false);
    return p;
}

void emit_kernel(SourceBuilder& b, const std::string& name, const KernelParams& params,
                 int max_threads, const std::string& body, int min_blocks) {
    std::string bounds = std::to_string(max_threads);
    if (min_blocks > 0) bounds += ", " + std::to_string(min_blocks);
    b.functions += "extern \"C\" __global__ void __launch_bounds__(" + bounds + ") " + name + "(" +
                   params.declaration(b) + ") {\n" + body + "}\n";
    std::string args;
    for (std::size_t i = 0; i < params.buffers.size(); ++i) {
        args += std::string(i ? ", " : "") + "(" + (params.written[i] ? "" : "const ") +
                c_storage_type(b.buffer_dtype(params.buffers[i])) + "*)hd_args[" +
                std::to_string(i) + "]";
    }
    b.functions += "#ifdef HEDRA_CUDA_EMULATION\nextern \"C\" void " + name +
                   "_emu(void** hd_args) { (void)hd_args; " + name + "(" + args +
                   "); }\n#endif\n\n";
}

namespace {
thread_local bool g_index32 = false;
} // namespace

Index32Scope::Index32Scope(bool on) : saved_(g_index32) {
    g_index32 = on;
}
Index32Scope::~Index32Scope() {
    g_index32 = saved_;
}

const char* index_type() {
    return g_index32 ? "int" : "long";
}

std::string int_text(std::int64_t v) {
    const char* suffix = g_index32 ? "" : "L";
    return v < 0 ? "(" + std::to_string(v) + suffix + ")" : std::to_string(v) + suffix;
}

std::string linear_index(const SourceBuilder& b, int buffer, const AffineMap& access) {
    const std::vector<std::int64_t>& sizes = b.buffer_sizes(buffer);
    int rank = static_cast<int>(sizes.size());
    std::vector<std::int64_t> coef(static_cast<std::size_t>(access.in_rank()), 0);
    std::int64_t constant = 0, row = 1;
    for (int r = rank - 1; r >= 0; --r) {
        for (int k = 0; k < access.in_rank(); ++k)
            coef[k] += row * access.coeff(r, k);
        constant += row * access.offset(r);
        row *= sizes[r];
    }
    std::string s;
    for (int k = 0; k < access.in_rank(); ++k) {
        if (coef[k] == 0) continue;
        if (!s.empty()) s += " + ";
        s += (coef[k] == 1 ? "" : int_text(coef[k]) + " * ") + "i" + std::to_string(k);
    }
    if (constant != 0 || s.empty()) s += (s.empty() ? "" : " + ") + int_text(constant);
    return s;
}

std::string load(const SourceBuilder& b, int buffer, const AffineMap& access) {
    std::string e = b.buffer_name(buffer) + "[" + linear_index(b, buffer, access) + "]";
    return b.buffer_dtype(buffer) == DType::Bool ? "(" + e + " != 0)" : e;
}

std::string index_read(const poly::Read& read, DType t) {
    std::string s;
    for (int k = 0; k < read.access.in_rank(); ++k) {
        std::int64_t c = read.access.coeff(0, k);
        if (c != 0) s += (s.empty() ? "" : " + ") + int_text(c) + " * i" + std::to_string(k);
    }
    s += (s.empty() ? "" : " + ") + int_text(read.access.offset(0));
    return "(" + std::string(c_value_type(t)) + ")(" + s + ")";
}

namespace {
std::function<std::string(int)> reader(const SourceBuilder& b, const poly::Statement& st,
                                       const ScalarExpr& value,
                                       const std::function<std::string(int)>& override_read) {
    return [&b, &st, value, override_read](int k) {
        if (override_read) {
            std::string s = override_read(k);
            if (!s.empty()) return s;
        }
        const poly::Read& r = st.reads.at(k);
        if (r.buffer >= 0) return load(b, r.buffer, r.access);
        return index_read(r, input_dtype({value}, k));
    };
}
} // namespace

std::string print_value(const SourceBuilder& b, const poly::Statement& st,
                        const std::string& indent, const std::string& prefix, std::string& out,
                        const std::function<std::string(int)>& override_read) {
    return print_scalar(st.value, reader(b, st, st.value, override_read), indent, prefix, out);
}

std::vector<std::string> print_tuple_values(const SourceBuilder& b, const poly::Statement& st,
                                            const std::string& indent, const std::string& prefix,
                                            std::string& out,
                                            const std::function<std::string(int)>& override_read) {
    std::vector<ScalarExpr> roots{st.value};
    for (const poly::Statement::TupleWrite& w : st.tuple_writes)
        roots.push_back(w.value);
    auto read = [&](int k) {
        if (override_read) {
            std::string s = override_read(k);
            if (!s.empty()) return s;
        }
        const poly::Read& r = st.reads.at(k);
        if (r.buffer >= 0) return load(b, r.buffer, r.access);
        return index_read(r, input_dtype(roots, k));
    };
    return print_scalars(roots, read, indent, prefix, out);
}

std::string print_combine(const poly::Statement& st, DType t, const std::string& acc,
                          const std::string& value, const std::string& indent,
                          const std::string& prefix, std::string& out) {
    if (st.reduce_op != ReduceOp::Custom) return c_combine(st.reduce_op, t, acc, value);
    auto comb = [&](int k) { return k == 0 ? acc : value; };
    return print_scalar(st.combiner, comb, indent, prefix, out);
}

void print_fold(const SourceBuilder& b, const poly::Statement& st, const std::string& acc,
                const std::string& indent, const std::string& prefix, std::string& out,
                const std::function<std::string(int)>& override_read) {
    DType t = b.buffer_dtype(st.write_buffer);
    const ScalarExpr& v = st.value;
    if (st.reduce_op == ReduceOp::Sum && is_float(t) && v->op == ScalarOp::Mul) {
        auto read = reader(b, st, v, override_read);
        std::vector<std::string> xy = print_scalars(v->args, read, indent, prefix, out);
        const std::string &x = xy[0], &y = xy[1];
        const char* fma = t == DType::F32 ? "__fmaf_rn(" : "__fma_rn(";
        out += indent + acc + " = " + fma + x + ", " + y + ", " + acc + ");\n";
        return;
    }
    std::string value = print_value(b, st, indent, prefix, out, override_read);
    std::string combined = print_combine(st, t, acc, value, indent, prefix + "c", out);
    out += indent + acc + " = " + combined + ";\n";
}

std::string store_value(DType t, const std::string& value) {
    return t == DType::Bool ? "(unsigned char)(" + value + ")" : value;
}

std::string identity_literal(ReduceOp op, DType t) {
    bool fl = is_float(t);
    std::string inf = t == DType::F32 ? "__int_as_float(0x7f800000)"
                                      : "__longlong_as_double(0x7ff0000000000000LL)";
    std::string max_int = t == DType::I32 ? "2147483647" : "9223372036854775807LL";
    std::string min_int = t == DType::I32 ? "(-2147483647 - 1)" : "(-9223372036854775807LL - 1)";
    std::string cast = "(" + std::string(c_value_type(t)) + ")";
    switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Or:
        return cast + "0";
    case ReduceOp::Prod:
    case ReduceOp::And:
        return cast + "1";
    case ReduceOp::Max:
        if (t == DType::Bool) return "false";
        return fl ? "(-" + inf + ")" : min_int;
    case ReduceOp::Min:
        if (t == DType::Bool) return "true";
        return fl ? inf : max_int;
    case ReduceOp::Custom:
        break;
    }
    internal_error("cuda: no identity for a custom reduction");
}

void print_unflatten(const std::string& flat, const std::vector<std::int64_t>& extents,
                     const std::vector<std::string>& counters, const std::string& indent,
                     std::string& out) {
    HEDRA_INTERNAL_CHECK(extents.size() == counters.size(), "cuda: unflatten arity");
    if (extents.empty()) return;
    // 32-bit division by a constant is a multiply and a shift; 64-bit is a dozen instructions.
    bool narrow = product(extents) <= 0xffffffffLL;
    std::string rest = "hd_rest_" + counters.back(), type = narrow ? "unsigned" : "long";
    auto k = [&](std::int64_t v) { return narrow ? std::to_string(v) + "u" : int_text(v); };
    out += indent + type + " " + rest + " = (" + type + ")" + flat + ";\n";
    for (std::size_t d = extents.size(); d-- > 0;) {
        std::string it = index_type();
        if (d == 0) {
            out += indent + "const " + it + " " + counters[d] + " = (" + it + ")" + rest + ";\n";
        } else if (extents[d] == 1) {
            out += indent + "const " + it + " " + counters[d] + " = " + int_text(0) + ";\n";
        } else {
            out += indent + "const " + it + " " + counters[d] + " = (" + it + ")(" + rest + " % " +
                   k(extents[d]) + ");\n";
            out += indent + rest + " /= " + k(extents[d]) + ";\n";
        }
    }
    out += indent + "(void)" + rest + ";\n";
}

std::int64_t product(const std::vector<std::int64_t>& v) {
    std::int64_t p = 1;
    for (std::int64_t x : v)
        p *= x;
    return p;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
    return (a + b - 1) / b;
}

const std::string& cuda_prelude() {
    static const std::string text = [] {
        std::string s = R"(// generated by hedra (cuda backend)
#if defined(__CUDACC_RTC__)
// c_expr prints the GCC/Clang builtins; NVRTC knows CUDA's device math functions instead.
#define __builtin_exp exp
#define __builtin_log log
#define __builtin_tanh tanh
#define __builtin_sin sin
#define __builtin_cos cos
#define __builtin_erf erf
#define __builtin_log1p log1p
#define __builtin_expm1 expm1
#define __builtin_floor floor
#define __builtin_floorf floorf
#define __builtin_memcpy memcpy
#define __builtin_fmaf fmaf
#define __builtin_ceil ceil
#define __builtin_ceilf ceilf
#define __builtin_rint rint
#define __builtin_rintf rintf
#define __builtin_fmod fmod
#define __builtin_fmodf fmodf
#define __builtin_pow pow
#define __builtin_sqrt sqrt
#define __builtin_sqrtf sqrtf
#define __builtin_fabs fabs
#define __builtin_fabsf fabsf
#define __builtin_nanf(s) __int_as_float(0x7fffffff)
#define __builtin_nan(s) __longlong_as_double(0x7ff8000000000000LL)
#define __builtin_inff() __int_as_float(0x7f800000)
#define __builtin_inf() __longlong_as_double(0x7ff0000000000000LL)
#endif
)";
        // The C helpers; device code uses none of their vector types (any width compiles).
        return s + c_prelude(32) + "\n";
    }();
    return text;
}

} // namespace hedra::backend::cuda

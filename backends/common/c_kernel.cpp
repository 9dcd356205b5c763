// The pieces of template-printed kernels (see c_kernel.hpp).
#include "backends/common/c_kernel.hpp"

#include <algorithm>
#include <numeric>

#include "backends/common/c_access.hpp"
#include "backends/common/c_expr.hpp"
#include "core/error.hpp"
#include "core/scalar_dag.hpp"
#include "scheduler/kernel_forms.hpp"

namespace hedra::backend {

int KernelBuffers::add_scratch(DType dtype, std::int64_t elements) {
    scratch.push_back({dtype, elements});
    return static_cast<int>(program.buffers.size() + scratch.size() - 1);
}

DType KernelBuffers::buffer_dtype(int buffer) const {
    std::size_t nb = program.buffers.size();
    return static_cast<std::size_t>(buffer) < nb ? program.buffers.at(buffer).dtype
                                                 : scratch.at(buffer - nb).dtype;
}

std::string KernelBuffers::buffer_name(int buffer) const {
    std::size_t nb = program.buffers.size();
    return static_cast<std::size_t>(buffer) < nb ? program.buffers.at(buffer).name
                                                 : "hd_scratch" + std::to_string(buffer - nb);
}

const std::vector<std::int64_t>& KernelBuffers::buffer_sizes(int buffer) const {
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

std::string KernelParams::declaration(const KernelBuffers& b) const {
    std::string s;
    for (std::size_t i = 0; i < buffers.size(); ++i) {
        if (i) s += ", ";
        s += std::string(written[i] ? "" : "const ") + c_storage_type(b.buffer_dtype(buffers[i])) +
             "* " + b.dialect.restrict_qualifier + " " + b.buffer_name(buffers[i]);
    }
    return s;
}

void KernelParams::add(const KernelParams& other) {
    for (std::size_t i = 0; i < other.buffers.size(); ++i)
        add(other.buffers[i], other.written[i]);
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

std::string linear_index(const KernelBuffers& b, int buffer, const AffineMap& access) {
    return c_element_index(b.program.buffers.at(static_cast<std::size_t>(buffer)), access);
}

std::string load(const KernelBuffers& b, int buffer, const AffineMap& access) {
    return c_loaded(b.buffer_dtype(buffer),
                    b.buffer_name(buffer) + "[" + linear_index(b, buffer, access) + "]");
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

std::string covered_by(const poly::Statement& s, const poly::Statement& t) {
    std::string cond;
    for (int row = 0; row < s.write_access.out_rank(); ++row) {
        sched::Progression p;
        sched::row_progression(t, row, p);
        // d = (s's coordinate on this axis) - (t's first one there)
        std::string d;
        for (int c = 0; c < s.write_access.in_rank(); ++c)
            if (std::int64_t a = s.write_access.coeff(row, c); a != 0)
                d += (d.empty() ? "" : " + ") + (a == 1 ? "" : int_text(a) + " * ") + "i" +
                     std::to_string(c);
        std::int64_t shift = s.write_access.offset(row) - p.offset;
        if (d.empty())
            d = int_text(shift);
        else if (shift != 0)
            d += (shift > 0 ? " + " : " - ") + int_text(shift < 0 ? -shift : shift);
        d = "(" + d + ")";
        std::string term;
        if (p.step == 0)
            term = d + " == 0";
        else if (p.step == 1)
            term = d + " >= 0 && " + d + " < " + int_text(p.count);
        else
            term = d + " % " + int_text(p.step) + " == 0 && " + d + " / " + int_text(p.step) +
                   " >= 0 && " + d + " / " + int_text(p.step) + " < " + int_text(p.count);
        cond += (cond.empty() ? "" : " && ") + ("(" + term + ")");
    }
    return cond.empty() ? "true" : cond;
}

std::string store_line(const KernelBuffers& b, int buffer, const AffineMap& access,
                       const std::string& value, const std::string& indent) {
    return indent + b.buffer_name(buffer) + "[" + linear_index(b, buffer, access) +
           "] = " + store_value(b.buffer_dtype(buffer), value) + ";\n";
}

namespace {
// The values of `roots` at the counters i0.. (reads from global memory unless overridden).
std::vector<std::string> print_roots(const KernelBuffers& b, const poly::Statement& st,
                                     const std::vector<ScalarExpr>& roots,
                                     const std::string& indent, const std::string& prefix,
                                     std::string& out,
                                     const std::function<std::string(int)>& override_read) {
    auto read = [&](int k) {
        if (override_read) {
            std::string s = override_read(k);
            if (!s.empty()) return s;
        }
        const poly::Read& r = st.reads.at(k);
        if (r.buffer >= 0 && r.is_indirect())
            return c_loaded(b.buffer_dtype(r.buffer), c_read_element(b.program, st, r));
        if (r.buffer >= 0) return load(b, r.buffer, r.access);
        return index_read(r, input_dtype(roots, k));
    };
    return print_scalars(roots, read, indent, prefix, out);
}
} // namespace

std::vector<std::string> print_tuple_values(const KernelBuffers& b, const poly::Statement& st,
                                            const std::string& indent, const std::string& prefix,
                                            std::string& out,
                                            const std::function<std::string(int)>& override_read) {
    std::vector<ScalarExpr> roots{st.value};
    for (const poly::Statement::TupleWrite& w : st.tuple_writes)
        roots.push_back(w.value);
    return print_roots(b, st, roots, indent, prefix, out, override_read);
}

std::string print_value(const KernelBuffers& b, const poly::Statement& st,
                        const std::string& indent, const std::string& prefix, std::string& out,
                        const std::function<std::string(int)>& override_read) {
    return print_roots(b, st, {st.value}, indent, prefix, out, override_read)[0];
}

void print_statement_call(const KernelBuffers& b, const poly::Statement& st,
                          const sched::AstNode& call, const std::string& in, std::string& out) {
    std::string i2 = in + "    ";
    out += in + "{\n" + c_counter_lines(call, i2);
    if (!st.tuple_writes.empty()) {
        std::vector<std::string> values = print_tuple_values(b, st, i2, "t", out);
        std::vector<int> buffers{st.write_buffer};
        for (const poly::Statement::TupleWrite& w : st.tuple_writes)
            buffers.push_back(w.buffer);
        for (std::size_t j = 0; j < buffers.size(); ++j)
            out += store_line(b, buffers[j], st.write_access, values[j], i2);
        out += in + "}\n";
        return;
    }
    DType t = b.buffer_dtype(st.write_buffer);
    std::string value = print_value(b, st, i2, "t", out);
    const std::string target = c_write_element(b.program, st); // scatter_add's at its indices
    if (st.kind == poly::StatementKind::Update) {
        out += i2 + "const " + c_value_type(t) + " hd_acc = " + c_loaded(t, target) + ";\n";
        value = print_combine(st, t, "hd_acc", value, i2, "u", out);
    }
    out += i2 + target + " = " + store_value(t, value) + ";\n" + in + "}\n";
}

std::string print_combine(const poly::Statement& st, DType t, const std::string& acc,
                          const std::string& value, const std::string& indent,
                          const std::string& prefix, std::string& out) {
    if (st.reduce_op != ReduceOp::Custom) return c_combine(st.reduce_op, t, acc, value);
    auto comb = [&](int k) { return k == 0 ? acc : value; };
    return print_scalar(st.combiner, comb, indent, prefix, out);
}

void print_fold(const KernelBuffers& b, const poly::Statement& st, const std::string& acc,
                const std::string& indent, const std::string& prefix, std::string& out,
                const std::function<std::string(int)>& override_read) {
    DType t = b.buffer_dtype(st.write_buffer);
    const ScalarExpr& v = st.value;
    if (st.reduce_op == ReduceOp::Sum && is_float(t) && v->op == ScalarOp::Mul) {
        std::vector<std::string> xy =
            print_roots(b, st, v->args, indent, prefix, out, override_read);
        const std::string& fma = t == DType::F32 ? b.dialect.fma_f32 : b.dialect.fma_f64;
        out += indent + acc + " = " + fma + "(" + xy[0] + ", " + xy[1] + ", " + acc + ");\n";
        return;
    }
    std::string value = print_value(b, st, indent, prefix, out, override_read);
    std::string combined = print_combine(st, t, acc, value, indent, prefix + "c", out);
    out += indent + acc + " = " + combined + ";\n";
}

std::string store_value(DType t, const std::string& value) {
    return t == DType::Bool ? "(unsigned char)(" + value + ")" : value;
}

std::string identity_literal(const CDialect& d, ReduceOp op, DType t) {
    bool fl = is_float(t);
    std::string inf = t == DType::F32 ? d.inf_f32 : d.inf_f64;
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
    internal_error("c_kernel: no identity for a custom reduction");
}

void print_unflatten(const std::string& flat, const std::vector<std::int64_t>& extents,
                     const std::vector<std::string>& counters, const std::string& indent,
                     std::string& out) {
    HEDRA_INTERNAL_CHECK(extents.size() == counters.size(), "c_kernel: unflatten arity");
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

void print_unflatten(const std::string& flat, const std::vector<std::int64_t>& extents,
                     const std::vector<int>& counters, const std::string& indent,
                     std::string& out) {
    print_unflatten(flat, extents_of(extents, counters), counter_names(counters), indent, out);
}

std::vector<std::string> counter_names(const std::vector<int>& counters) {
    std::vector<std::string> n;
    for (int c : counters)
        n.push_back("i" + std::to_string(c));
    return n;
}

std::vector<std::string> counter_names(std::size_t rank) {
    std::vector<int> counters(rank);
    std::iota(counters.begin(), counters.end(), 0);
    return counter_names(counters);
}

std::vector<std::int64_t> extents_of(const std::vector<std::int64_t>& extents,
                                     const std::vector<int>& counters) {
    std::vector<std::int64_t> e;
    for (int c : counters)
        e.push_back(extents[static_cast<std::size_t>(c)]);
    return e;
}

std::string grid_stride_loop(const CDialect& d, const std::string& var, const std::string& end,
                             bool per_thread, const std::string& type) {
    const std::string &bx = d.block_index, &gd = d.grid_blocks;
    if (!per_thread)
        return "    for (" + type + " " + var + " = " + bx + ".x; " + var + " < " + end + "; " +
               var + " += " + gd + ".x) {\n";
    std::string cast = "(" + type + ")";
    return "    const " + type + " hd_stride = " + cast + gd + ".x * " + d.block_threads +
           ".x;\n    for (" + type + " " + var + " = " + cast + bx + ".x * " + d.block_threads +
           ".x + " + d.thread_index + ".x; " + var + " < " + end + "; " + var +
           " += hd_stride) {\n";
}

std::string unrolled_loop(const CDialect& d, const std::string& in, const std::string& var,
                          std::int64_t n) {
    return in + d.unroll + "\n" + in + "for (int " + var + " = 0; " + var + " < " +
           std::to_string(n) + "; ++" + var + ")";
}

std::string lin(const std::vector<std::pair<std::int64_t, std::string>>& terms,
                std::int64_t constant) {
    std::string s;
    for (const auto& [k, v] : terms) {
        if (k == 0) continue;
        if (!s.empty()) s += " + ";
        s += (k == 1 ? "" : "(" + std::to_string(k) + ") * ") + "(" + v + ")";
    }
    if (constant != 0 || s.empty()) s += (s.empty() ? "" : " + ") + std::to_string(constant);
    return s;
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

} // namespace hedra::backend

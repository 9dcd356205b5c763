// Index arithmetic of printed kernels (see c_access.hpp).
#include "backends/common/c_access.hpp"

namespace hedra::backend {

using sched::AstExpr;

std::string c_int(std::int64_t v) {
    return v < 0 ? "(" + std::to_string(v) + "L)" : std::to_string(v) + "L";
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

std::string c_index_expr(const AstExpr& e) {
    switch (e.kind) {
    case AstExpr::Kind::Int:
        return c_int(e.value);
    case AstExpr::Kind::Id:
        return e.name;
    case AstExpr::Kind::Op:
        break;
    }
    auto a = [&](std::size_t i) { return c_index_expr(e.args[i]); };
    auto bin = [&](const char* op) { return "(" + a(0) + op + a(1) + ")"; };
    switch (e.op) {
    case AstExpr::Op::Add:
        return bin(" + ");
    case AstExpr::Op::Sub:
        return bin(" - ");
    case AstExpr::Op::Mul:
        return bin(" * ");
    case AstExpr::Op::Neg:
        return "(-" + a(0) + ")";
    case AstExpr::Op::Div:
    case AstExpr::Op::PDivQ:
        return bin(" / ");
    case AstExpr::Op::PDivR:
    case AstExpr::Op::ZDivR:
        return bin(" % ");
    case AstExpr::Op::FloorDiv:
        return "hd_floord(" + a(0) + ", " + a(1) + ")";
    case AstExpr::Op::Min:
    case AstExpr::Op::Max: {
        const char* f = e.op == AstExpr::Op::Min ? "hd_lmin(" : "hd_lmax(";
        std::string s = a(0);
        for (std::size_t i = 1; i < e.args.size(); ++i)
            s = f + s + ", " + a(i) + ")";
        return s;
    }
    case AstExpr::Op::Select:
        return "(" + a(0) + " ? " + a(1) + " : " + a(2) + ")";
    case AstExpr::Op::Eq:
        return bin(" == ");
    case AstExpr::Op::Le:
        return bin(" <= ");
    case AstExpr::Op::Lt:
        return bin(" < ");
    case AstExpr::Op::Ge:
        return bin(" >= ");
    case AstExpr::Op::Gt:
        return bin(" > ");
    case AstExpr::Op::And:
        return bin(" && ");
    case AstExpr::Op::Or:
        return bin(" || ");
    }
    return "0";
}

std::string c_element_index(const poly::Buffer& buffer, const AffineMap& access,
                            const std::vector<std::string>& columns) {
    auto column = [&](std::size_t k) {
        return k < columns.size() && !columns[k].empty() ? "(" + columns[k] + ")"
                                                         : "i" + std::to_string(k);
    };
    LinearIndex li = linear_index(buffer, access);
    std::string s;
    for (std::size_t k = 0; k < li.coef.size(); ++k) {
        if (li.coef[k] == 0) continue;
        if (!s.empty()) s += " + ";
        s += (li.coef[k] == 1 ? "" : int_text(li.coef[k]) + " * ") + column(k);
    }
    if (li.constant != 0 || s.empty()) s += (s.empty() ? "" : " + ") + int_text(li.constant);
    if (buffer.row_window > 0) { // row r at r mod window (a power of two), in its band's window
        auto component = [&](int o) {
            std::string e;
            for (int k = 0; k < access.in_rank(); ++k)
                if (std::int64_t c = access.coeff(o, k); c != 0)
                    e += (e.empty() ? "" : " + ") + (c == 1 ? "" : int_text(c) + " * ") +
                         column(static_cast<std::size_t>(k));
            if (access.offset(o) != 0 || e.empty())
                e += (e.empty() ? "" : " + ") + int_text(access.offset(o));
            return e;
        };
        const int axis = buffer.window_axis();
        std::int64_t row_size = 1;
        for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < buffer.sizes.size(); ++d)
            row_size *= buffer.sizes[d];
        s = "((" + component(axis) + ") & " + int_text(buffer.row_window - 1) + ") * " +
            int_text(row_size) + " + " + s;
        if (axis > 0)
            s = "(" + component(0) + ") * " + int_text(buffer.row_window * row_size) + " + " + s;
    }
    return s;
}

std::string c_element(const poly::Buffer& buffer, const AffineMap& access) {
    return buffer.name + "[" + c_element_index(buffer, access) + "]";
}

std::string c_loaded(DType t, const std::string& element) {
    return t == DType::Bool ? "(" + element + " != 0)" : element;
}

namespace {

// The names of an access's inputs: i<k> for the counters (left empty), then each indirect
// input as its index read's value clamped into [0, extent).
std::vector<std::string> indirect_columns(const poly::ProgramIR& program, const poly::Statement& st,
                                          const AffineMap& access, const std::vector<int>& indirect,
                                          const std::vector<std::int64_t>& extent) {
    std::vector<std::string> columns(static_cast<std::size_t>(access.in_rank()));
    const std::size_t rank = st.extents.size();
    for (std::size_t j = 0; j < indirect.size(); ++j) {
        const poly::Read& index = st.reads.at(static_cast<std::size_t>(indirect[j]));
        columns.at(rank + j) =
            "hd_lmin(hd_lmax((long)" +
            c_element(program.buffers.at(static_cast<std::size_t>(index.buffer)), index.access) +
            ", 0L), " + c_int(extent[j] - 1) + ")";
    }
    return columns;
}

} // namespace

std::string c_read_element(const poly::ProgramIR& program, const poly::Statement& st,
                           const poly::Read& r) {
    const poly::Buffer& buffer = program.buffers.at(static_cast<std::size_t>(r.buffer));
    if (!r.is_indirect()) return c_element(buffer, r.access);
    return buffer.name + "[" +
           c_element_index(buffer, r.access,
                           indirect_columns(program, st, r.access, r.indirect, r.indirect_extent)) +
           "]";
}

std::string c_write_element(const poly::ProgramIR& program, const poly::Statement& st) {
    const poly::Buffer& buffer = program.buffers.at(static_cast<std::size_t>(st.write_buffer));
    if (st.write_indirect.empty()) return c_element(buffer, st.write_access);
    return buffer.name + "[" +
           c_element_index(buffer, st.write_access,
                           indirect_columns(program, st, st.write_access, st.write_indirect,
                                            st.write_indirect_extent)) +
           "]";
}

std::string c_loop_header(const sched::AstNode& n) {
    return "for (long " + n.iterator + " = " + c_index_expr(n.init) + "; " + c_index_expr(n.cond) +
           "; " + n.iterator + " += " + c_index_expr(n.inc) + ")";
}

void c_print_plain(const sched::AstNode& n, const std::string& in, std::string& out,
                   const CallPrinter& call) {
    using Kind = sched::AstNode::Kind;
    auto nodes = [&](const std::vector<sched::AstNode>& ns, const std::string& at) {
        for (const sched::AstNode& m : ns)
            c_print_plain(m, at, out, call);
    };
    switch (n.kind) {
    case Kind::Block:
    case Kind::Mark:
        nodes(n.body, in);
        return;
    case Kind::If:
        out += in + "if (" + c_index_expr(n.condition) + ") {\n";
        nodes(n.body, in + "    ");
        if (!n.else_body.empty()) {
            out += in + "} else {\n";
            nodes(n.else_body, in + "    ");
        }
        out += in + "}\n";
        return;
    case Kind::For:
        out += in + c_loop_header(n) + " {\n";
        nodes(n.body, in + "    ");
        out += in + "}\n";
        return;
    case Kind::Call:
        call(n, in, out);
        return;
    }
}

std::string c_counter_lines(const sched::AstNode& call, const std::string& pad) {
    std::string out;
    for (std::size_t k = 0; k < call.counters.size(); ++k)
        out += pad + "const long i" + std::to_string(k) + " = " + c_index_expr(call.counters[k]) +
               ";\n";
    return out;
}

} // namespace hedra::backend

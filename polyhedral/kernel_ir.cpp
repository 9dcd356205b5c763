// A readable, deterministic listing of the kernel IR for dumps and golden tests, e.g.
//   b0 input f32 [3,4] placeholder 'a'
//   ...
//   k0
//       S0 assign [3,5] b2[(d0, d1) -> (d0, d1)] = 0:f32
//       S1 update sum [3,5,4] reduce (2) b2[(d0, d1, d2) -> (d0, d1)] = mul(in0:f32, in1:f32)
//         in0 = b0[(d0, d1, d2) -> (d0, d2)]
#include "polyhedral/kernel_ir.hpp"

namespace hedra::poly {

namespace {

const char* role_name(BufferRole r) {
    switch (r) {
    case BufferRole::Input:
        return "input";
    case BufferRole::Output:
        return "output";
    case BufferRole::Temporary:
        return "temporary";
    }
    return "?";
}

template <class T>
std::string join(const std::vector<T>& v, const char* open, const char* close) {
    std::string s = open;
    for (std::size_t i = 0; i < v.size(); ++i)
        s += (i ? "," : "") + std::to_string(v[i]);
    return s + close;
}

std::string buffer_line(const Buffer& b) {
    std::string s = b.name + " " + role_name(b.role) + " " + std::string(dtype_name(b.dtype)) +
                    " " + join(b.sizes, "[", "]");
    if (b.node) {
        s += std::string(" ") + node_kind_name(b.node->kind);
        if (!b.node->name.empty()) s += " '" + b.node->name + "'";
    }
    if (b.row_local > 0) s += " row-local " + std::to_string(b.row_local);
    if (b.row_window > 0) s += " row-window " + std::to_string(b.row_window);
    if (b.window_bands > 0) s += " in " + std::to_string(b.window_bands) + " bands";
    if (b.donated) s += " donated";
    return s;
}

std::string buffer_name(const ProgramIR& p, int b) {
    if (b < 0 || b >= static_cast<int>(p.buffers.size())) return "?" + std::to_string(b);
    return p.buffers[static_cast<std::size_t>(b)].name;
}

std::string statement_lines(const ProgramIR& p, const Statement& s) {
    std::string line = "    " + s.name;
    if (s.kind == StatementKind::Assign) {
        line += " assign ";
    } else {
        line += std::string(" update ") + reduce_op_name(s.reduce_op) + " ";
    }
    line += join(s.extents, "[", "]");
    if (s.kind == StatementKind::Update) line += " reduce " + join(s.reduction_dims, "(", ")");
    for (const AffineMap& g : s.guards)
        line += " where " + g.to_string() + " >= 0";
    line += " " + buffer_name(p, s.write_buffer) + "[" + s.write_access.to_string();
    for (std::size_t j = 0; j < s.write_indirect.size(); ++j)
        line += std::string(j ? "," : " at") + " in" + std::to_string(s.write_indirect[j]) +
                " clamped to [0," + std::to_string(s.write_indirect_extent[j]) + ")";
    line += "] = ";
    line += s.value ? hedra::to_string(s.value) : "?";
    if (s.kind == StatementKind::Update && s.reduce_op == ReduceOp::Custom && s.combiner)
        line += " combine " + hedra::to_string(s.combiner);
    for (const Statement::TupleWrite& w : s.tuple_writes)
        line += "; " + buffer_name(p, w.buffer) + " = " + hedra::to_string(w.value);
    line += "\n";
    for (std::size_t k = 0; k < s.reads.size(); ++k) {
        const Read& r = s.reads[k];
        std::string src = r.buffer < 0 ? "index" : buffer_name(p, r.buffer);
        line += "      in" + std::to_string(k) + " = " + src + "[" + r.access.to_string() + "]";
        for (std::size_t j = 0; j < r.indirect.size(); ++j)
            line += std::string(j ? "," : " at") + " in" + std::to_string(r.indirect[j]) +
                    " clamped to [0," + std::to_string(r.indirect_extent[j]) + ")";
        line += "\n";
    }
    return line;
}

std::string buffer_list(const ProgramIR& p, const std::vector<int>& v) {
    std::string s;
    for (int b : v)
        s += " " + buffer_name(p, b);
    return s;
}

} // namespace

bool has_indirect(const Statement& st) {
    if (!st.write_indirect.empty()) return true;
    for (const Read& r : st.reads)
        if (r.is_indirect()) return true;
    return false;
}

bool is_copy(const Statement& st) {
    return st.kind == StatementKind::Assign && st.tuple_writes.empty() && !has_indirect(st) &&
           st.reads.size() == 1 && st.reads[0].buffer >= 0 && st.value &&
           st.value->op == ScalarOp::Input && st.value->ivalue == 0;
}

bool has_indirect(const Kernel& kernel) {
    for (const Statement& st : kernel.statements)
        if (has_indirect(st)) return true;
    return false;
}

bool has_loops(const ProgramIR& program) {
    for (const Kernel& k : program.kernels)
        if (k.loop) return true;
    return false;
}

namespace {
void add_nested(const Kernel& k, std::vector<const Kernel*>& out) {
    if (!k.loop) return;
    for (const Kernel& inner : k.loop->kernels) {
        out.push_back(&inner);
        add_nested(inner, out);
    }
}
} // namespace

std::vector<const Kernel*> nested_kernels(const ProgramIR& program) {
    std::vector<const Kernel*> out;
    for (const Kernel& k : program.kernels)
        add_nested(k, out);
    return out;
}

std::vector<bool> loop_buffers(const ProgramIR& program) {
    std::vector<bool> in_loop(program.buffers.size(), false);
    for (const Kernel& k : program.kernels)
        if (k.loop)
            for (int b : k.loop->touched)
                in_loop[static_cast<std::size_t>(b)] = true;
    return in_loop;
}

bool is_stream(const Kernel& kernel) {
    return !kernel.statements.empty() && kernel.statements[0].stream_stage >= 0;
}

namespace {

void kernel_lines(const ProgramIR& program, const std::vector<Kernel>& kernels,
                  const std::string& indent, std::string& s) {
    for (const Kernel& k : kernels) {
        s += indent + k.name;
        if (is_stream(k))
            s += " stream (shift " + std::to_string(k.statements[0].stream_shift) +
                 " rows per stage" +
                 (k.statements[0].stream_bands > 0
                      ? ", " + std::to_string(k.statements[0].stream_bands) + " bands"
                      : std::string()) +
                 ")";
        if (k.loop)
            s += std::string(" scan loop: ") +
                 (k.loop->reverse ? "t from T-1 down to 0" : "t from 0 to T-1") + ", T = " +
                 (k.loop->param >= 0 ? param_name(k.loop->param) + " <= " : std::string()) +
                 std::to_string(k.loop->steps);
        s += "\n";
        for (const Statement& st : k.statements)
            s += indent + statement_lines(program, st);
        if (k.loop) kernel_lines(program, k.loop->kernels, indent + "    ", s);
    }
}

std::string slice_text(const ProgramIR& p, const Buffer& b) {
    if (!b.is_slice()) return "";
    std::string s = " = " + buffer_name(p, b.slice.parent) + "[t";
    if (b.slice.shift) s += (b.slice.shift > 0 ? "+" : "") + std::to_string(b.slice.shift);
    s += "]";
    if (b.slice.edge >= 0) s += " (else " + buffer_name(p, b.slice.edge) + ")";
    return s;
}

} // namespace

std::string to_string(const ProgramIR& program) {
    std::string s;
    for (const Buffer& b : program.buffers)
        s += buffer_line(b) + slice_text(program, b) + "\n";
    s += "inputs:" + buffer_list(program, program.inputs) + "\n";
    s += "outputs:" + buffer_list(program, program.outputs) + "\n";
    kernel_lines(program, program.kernels, "", s);
    return s;
}

} // namespace hedra::poly

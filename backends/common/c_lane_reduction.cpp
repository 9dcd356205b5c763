// The text of a lane reduction (see c_lane_reduction.hpp).
#include "backends/common/c_lane_reduction.hpp"

#include "backends/common/c_access.hpp"
#include "backends/common/c_expr.hpp"

namespace hedra::backend {

std::string lane_reduction_text(const LaneReduction& r, const std::string& pad) {
    const sched::AstNode& n = *r.loop;
    const DType t = r.dtype;
    const std::string type = c_value_type(t);
    const bool f32 = t == DType::F32;
    const int lanes = n.reduction_lanes;
    const std::string k = std::to_string(lanes);
    const std::string identity = r.op == ReduceOp::Sum ? "0"
                                 : r.op == ReduceOp::Max
                                     ? (f32 ? "(-__builtin_inff())" : "(-__builtin_inf())")
                                     : (f32 ? "__builtin_inff()" : "__builtin_inf()");
    const sched::AstExpr& c = n.cond;
    const std::string ub = c.op == sched::AstExpr::Op::Le
                               ? c_index_expr(c.args[1])
                               : "(" + c_index_expr(c.args[1]) + " - 1L)";
    const std::string acc = "hd_ra" + r.id, rest = "hd_rv" + r.id, at = "hd_rc" + r.id;
    const std::string p1 = pad + "    ", p2 = p1 + "    ", p3 = p2 + "    ";
    // A sum over one vector register of lanes (a row short enough for 16 f32 lanes on AVX-512)
    // accumulates in a GCC vector: kept in an array, clang unrolled the row's few iterations
    // and added the lanes one scalar at a time (attention softmax rows of 64: 0.18 -> 0.13 ms
    // for 3072 rows). Two vectors of lanes keep the array (as a vector pair, a layer norm's
    // rows of 128 took twice as long), as do max and min, whose NaN-propagating combine has no
    // vector form here.
    const int bytes = lanes * static_cast<int>(dtype_size(t));
    const bool vector_sum = r.op == ReduceOp::Sum && bytes <= r.vector_bytes;
    const std::string vtype = "hd_lv" + r.id, vacc = "hd_va" + r.id, part = "hd_lt" + r.id;
    std::string out = pad + "{ // lane reduction: " + k + " accumulators\n";
    if (vector_sum) {
        out += p1 + "typedef " + type + " " + vtype + " __attribute__((vector_size(" +
               std::to_string(bytes) + ")));\n";
        out += p1 + vtype + " " + vacc + " = {};\n";
    } else {
        out += p1 + type + " " + acc + "[" + k + "];\n";
        out += p1 + "for (int hd_l = 0; hd_l < " + k + "; ++hd_l)\n" + p2 + acc +
               "[hd_l] = " + identity + ";\n";
    }
    out += p1 + "long " + at + " = " + c_index_expr(n.init) + ";\n";
    out += p1 + "for (; " + at + " + " + std::to_string(lanes - 1) + "L <= " + ub + "; " + at +
           " += " + k + ") {\n";
    if (vector_sum) out += p2 + vtype + " " + part + ";\n";
    if (!r.simd.empty()) out += p2 + r.simd + "\n";
    out += p2 + "for (long hd_l = 0; hd_l < " + k + "; ++hd_l) {\n";
    out += p3 + "const long " + n.iterator + " = " + at + " + hd_l;\n";
    std::string v = r.value(p3, out);
    if (vector_sum)
        out += p3 + part + "[hd_l] = " + v + ";\n";
    else
        out += p3 + acc + "[hd_l] = " + c_combine(r.op, t, acc + "[hd_l]", v) + ";\n";
    out += p2 + "}\n";
    if (vector_sum) out += p2 + vacc + " = " + vacc + " + " + part + ";\n";
    out += p1 + "}\n";
    if (vector_sum) {
        out += p1 + type + " " + acc + "[" + k + "];\n";
        out += p1 + "__builtin_memcpy(" + acc + ", &" + vacc + ", sizeof " + acc + ");\n";
    }
    // The lanes combined as a tree (halves added in vector registers), not one after another:
    // on rows of a few hundred elements a serial chain of 16 adds costs as much as the row.
    out += p1 + "for (int hd_w = " + std::to_string(lanes / 2) + "; hd_w > 0; hd_w /= 2)\n";
    if (!r.simd.empty()) out += p2 + r.simd + "\n";
    out += p2 + "for (int hd_l = 0; hd_l < hd_w; ++hd_l)\n" + p3 + acc +
           "[hd_l] = " + c_combine(r.op, t, acc + "[hd_l]", acc + "[hd_l + hd_w]") + ";\n";
    out += p1 + type + " " + rest + " = " + acc + "[0];\n";
    out += p1 + "for (; " + at + " <= " + ub + "; ++" + at + ") {\n";
    out += p2 + "const long " + n.iterator + " = " + at + ";\n";
    v = r.value(p2, out);
    out += p2 + rest + " = " + c_combine(r.op, t, rest, v) + ";\n";
    out += p1 + "}\n";
    out += p1 + "{\n";
    out += p2 + "const long " + n.iterator + " = " + c_index_expr(n.init) + ";\n";
    out += c_counter_lines(*r.call, p2);
    out += p2 + "(void)" + n.iterator + ";\n";
    out += p2 + r.target + " = " + c_combine(r.op, t, r.loaded, rest) + ";\n";
    out += p1 + "}\n" + pad + "}\n";
    return out;
}

} // namespace hedra::backend

// A reduction kernel's pieces (see c_reduction.hpp).
#include "backends/common/c_reduction.hpp"

#include "backends/common/c_expr.hpp"

namespace hedra::backend {

std::string result_index(const sched::ReductionForm& f) {
    std::string s = f.result_offset != 0 ? int_text(f.result_offset) : "";
    for (int c : f.outputs) {
        if (f.out_stride[c] == 0) continue;
        if (!s.empty()) s += " + ";
        s += (f.out_stride[c] == 1 ? "" : int_text(f.out_stride[c]) + " * ") + "i" +
             std::to_string(c);
    }
    return s.empty() ? int_text(0) : s;
}

std::string store_result(const KernelBuffers& b, const sched::ReductionForm& f,
                         const std::string& acc, const std::string& in) {
    DType t = b.buffer_dtype(f.update->write_buffer);
    return in + b.buffer_name(f.update->write_buffer) + "[" + result_index(f) +
           "] = " + store_value(t, acc) + ";\n";
}

std::string init_value(const KernelBuffers& b, const sched::ReductionForm& f,
                       const std::string& indent, std::string& out) {
    return print_value(b, *f.init, indent, "hd_init", out);
}

void add_epilogue_params(const KernelBuffers& b, int kernel, const sched::ReductionForm& f,
                         KernelParams& params) {
    for (int e : f.epilogues) {
        const poly::Statement& st = b.program.kernels.at(kernel).statements.at(e);
        params.add(st.write_buffer, true);
        for (const poly::Read& r : st.reads)
            if (r.buffer >= 0 && r.buffer != f.update->write_buffer) params.add(r.buffer, false);
    }
}

void print_epilogue_value(const KernelBuffers& b, int kernel, const sched::ReductionForm& f, int e,
                          const std::string& prefix, const std::string& acc, const std::string& in,
                          std::string& out) {
    const poly::Statement& st = b.program.kernels.at(kernel).statements.at(e);
    int sum = f.update->write_buffer;
    DType rt = b.buffer_dtype(sum);
    std::string value_of_sum = "((" + std::string(c_value_type(rt)) + ")" + acc + ")";
    if (rt == DType::Bool) value_of_sum = "(" + acc + " != 0)";
    auto read = [&](int k) {
        return st.reads[static_cast<std::size_t>(k)].buffer == sum ? value_of_sum : std::string();
    };
    std::string value = print_value(b, st, in, prefix, out, read);
    out += store_line(b, st.write_buffer, st.write_access, value, in);
}

void print_epilogues(const KernelBuffers& b, int kernel, const sched::ReductionForm& f,
                     const std::string& acc, const std::string& in, std::string& out) {
    const AffineMap& w = f.update->write_access;
    for (std::size_t k = 0; k < f.epilogues.size(); ++k) {
        // The epilogue's counters are the result's coordinates: row r of the result is the
        // update counter that writes it.
        std::string prefix = "e" + std::to_string(k);
        out += in + "{\n";
        std::string in2 = in + "    ";
        for (int row = 0; row < w.out_rank(); ++row) {
            std::string v = int_text(0);
            for (int c = 0; c < w.in_rank(); ++c)
                if (w.coeff(row, c) != 0) v = "i" + std::to_string(c);
            out += in2 + "const " + index_type() + " hd_" + prefix + "_" + std::to_string(row) +
                   " = " + v + ";\n";
        }
        out += in2 + "{\n";
        std::string in3 = in2 + "    ";
        for (int row = 0; row < w.out_rank(); ++row)
            out += in3 + "const " + index_type() + " i" + std::to_string(row) + " = hd_" + prefix +
                   "_" + std::to_string(row) + ";\n";
        print_epilogue_value(b, kernel, f, f.epilogues[k], prefix, acc, in3, out);
        out += in2 + "}\n" + in + "}\n";
    }
}

void print_result_element(const KernelBuffers& b, int kernel, const sched::ReductionForm& f,
                          const std::string& acc, const std::string& in, std::string& out,
                          bool store) {
    if (store) out += store_result(b, f, acc, in);
    print_epilogues(b, kernel, f, acc, in, out);
}

KernelParams reduction_params(const KernelBuffers& b, int kernel, const sched::ReductionForm& f) {
    KernelParams params = statement_params(*f.update);
    add_epilogue_params(b, kernel, f, params);
    return params;
}

KernelParams partials_params(const KernelBuffers& b, int kernel, const sched::ReductionForm& f,
                             int partials) {
    KernelParams params;
    params.add(f.update->write_buffer, true);
    params.add(partials, false);
    add_epilogue_params(b, kernel, f, params);
    return params;
}

void print_serial_fold(const KernelBuffers& b, const sched::ReductionForm& f,
                       const std::string& acc, const std::string& in, std::string& out) {
    std::string inner = in;
    for (int c : f.reductions) {
        std::string i = "i" + std::to_string(c);
        out += inner + "for (long " + i + " = 0; " + i + " < " + int_text(f.extents[c]) + "; ++" +
               i + ") {\n";
        inner += "    ";
    }
    out += inner + "{\n";
    print_fold(b, *f.update, acc, inner + "    ", "t", out);
    for (std::size_t k = 0; k <= f.reductions.size(); ++k, inner.resize(inner.size() - 4))
        out += inner + "}\n";
}

} // namespace hedra::backend

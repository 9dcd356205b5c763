// The contraction's epilogues (cuda_contraction.hpp): maps of the sum's result applied to the
// accumulators in the store phase, and the final launch of a split-K contraction that combines
// the slices' partials and applies them there.
#include "backends/cuda/cuda_contraction.hpp"
#include "backends/openmp/c_expr.hpp"

namespace hedra::backend::cuda {

void Contraction::add_epilogue_params(KernelParams& params) const {
    for (int e : f_.epilogues) {
        const poly::Statement& st = b_.program.kernels.at(kernel_).statements.at(e);
        params.add(st.write_buffer, true);
        for (const poly::Read& r : st.reads)
            if (r.buffer >= 0 && r.buffer != u_.write_buffer) params.add(r.buffer, false);
    }
}

void Contraction::emit_final() {
    DType t = b_.buffer_dtype(u_.write_buffer);
    const std::vector<std::int64_t>& sizes = b_.buffer_sizes(u_.write_buffer);
    std::int64_t total = result_elements();
    KernelParams params;
    params.add(u_.write_buffer, true);
    params.add(partials_, false);
    add_epilogue_params(params);
    bool narrow = fits_in_int(params, 1);
    Index32Scope scope(narrow);
    std::string it = index_type(), in = "        ";
    std::string body = "    const " + it + " hd_stride = (" + it + ")gridDim.x * blockDim.x;\n";
    body += "    for (" + it + " hd_flat = (" + it + ")blockIdx.x * blockDim.x + threadIdx.x; " +
            "hd_flat < " + int_text(total) + "; hd_flat += hd_stride) {\n";
    std::vector<std::string> counters;
    for (std::size_t d = 0; d < sizes.size(); ++d)
        counters.push_back("i" + std::to_string(d));
    print_unflatten("hd_flat", sizes, counters, in, body);
    std::string init = init_value(b_, f_, in, body);
    body += in + c_value_type(t) + " hd_acc = " + init + ";\n";
    std::string part = b_.buffer_name(partials_) + "[hd_j * " + int_text(total) + " + hd_flat]";
    if (t == DType::Bool) part = "(" + part + " != 0)";
    body += in + "for (int hd_j = 0; hd_j < " + std::to_string(splits_) + "; ++hd_j) {\n";
    std::string combined = print_combine(u_, t, "hd_acc", part, in + "    ", "c", body);
    body += in + "    hd_acc = " + combined + ";\n" + in + "}\n";
    if (result_needed())
        body += in + b_.buffer_name(u_.write_buffer) + "[hd_flat] = " + store_value(t, "hd_acc") +
                ";\n";
    for (std::size_t k = 0; k < f_.epilogues.size(); ++k)
        print_epilogue_value(f_.epilogues[k], "e" + std::to_string(k), "hd_acc", in, body);
    body += "    }\n";
    CudaLaunch l;
    l.function = b_.next_name(kernel_);
    l.strategy = "contraction_final";
    l.kernel = kernel_;
    std::int64_t threads = std::min<std::int64_t>(256, ceil_div(total, 32) * 32);
    l.block = {static_cast<unsigned>(threads), 1, 1};
    l.grid = {static_cast<unsigned>(std::min<std::int64_t>(ceil_div(total, threads), 1 << 20)), 1,
              1};
    l.buffers = params.buffers;
    emit_kernel(b_, l.function, params, 256, body);
    b_.launches.push_back(std::move(l));
}

bool Contraction::result_needed() const {
    const poly::Buffer& w = b_.program.buffers.at(u_.write_buffer);
    if (w.role == poly::BufferRole::Output || f_.epilogues.empty()) return true;
    for (std::size_t k = 0; k < b_.program.kernels.size(); ++k)
        for (std::size_t s = 0; s < b_.program.kernels[k].statements.size(); ++s) {
            bool epilogue = int(k) == kernel_ && std::find(f_.epilogues.begin(), f_.epilogues.end(),
                                                           int(s)) != f_.epilogues.end();
            if (epilogue) continue;
            for (const poly::Read& r : b_.program.kernels[k].statements[s].reads)
                if (r.buffer == u_.write_buffer && !(int(k) == kernel_ && s < 2)) return true;
        }
    return false;
}

void Contraction::print_epilogue(int e, const std::string& prefix, const std::string& in,
                                 std::string& out) const {
    const AffineMap& w = u_.write_access;
    out += in + "{\n";
    std::string in2 = in + "    ";
    for (int row = 0; row < w.out_rank(); ++row) {
        std::string v = int_text(0);
        for (int c = 0; c < w.in_rank(); ++c)
            if (w.coeff(row, c) != 0) v = counter(c);
        out += in2 + "const " + index_type() + " hd_" + prefix + "_" + std::to_string(row) + " = " +
               v + ";\n";
    }
    out += in2 + "{\n";
    std::string in3 = in2 + "    ";
    for (int row = 0; row < w.out_rank(); ++row)
        out += in3 + "const " + index_type() + " i" + std::to_string(row) + " = hd_" + prefix +
               "_" + std::to_string(row) + ";\n";
    print_epilogue_value(e, prefix, "hd_acc[hd_tm][hd_tn]", in3, out);
    out += in2 + "}\n" + in + "}\n";
}

void Contraction::print_epilogue_value(int e, const std::string& prefix, const std::string& acc,
                                       const std::string& in, std::string& out) const {
    const poly::Statement& st = b_.program.kernels.at(kernel_).statements.at(e);
    DType rt = b_.buffer_dtype(u_.write_buffer);
    std::string value_of_sum = "((" + std::string(c_value_type(rt)) + ")" + acc + ")";
    if (rt == DType::Bool) value_of_sum = "(" + acc + " != 0)";
    auto read = [&](int k) {
        return st.reads[static_cast<std::size_t>(k)].buffer == u_.write_buffer ? value_of_sum
                                                                               : std::string();
    };
    std::string value = print_value(b_, st, in, prefix, out, read);
    out += in + b_.buffer_name(st.write_buffer) + "[" +
           linear_index(b_, st.write_buffer, st.write_access) +
           "] = " + store_value(b_.buffer_dtype(st.write_buffer), value) + ";\n";
}

} // namespace hedra::backend::cuda

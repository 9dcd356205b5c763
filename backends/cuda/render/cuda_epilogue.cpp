// Epilogues (partition.hpp, cuda_partition_options): maps of a sum's result at the same
// element, in order, applied where a result element is complete: to the contraction's
// accumulators, in a split contraction's final launch, and in the reduction templates' final
// store. Each reads the sum's value from a register; an earlier epilogue's result (a chain:
// SGD's momentum, then the weight) is read back from where this thread just stored it.
#include "backends/common/c_expr.hpp"
#include "backends/cuda/render/cuda_kernels.hpp"

namespace hedra::backend::cuda {

void add_epilogue_params(const SourceBuilder& b, int kernel, const ReductionForm& f,
                         KernelParams& params) {
    for (int e : f.epilogues) {
        const poly::Statement& st = b.program.kernels.at(kernel).statements.at(e);
        params.add(st.write_buffer, true);
        for (const poly::Read& r : st.reads)
            if (r.buffer >= 0 && r.buffer != f.update->write_buffer) params.add(r.buffer, false);
    }
}

void print_epilogue_value(const SourceBuilder& b, int kernel, const ReductionForm& f, int e,
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

void print_epilogues(const SourceBuilder& b, int kernel, const ReductionForm& f,
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

} // namespace hedra::backend::cuda

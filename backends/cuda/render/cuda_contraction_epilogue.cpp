// The final launch of a split-K contraction (cuda_contraction.hpp), which combines the slices'
// partials and applies the epilogues (cuda_epilogue.cpp) there, and whether the sum itself must
// be stored.
#include <numeric>

#include "backends/common/c_expr.hpp"
#include "backends/cuda/render/cuda_contraction.hpp"

namespace hedra::backend::cuda {

void Contraction::emit_final() {
    DType t = b_.buffer_dtype(u_.write_buffer);
    const std::vector<std::int64_t>& sizes = b_.buffer_sizes(u_.write_buffer);
    std::int64_t total = result_elements();
    KernelParams params;
    params.add(u_.write_buffer, true);
    params.add(partials_, false);
    add_epilogue_params(b_, kernel_, f_, params);
    Index32Scope scope(c_.final_index32);
    std::string in = "        ";
    std::string body = grid_stride_loop(b_.dialect, "hd_flat", int_text(total), true, index_type());
    std::vector<int> counters(sizes.size());
    std::iota(counters.begin(), counters.end(), 0);
    print_unflatten("hd_flat", sizes, counter_names(counters), in, body);
    std::string init = init_value(b_, f_, in, body);
    body += in + c_value_type(t) + " hd_acc = " + init + ";\n";
    std::string part = b_.buffer_name(partials_) + "[hd_j * " + int_text(total) + " + hd_flat]";
    if (t == DType::Bool) part = "(" + part + " != 0)";
    body += in + "for (int hd_j = 0; hd_j < " + std::to_string(splits_) + "; ++hd_j) {\n";
    std::string combined = print_combine(u_, t, "hd_acc", part, in + "    ", "c", body);
    body += in + "    hd_acc = " + combined + ";\n" + in + "}\n";
    if (result_needed(b_.program, kernel_, f_))
        body += in + b_.buffer_name(u_.write_buffer) + "[hd_flat] = " + store_value(t, "hd_acc") +
                ";\n";
    for (std::size_t k = 0; k < f_.epilogues.size(); ++k)
        print_epilogue_value(b_, kernel_, f_, f_.epilogues[k], "e" + std::to_string(k), "hd_acc",
                             in, body);
    body += "    }\n";
    b_.launch(kernel_, "contraction_final", grid_of(ceil_div(total, c_.final_threads)),
              {static_cast<unsigned>(c_.final_threads), 1, 1}, params, 256, body);
}

} // namespace hedra::backend::cuda

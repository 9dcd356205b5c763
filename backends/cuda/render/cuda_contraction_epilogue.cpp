// The final launch of a split-K contraction (cuda_contraction.hpp), which combines the slices'
// partials and applies the epilogues (cuda_epilogue.cpp) there, and whether the sum itself must
// be stored.
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
        print_epilogue_value(b_, kernel_, f_, f_.epilogues[k], "e" + std::to_string(k), "hd_acc",
                             in, body);
    body += "    }\n";
    CudaLaunch l;
    l.function = b_.next_name(kernel_);
    l.strategy = "contraction_final";
    l.kernel = kernel_;
    const std::int64_t threads = c_.final_threads;
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

} // namespace hedra::backend::cuda

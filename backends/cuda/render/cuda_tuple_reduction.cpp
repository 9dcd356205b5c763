// The block template of a reduction of several values (reduce_multiple_value): one block per
// result element; each thread folds a contiguous chunk of the reduction, in order, into
// registers, then the partial tuples are combined pairwise in shared memory, each with its
// right neighbour (strides 1, 2, 4, ...), so partials are only ever combined in index order: the
// combiner need be associative, not commutative.
#include "backends/common/c_expr.hpp"
#include "backends/cuda/render/cuda_kernels.hpp"

namespace hedra::backend::cuda {

void emit_tuple_reduction(SourceBuilder& b, int kernel, const TupleReductionForm& f,
                          const sched::GpuReductionMapping& mapping) {
    const std::int64_t threads = mapping.threads;
    const poly::Statement& u = *f.step;
    const std::size_t k = f.buffers.size();
    const std::int64_t chunk = ceil_div(f.reduction_size, threads);
    auto acc = [](std::size_t j) { return "hd_a" + std::to_string(j); };
    auto red = [](std::size_t j) { return "hd_red" + std::to_string(j); };
    std::string body;
    std::size_t shared = 0;
    for (std::size_t j = 0; j < k; ++j) {
        DType t = b.buffer_dtype(f.buffers[j]);
        body += "    " + b.dialect.shared_prefix + std::string(c_value_type(t)) + " " + red(j) +
                "[" + std::to_string(threads) + "];\n";
        shared += static_cast<std::size_t>(threads) * dtype_size(t);
    }
    body += grid_stride_loop(b.dialect, "hd_o", int_text(f.num_outputs), false);
    const std::string in = "        ";
    print_unflatten("hd_o", u.extents, f.outputs, in, body);
    for (std::size_t j = 0; j < k; ++j) {
        std::string init = print_value(b, *f.inits[j], in, "hd_i" + std::to_string(j), body);
        body +=
            in + c_value_type(b.buffer_dtype(f.buffers[j])) + " " + acc(j) + " = " + init + ";\n";
    }
    // This thread's chunk, in order.
    body += in + "const long hd_begin = (long)threadIdx.x * " + int_text(chunk) + ";\n";
    body += in + "const long hd_end = hd_lmin(" + int_text(f.reduction_size) + ", hd_begin + " +
            int_text(chunk) + ");\n";
    body += in + "for (long hd_r = hd_begin; hd_r < hd_end; ++hd_r) {\n";
    const std::string in2 = in + "    ";
    print_unflatten("hd_r", u.extents, f.reductions, in2, body);
    auto accumulator = [&](int r) {
        return r < static_cast<int>(k) ? acc(static_cast<std::size_t>(r)) : std::string();
    };
    std::vector<std::string> next = print_tuple_values(b, u, in2, "t", body, accumulator);
    for (std::size_t j = 0; j < k; ++j)
        body += in2 + acc(j) + " = " + next[j] + ";\n";
    body += in + "}\n";
    for (std::size_t j = 0; j < k; ++j)
        body += in + red(j) + "[threadIdx.x] = " + acc(j) + ";\n";
    body += in + b.dialect.barrier + "\n";
    // Partials combined with their right neighbour at strides 1, 2, 4, ...: index order kept.
    body +=
        in + "for (unsigned hd_d = 1u; hd_d < " + std::to_string(threads) + "u; hd_d <<= 1) {\n";
    body += in2 + "if ((threadIdx.x & (2u * hd_d - 1u)) == 0u) {\n";
    const std::string in3 = in2 + "    ";
    auto partial = [&](int r) {
        std::size_t j = static_cast<std::size_t>(r) % k;
        return red(j) +
               (static_cast<std::size_t>(r) < k ? "[threadIdx.x]" : "[threadIdx.x + hd_d]");
    };
    std::vector<std::string> combined =
        print_scalars(u.tuple_combiners, partial, in3, "hd_p", body);
    for (std::size_t j = 0; j < k; ++j)
        body += in3 + "const " + c_value_type(b.buffer_dtype(f.buffers[j])) + " hd_c" +
                std::to_string(j) + " = " + combined[j] + ";\n";
    for (std::size_t j = 0; j < k; ++j)
        body += in3 + red(j) + "[threadIdx.x] = hd_c" + std::to_string(j) + ";\n";
    body += in2 + "}\n" + in2 + b.dialect.barrier + "\n" + in + "}\n";
    body += in + "if (threadIdx.x == 0) {\n";
    for (std::size_t j = 0; j < k; ++j)
        body += store_line(b, f.buffers[j], u.write_access, red(j) + "[0]", in2);
    body += in + "}\n" + in + b.dialect.barrier + "\n    }\n";
    KernelParams params = statement_params(u);
    b.launch(kernel, "tuple_block_reduction", grid_of(mapping.blocks),
             {static_cast<unsigned>(threads), 1, 1}, params, static_cast<int>(threads), body,
             shared);
}

} // namespace hedra::backend::cuda

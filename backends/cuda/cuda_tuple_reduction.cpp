// The block template of a reduction of several values (reduce_multiple_value): one block per
// result element; each thread folds a contiguous chunk of the reduction, in order, into
// registers, then the partial tuples are combined pairwise in shared memory, each with its
// right neighbour (strides 1, 2, 4, ...), so partials are only ever combined in index order: the
// combiner need be associative, not commutative.
#include <algorithm>

#include "backends/common/c_expr.hpp"
#include "backends/cuda/cuda_kernels.hpp"

namespace hedra::backend::cuda {

namespace {

// Shorter reductions run serially per element on the generic mapping.
constexpr std::int64_t kMinBlockReduction = 32;

std::string counter(int c) {
    return "i" + std::to_string(c);
}

} // namespace

std::optional<TupleReductionForm> tuple_reduction_form(const poly::ProgramIR& program,
                                                       const poly::Kernel& kernel) {
    const std::size_t n = kernel.statements.size();
    if (n < 3) return std::nullopt;
    const poly::Statement& u = kernel.statements.back();
    const std::size_t k = 1 + u.tuple_writes.size();
    if (u.kind != poly::StatementKind::Assign || u.tuple_writes.empty() || n != k + 1 ||
        u.tuple_combiners.size() != k || u.reads.size() < k)
        return std::nullopt;
    TupleReductionForm f;
    f.step = &u;
    f.buffers.push_back(u.write_buffer);
    for (const poly::Statement::TupleWrite& w : u.tuple_writes)
        f.buffers.push_back(w.buffer);
    const std::vector<std::int64_t>& sizes = program.buffers.at(u.write_buffer).sizes;
    const int rank = static_cast<int>(sizes.size());
    for (std::size_t j = 0; j < k; ++j) {
        const poly::Statement& init = kernel.statements[j];
        // Each accumulator: initialized whole with a constant, read by the step where written.
        if (init.kind != poly::StatementKind::Assign || !init.reads.empty() ||
            init.write_buffer != f.buffers[j] || !init.tuple_writes.empty() ||
            program.buffers.at(f.buffers[j]).sizes != sizes || init.extents != sizes ||
            !init.write_access.is_identity() || u.reads[j].buffer != f.buffers[j] ||
            !(u.reads[j].access == u.write_access))
            return std::nullopt;
        f.inits.push_back(&init);
    }
    // Every result axis is one step counter (or pinned to 0, a kept axis); the others reduce.
    const int counters = static_cast<int>(u.extents.size());
    if (u.write_access.out_rank() != rank || u.write_access.in_rank() != counters)
        return std::nullopt;
    std::vector<int> row_of(static_cast<std::size_t>(counters), -1);
    for (int r = 0; r < rank; ++r) {
        if (u.write_access.offset(r) != 0) return std::nullopt;
        int found = -1;
        for (int c = 0; c < counters; ++c) {
            std::int64_t coeff = u.write_access.coeff(r, c);
            if (coeff == 0) continue;
            if (coeff != 1 || found >= 0 || row_of[c] >= 0) return std::nullopt;
            found = c;
        }
        if (found < 0 ? sizes[r] != 1 : u.extents[found] != sizes[r]) return std::nullopt;
        if (found >= 0) row_of[found] = r;
    }
    for (int c = 0; c < counters; ++c) {
        bool reduced = row_of[c] < 0;
        (reduced ? f.reductions : f.outputs).push_back(c);
        (reduced ? f.reduction_size : f.num_outputs) *= u.extents[c];
    }
    return f;
}

bool emit_tuple_reduction(SourceBuilder& b, int kernel, const TupleReductionForm& f) {
    if (f.reduction_size < kMinBlockReduction || f.num_outputs == 0) return false;
    const poly::Statement& u = *f.step;
    const std::size_t k = f.buffers.size();
    std::int64_t threads = 32;
    while (threads < f.reduction_size && threads < 256)
        threads *= 2;
    const std::int64_t chunk = ceil_div(f.reduction_size, threads);
    auto extents = [&](const std::vector<int>& cs) {
        std::vector<std::int64_t> e;
        for (int c : cs)
            e.push_back(u.extents[c]);
        return e;
    };
    auto names = [](const std::vector<int>& cs) {
        std::vector<std::string> v;
        for (int c : cs)
            v.push_back(counter(c));
        return v;
    };
    auto acc = [](std::size_t j) { return "hd_a" + std::to_string(j); };
    auto red = [](std::size_t j) { return "hd_red" + std::to_string(j); };
    std::string body;
    std::size_t shared = 0;
    for (std::size_t j = 0; j < k; ++j) {
        DType t = b.buffer_dtype(f.buffers[j]);
        body += "    __shared__ " + std::string(c_value_type(t)) + " " + red(j) + "[" +
                std::to_string(threads) + "];\n";
        shared += static_cast<std::size_t>(threads) * dtype_size(t);
    }
    body += "    for (long hd_o = blockIdx.x; hd_o < " + int_text(f.num_outputs) +
            "; hd_o += gridDim.x) {\n";
    const std::string in = "        ";
    print_unflatten("hd_o", extents(f.outputs), names(f.outputs), in, body);
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
    print_unflatten("hd_r", extents(f.reductions), names(f.reductions), in2, body);
    auto accumulator = [&](int r) {
        return r < static_cast<int>(k) ? acc(static_cast<std::size_t>(r)) : std::string();
    };
    std::vector<std::string> next = print_tuple_values(b, u, in2, "t", body, accumulator);
    for (std::size_t j = 0; j < k; ++j)
        body += in2 + acc(j) + " = " + next[j] + ";\n";
    body += in + "}\n";
    for (std::size_t j = 0; j < k; ++j)
        body += in + red(j) + "[threadIdx.x] = " + acc(j) + ";\n";
    body += in + "__syncthreads();\n";
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
    body += in2 + "}\n" + in2 + "__syncthreads();\n" + in + "}\n";
    body += in + "if (threadIdx.x == 0) {\n";
    for (std::size_t j = 0; j < k; ++j) {
        DType t = b.buffer_dtype(f.buffers[j]);
        body += in2 + b.buffer_name(f.buffers[j]) + "[" +
                linear_index(b, f.buffers[j], u.write_access) +
                "] = " + store_value(t, red(j) + "[0]") + ";\n";
    }
    body += in + "}\n" + in + "__syncthreads();\n    }\n";
    KernelParams params = statement_params(u);
    CudaLaunch l;
    l.function = b.next_name(kernel);
    l.strategy = "tuple_block_reduction";
    l.kernel = kernel;
    l.grid = {static_cast<unsigned>(std::min<std::int64_t>(f.num_outputs, 1 << 20)), 1, 1};
    l.block = {static_cast<unsigned>(threads), 1, 1};
    l.buffers = params.buffers;
    l.shared_bytes = shared;
    emit_kernel(b, l.function, params, static_cast<int>(threads), body);
    b.launches.push_back(std::move(l));
    return true;
}

} // namespace hedra::backend::cuda

// The reduction templates, as the gpu.reduction pass chose among them (gpu_mapping.hpp):
// - serial: one thread per output, a sequential fold in counter order (any combiner, also a
//   custom one, which need not be associative in the tree sense);
// - block: one block per output, threads stride over the flattened reduction, then a tree in
//   shared memory (built-in ops only);
// - split: very few outputs with very long reductions; S blocks per output write partials to a
//   scratch buffer, a second launch reduces them.
// Each applies the kernel's epilogues (backends/common/c_reduction.hpp) where it stores a
// result element.
#include <algorithm>

#include "backends/common/c_expr.hpp"
#include "backends/cuda/render/cuda_kernels.hpp"

namespace hedra::backend::cuda {

namespace {

// hd_red[threadIdx.x] = hd_acc; a tree over `threads` entries; leaves the result in hd_red[0].
void print_tree(const SourceBuilder& b, ReduceOp op, DType t, std::int64_t threads,
                const std::string& in, std::string& body) {
    std::string vt = c_value_type(t);
    body += in + "hd_red[threadIdx.x] = hd_acc;\n" + in + b.dialect.barrier + "\n";
    body += in + "for (unsigned hd_s = " + std::to_string(threads / 2) +
            "u; hd_s > 0u; hd_s >>= 1) {\n";
    body += in + "    if (threadIdx.x < hd_s) {\n";
    body += in + "        const " + vt + " hd_x = hd_red[threadIdx.x];\n";
    body += in + "        const " + vt + " hd_y = hd_red[threadIdx.x + hd_s];\n";
    body += in + "        hd_red[threadIdx.x] = " + c_combine(op, t, "hd_x", "hd_y") + ";\n";
    body += in + "    }\n" + in + "    " + b.dialect.barrier + "\n" + in + "}\n";
}

// The final store of one output from thread 0: result = combine(init, hd_red[0]), then the
// epilogues of that element.
void print_final_store(const SourceBuilder& b, int kernel, const ReductionForm& f,
                       const std::string& in, std::string& body) {
    DType t = b.buffer_dtype(f.update->write_buffer);
    body += in + "if (threadIdx.x == 0) {\n";
    std::string init = init_value(b, f, in + "    ", body);
    std::string result = c_combine(f.update->reduce_op, t, init, "hd_red[0]");
    body += in + "    const " + c_value_type(t) + " hd_res = " + result + ";\n";
    print_result_element(b, kernel, f, "hd_res", in + "    ", body);
    body += in + "}\n" + in + b.dialect.barrier + "\n";
}

// A launch of `blocks` blocks of `threads`, a block per item (grid-stride over `items` as
// `var`), with the tree's __shared__ hd_red[threads]; `inner` is the loop's body.
void emit_block_kernel(SourceBuilder& b, int kernel, const char* strategy, DType t,
                       std::int64_t threads, std::int64_t blocks, const char* var,
                       std::int64_t items, const std::string& inner, const KernelParams& params) {
    std::string body = "    " + b.dialect.shared_prefix + std::string(c_value_type(t)) +
                       " hd_red[" + std::to_string(threads) + "];\n";
    body += grid_stride_loop(b.dialect, var, int_text(items), false) + inner + "    }\n";
    b.launch(kernel, strategy, grid_of(blocks), {static_cast<unsigned>(threads), 1, 1}, params,
             static_cast<int>(threads), body, static_cast<std::size_t>(threads) * dtype_size(t));
}

void emit_serial(SourceBuilder& b, int kernel, const ReductionForm& f,
                 const sched::GpuReductionMapping& m) {
    DType t = b.buffer_dtype(f.update->write_buffer);
    std::string body = grid_stride_loop(b.dialect, "hd_o", int_text(f.num_outputs), true);
    std::string in = "        ";
    print_unflatten("hd_o", f.extents, f.outputs, in, body);
    std::string init = init_value(b, f, in, body);
    body += in + c_value_type(t) + " hd_acc = " + init + ";\n";
    print_serial_fold(b, f, "hd_acc", in, body);
    print_result_element(b, kernel, f, "hd_acc", in, body);
    body += "    }\n";
    b.launch(kernel, "serial_reduction", grid_of(m.blocks),
             {static_cast<unsigned>(m.threads), 1, 1}, reduction_params(b, kernel, f), 256, body);
}

// The per-thread part of a block reduction over reduction indices [begin, end) (C strings).
void print_block_fold(const SourceBuilder& b, const ReductionForm& f, const std::string& begin,
                      const std::string& end, std::int64_t threads, const std::string& in,
                      std::string& body) {
    DType t = b.buffer_dtype(f.update->write_buffer);
    body += in + c_value_type(t) +
            " hd_acc = " + identity_literal(b.dialect, f.update->reduce_op, t) + ";\n";
    body += in + "for (long hd_r = " + begin + " + threadIdx.x; hd_r < " + end +
            "; hd_r += " + std::to_string(threads) + "L) {\n";
    print_unflatten("hd_r", f.extents, f.reductions, in + "    ", body);
    print_fold(b, *f.update, "hd_acc", in + "    ", "t", body);
    body += in + "}\n";
}

void emit_block(SourceBuilder& b, int kernel, const ReductionForm& f,
                const sched::GpuReductionMapping& m) {
    DType t = b.buffer_dtype(f.update->write_buffer);
    std::string body, in = "        ";
    print_unflatten("hd_o", f.extents, f.outputs, in, body);
    print_block_fold(b, f, "0L", int_text(f.reduction_size), m.threads, in, body);
    print_tree(b, f.update->reduce_op, t, m.threads, in, body);
    print_final_store(b, kernel, f, in, body);
    emit_block_kernel(b, kernel, "block_reduction", t, m.threads, m.blocks, "hd_o", f.num_outputs,
                      body, reduction_params(b, kernel, f));
}

// Partials: block hd_b reduces slice hd_b % S of output hd_b / S into the scratch buffer; then
// one block per output over its S partials.
void emit_split(SourceBuilder& b, int kernel, const ReductionForm& f,
                const sched::GpuReductionMapping& m) {
    const poly::Statement& u = *f.update;
    DType t = b.buffer_dtype(u.write_buffer);
    const std::int64_t slices = m.slices, chunk = ceil_div(f.reduction_size, slices);
    int scratch = b.add_scratch(t, f.num_outputs * slices);
    std::string sname = b.buffer_name(scratch), in = "        ";
    std::string body = in + "const long hd_o = hd_b / " + int_text(slices) + ", hd_sl = hd_b % " +
                       int_text(slices) + ";\n";
    print_unflatten("hd_o", f.extents, f.outputs, in, body);
    body += in + "const long hd_end = hd_lmin(" + int_text(f.reduction_size) + ", (hd_sl + 1L) * " +
            int_text(chunk) + ");\n";
    print_block_fold(b, f, "hd_sl * " + int_text(chunk), "hd_end", m.threads, in, body);
    print_tree(b, u.reduce_op, t, m.threads, in, body);
    body += in + "if (threadIdx.x == 0) " + sname + "[hd_b] = " + store_value(t, "hd_red[0]") +
            ";\n" + in + b.dialect.barrier + "\n";
    KernelParams params = statement_params(u);
    params.add(scratch, true);
    emit_block_kernel(b, kernel, "split_partial", t, m.threads, m.blocks, "hd_b",
                      f.num_outputs * slices, body, params);
    body.clear();
    print_unflatten("hd_o", f.extents, f.outputs, in, body);
    body +=
        in + c_value_type(t) + " hd_acc = " + identity_literal(b.dialect, u.reduce_op, t) + ";\n";
    std::string part = sname + "[hd_o * " + int_text(slices) + " + hd_j]";
    if (t == DType::Bool) part = "(" + part + " != 0)";
    body += in + "for (long hd_j = threadIdx.x; hd_j < " + int_text(slices) +
            "; hd_j += " + std::to_string(m.final_threads) +
            "L) hd_acc = " + c_combine(u.reduce_op, t, "hd_acc", part) + ";\n";
    print_tree(b, u.reduce_op, t, m.final_threads, in, body);
    print_final_store(b, kernel, f, in, body);
    emit_block_kernel(b, kernel, "split_final", t, m.final_threads, m.final_blocks, "hd_o",
                      f.num_outputs, body, partials_params(b, kernel, f, scratch));
}

} // namespace

void emit_reduction(SourceBuilder& b, int kernel, const ReductionForm& f,
                    const sched::GpuReductionMapping& mapping) {
    if (f.num_outputs == 0) return;
    switch (mapping.strategy) {
    case sched::GpuReductionStrategy::Split:
        emit_split(b, kernel, f, mapping);
        break;
    case sched::GpuReductionStrategy::Block:
        emit_block(b, kernel, f, mapping);
        break;
    case sched::GpuReductionStrategy::Serial:
        emit_serial(b, kernel, f, mapping);
        break;
    }
}

} // namespace hedra::backend::cuda

// The map template: one thread per point of an Assign statement's box, the box flattened
// (last counter fastest, so consecutive threads write consecutive elements of a row-major
// result) and walked grid-stride, so any size fits the grid limits.
#include <algorithm>

#include "backends/cuda/cuda_kernels.hpp"

namespace hedra::backend::cuda {

namespace {
constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 1 << 20;
} // namespace

void emit_map(SourceBuilder& b, int kernel, int statement) {
    const poly::Statement& st = b.program.kernels.at(kernel).statements.at(statement);
    std::int64_t total = product(st.extents);
    if (total == 0) return;
    std::vector<std::string> counters;
    for (std::size_t d = 0; d < st.extents.size(); ++d)
        counters.push_back("i" + std::to_string(d));
    std::string body = "    const long hd_stride = (long)gridDim.x * blockDim.x;\n";
    body += "    for (long hd_flat = (long)blockIdx.x * blockDim.x + threadIdx.x; hd_flat < " +
            int_text(total) + "; hd_flat += hd_stride) {\n";
    std::string in = "        ";
    print_unflatten("hd_flat", st.extents, counters, in, body);
    std::string value = print_value(b, st, in, "t", body);
    DType t = b.buffer_dtype(st.write_buffer);
    body += in + b.buffer_name(st.write_buffer) + "[" +
            linear_index(b, st.write_buffer, st.write_access) + "] = " + store_value(t, value) +
            ";\n    }\n";
    CudaLaunch launch;
    launch.function = b.next_name(kernel);
    launch.strategy = "map";
    launch.kernel = kernel;
    std::int64_t threads = std::min<std::int64_t>(kThreads, ceil_div(total, 32) * 32);
    launch.block = {static_cast<unsigned>(threads), 1, 1};
    launch.grid = {static_cast<unsigned>(std::min(ceil_div(total, threads), kMaxBlocks)), 1, 1};
    KernelParams params = statement_params(st);
    launch.buffers = params.buffers;
    emit_kernel(b, launch.function, params, kThreads, body);
    b.launches.push_back(std::move(launch));
}

} // namespace hedra::backend::cuda

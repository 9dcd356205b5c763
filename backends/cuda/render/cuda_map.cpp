// The map template: one thread per point of an Assign statement's box, the box flattened
// (last counter fastest, so consecutive threads write consecutive elements of a row-major
// result) and walked grid-stride, so any size fits the grid limits. The statements of one
// launch group (gpu.forms, sched::map_launch_groups) run over the flat index one after the
// other; where a later statement of the group writes an element an earlier one does too (a
// pad's zeros around the interior), the earlier one tests and leaves it (later wins, as when
// launched in order).
#include "backends/cuda/render/cuda_kernels.hpp"

namespace hedra::backend::cuda {

void emit_maps(SourceBuilder& b, int kernel, const std::vector<int>& statements,
               std::int64_t threads, std::int64_t blocks) {
    const poly::Kernel& k = b.program.kernels.at(kernel);
    std::int64_t total = 0;
    for (int s : statements)
        total += product(k.statements.at(s).extents);
    if (total == 0) return;
    std::string body = grid_stride_loop(b.dialect, "hd_flat", int_text(total), true);
    KernelParams params;
    std::int64_t begin = 0;
    bool first = true;
    for (std::size_t j = 0; j < statements.size(); ++j) {
        const poly::Statement& st = k.statements.at(statements[j]);
        std::int64_t n = product(st.extents);
        if (n == 0) continue;
        std::string in = "        ";
        if (statements.size() > 1) {
            // This statement's part of the flat range.
            body +=
                in + (first ? "" : "} else ") + "if (hd_flat < " + int_text(begin + n) + ") {\n";
            in += "    ";
            body += in + "const long hd_p = hd_flat - " + int_text(begin) + ";\n";
        } else {
            body += in + "const long hd_p = hd_flat;\n";
        }
        print_unflatten("hd_p", st.extents, counter_names(st.extents.size()), in, body);
        // An element a later statement of the launch writes is left to it (later wins).
        std::string skip;
        for (std::size_t q = j + 1; q < statements.size(); ++q) {
            const poly::Statement& later = k.statements.at(statements[q]);
            if (!sched::disjoint_writes(st, later))
                skip += (skip.empty() ? "" : " || ") + ("(" + covered_by(st, later) + ")");
        }
        if (!skip.empty()) {
            body += in + "if (!(" + skip + ")) {\n";
            in += "    ";
        }
        std::string value = print_value(b, st, in, "t", body);
        body += store_line(b, st.write_buffer, st.write_access, value, in);
        if (!skip.empty()) {
            in.resize(in.size() - 4);
            body += in + "}\n";
        }
        params.add(statement_params(st));
        begin += n;
        first = false;
    }
    if (statements.size() > 1) body += "        }\n";
    body += "    }\n";
    b.launch(kernel, "map", grid_of(blocks), {static_cast<unsigned>(threads), 1, 1}, params, 256,
             body);
}

} // namespace hedra::backend::cuda

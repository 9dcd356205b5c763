// The C text of a scan's loop head (see c_scan_loop.hpp).
#include "backends/common/c_scan_loop.hpp"

namespace hedra::backend {

std::string scan_loop_head(const poly::ProgramIR& program, const poly::ScanLoop& loop, int depth,
                           const std::string& table) {
    const std::string d = std::to_string(depth);
    const std::string i = "hd_iter" + d, t = "hd_step" + d;
    const std::string steps = loop.param >= 0
                                  ? poly::param_value_name(program.param_index(loop.param))
                                  : std::to_string(loop.steps) + "L";
    std::string s = "    for (long " + i + " = 0; " + i + " < " + steps + "; ++" + i +
                    ") {\n    const long " + t + " = " +
                    (loop.reverse ? steps + " - 1 - " + i : i) + ";\n    (void)" + t + ";\n";
    for (int b : loop.slices) {
        const poly::StepSlice& sl = program.buffers[static_cast<std::size_t>(b)].slice;
        const poly::Buffer& parent = program.buffers[static_cast<std::size_t>(sl.parent)];
        // Rows are dense: a parent's row is every axis after its leading one (declared sizes).
        std::int64_t row = static_cast<std::int64_t>(dtype_size(parent.dtype));
        for (std::size_t a = 1; a < parent.sizes.size(); ++a)
            row *= parent.sizes[a];
        const std::string shift = sl.shift ? " + (" + std::to_string(sl.shift) + ")" : "";
        const std::string r = sl.window > 0
                                  ? "((" + i + shift + ") % " + std::to_string(sl.window) + ")"
                                  : "(" + t + shift + ")";
        std::string at = "(void*)((char*)" + table + "[" + std::to_string(sl.parent) + "] + " + r +
                         " * " + std::to_string(row) + "L)";
        if (sl.edge >= 0)
            at = "(" + i + " == " + steps + " - 1 ? " + table + "[" + std::to_string(sl.edge) +
                 "] : " + at + ")";
        s += "    " + table + "[" + std::to_string(b) + "] = " + at + ";\n";
    }
    return s;
}

} // namespace hedra::backend

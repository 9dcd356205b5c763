// Segments of a large expression as noinline functions (see c_segments.hpp). A node gets a slot
// when it is an input, a result, or read by a later segment; everything else is a local of
// its segment's function.
#include "backends/common/c_segments.hpp"

#include <algorithm>
#include <array>
#include <unordered_map>

#include "backends/common/c_expr.hpp"
#include "core/error.hpp"
#include "core/scalar_dag.hpp"

namespace hedra::backend {
namespace {

constexpr std::array<DType, 5> kTypes = {DType::Bool, DType::I32, DType::I64, DType::F32,
                                         DType::F64};

// Slots hold values: the half formats' are f32.
int type_number(DType t) {
    t = compute_dtype(t);
    for (std::size_t i = 0; i < kTypes.size(); ++i)
        if (kTypes[i] == t) return static_cast<int>(i);
    internal_error("c_segments: unknown dtype");
}

std::string array_name(int type) {
    static const char* names[] = {"hd_sb", "hd_si", "hd_sl", "hd_sf", "hd_sd"};
    return names[type];
}

} // namespace

bool worth_segmenting(const ScalarExpr& e) {
    return topological_order(e).size() > kSegmentedNodes;
}

SegmentedValue print_segmented(const ScalarExpr& e, const std::function<std::string(int)>& input,
                               const std::string& indent, const std::string& name,
                               std::string& out) {
    std::vector<ScalarExpr> order = topological_order(e);
    const std::size_t n = order.size();
    std::unordered_map<const ScalarNode*, std::size_t> index;
    for (std::size_t i = 0; i < n; ++i)
        index.emplace(order[i].get(), i);
    // Segments of operation nodes; leaves belong to none (-1).
    std::vector<int> segment(n, -1);
    int segments = 0;
    for (std::size_t i = 0, ops = 0; i < n; ++i) {
        if (order[i]->args.empty()) continue;
        segment[i] = static_cast<int>(ops++ / kSegmentNodes);
        segments = segment[i] + 1;
    }
    // Slots: inputs, the result, and values read by a later segment.
    std::vector<int> slot(n, -1);
    std::array<int, kTypes.size()> slots{};
    auto give_slot = [&](std::size_t i) {
        if (slot[i] < 0) slot[i] = slots[static_cast<std::size_t>(type_number(order[i]->dtype))]++;
    };
    for (std::size_t i = 0; i < n; ++i) {
        if (order[i]->op == ScalarOp::Input) give_slot(i);
        for (const ScalarExpr& a : order[i]->args) {
            std::size_t j = index.at(a.get());
            if (order[j]->op != ScalarOp::Const && segment[j] != segment[i]) give_slot(j);
        }
    }
    give_slot(n - 1);
    auto slot_ref = [&](std::size_t i) {
        return array_name(type_number(order[i]->dtype)) + "[" + std::to_string(slot[i]) + "]";
    };

    std::string params, args;
    for (std::size_t t = 0; t < kTypes.size(); ++t) {
        if (slots[t] == 0) continue;
        out += indent + c_value_type(kTypes[t]) + " " + array_name(static_cast<int>(t)) + "[" +
               std::to_string(slots[t]) + "];\n";
        params += std::string(params.empty() ? "" : ", ") + c_value_type(kTypes[t]) +
                  "* __restrict " + array_name(static_cast<int>(t));
        args += (args.empty() ? "" : ", ") + array_name(static_cast<int>(t));
    }
    for (std::size_t i = 0; i < n; ++i)
        if (order[i]->op == ScalarOp::Input)
            out += indent + slot_ref(i) + " = " + input(static_cast<int>(order[i]->ivalue)) + ";\n";

    // A node without a slot that one later node of its segment reads is written into that
    // node's expression (as c_expr does), nested at most kMaxInlineDepth deep.
    std::vector<int> uses = use_counts(order, {e});
    std::vector<std::string> inline_text(n);
    std::vector<int> depth(n, 0);
    SegmentedValue r;
    std::size_t i = 0;
    for (int s = 0; s < segments; ++s) {
        std::string fn = name + "_" + std::to_string(s);
        r.functions += "static __attribute__((noinline)) void " + fn + "(" + params + ") {\n";
        for (; i < n && segment[i] <= s; ++i) {
            if (segment[i] != s) continue;
            const ScalarNode& x = *order[i];
            std::vector<std::string> a;
            for (const ScalarExpr& arg : x.args) {
                std::size_t j = index.at(arg.get());
                depth[i] = std::max(depth[i], depth[j]);
                a.push_back(order[j]->op == ScalarOp::Const ? c_literal(*order[j])
                            : segment[j] != s               ? slot_ref(j)
                            : !inline_text[j].empty()       ? inline_text[j]
                                                            : "v" + std::to_string(j));
            }
            std::string value = c_operation(x, a);
            if (uses[i] == 1 && slot[i] < 0 && depth[i] < kMaxInlineDepth) {
                ++depth[i];
                inline_text[i] = operand_text(value);
                continue;
            }
            depth[i] = 0;
            std::string v = "v" + std::to_string(i);
            r.functions +=
                "    const " + std::string(c_value_type(x.dtype)) + " " + v + " = " + value + ";\n";
            if (slot[i] >= 0) r.functions += "    " + slot_ref(i) + " = " + v + ";\n";
        }
        r.functions += "}\n";
        out += indent + fn + "(" + args + ");\n";
    }
    r.value = order[n - 1]->op == ScalarOp::Const ? c_literal(*order[n - 1]) : slot_ref(n - 1);
    return r;
}

} // namespace hedra::backend

// Collective nodes (see collective.hpp).
#include "core/collective.hpp"

#include <unordered_set>

#include "core/error.hpp"
#include "core/node_builders.hpp"

namespace hedra {

const char* collective_op_name(CollectiveOp op) {
    switch (op) {
    case CollectiveOp::Sum:
        return "all_reduce_sum";
    case CollectiveOp::Max:
        return "all_reduce_max";
    case CollectiveOp::Copy:
        return "copy_to_group";
    }
    return "?";
}

namespace {

Array collective(const char* op_name, const Array& x, std::shared_ptr<CollectiveGroup> group,
                 CollectiveOp op, SourceLocation loc) {
    if (!x.valid()) throw Error(std::string(op_name) + ": the array is empty");
    if (!group)
        throw Error(std::string(op_name) + ": no group given for " + x.describe() +
                    "; pass distributed::collective_group(communicator)");
    if (!is_float(x.dtype()) && x.dtype() != DType::I32 && x.dtype() != DType::I64)
        throw Error(std::string(op_name) + ": needs f32, f64, i32 or i64 values, got " +
                    x.describe());
    if (x.dtype() == DType::F16 || x.dtype() == DType::BF16)
        throw Error(std::string(op_name) + ": half values are summed in f32; cast " + x.describe() +
                    " to f32 first");
    // A group of one: nothing to combine (and the graph stays free of cuts).
    if (group->size() == 1) return x;
    auto n = detail::new_node(NodeKind::Collective, x.dtype(), x.shape(), {x.node()}, loc);
    n->collective_op = op;
    n->group = std::move(group);
    return Array(intern(std::move(n)));
}

} // namespace

Array all_reduce(const Array& x, std::shared_ptr<CollectiveGroup> group, CollectiveOp op,
                 SourceLocation loc) {
    if (op == CollectiveOp::Copy) return copy_to_group(x, std::move(group), loc);
    return collective("all_reduce", x, std::move(group), op, loc);
}

Array copy_to_group(const Array& x, std::shared_ptr<CollectiveGroup> group, SourceLocation loc) {
    return collective("copy_to_group", x, std::move(group), CollectiveOp::Copy, loc);
}

bool has_collectives(const std::vector<NodePtr>& outputs) {
    std::vector<const Node*> stack;
    for (const NodePtr& n : outputs)
        stack.push_back(n.get());
    std::unordered_set<const Node*> seen;
    while (!stack.empty()) {
        const Node* n = stack.back();
        stack.pop_back();
        if (!seen.insert(n).second || n->memo()) continue;
        if (n->kind == NodeKind::Collective) return true;
        for (const NodePtr& in : n->inputs)
            stack.push_back(in.get());
    }
    return false;
}

} // namespace hedra

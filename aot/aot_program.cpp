// lower_aot (aot_program.hpp): the openmp backend's lowering of a graph, and its entry's buffers
// described as a function's arguments.
#include "aot/aot_program.hpp"

#include "aot/aot_cuda.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "backends/common/buffer_plan.hpp"
#include "backends/common/graph_key.hpp"
#include "backends/openmp/lower.hpp"
#include "backends/openmp/openmp_backend.hpp"
#include "core/error.hpp"
#include "core/symbolic.hpp"
#include "scheduler/partition.hpp"

namespace hedra::aot {
namespace {

// As the JIT's arena (buffer_plan.hpp); the CUDA driver's allocations are 256-byte aligned.
std::size_t alignment(const AotProgram& p) {
    return p.target == "cuda" ? 256 : 64;
}

bool is_identifier(const std::string& s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
}

// `wanted` as a C identifier not yet in `taken` (which it joins): other characters become '_',
// a clash gets a number.
std::string unique_identifier(std::string wanted, std::set<std::string>& taken) {
    for (char& c : wanted)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    if (wanted.empty() || std::isdigit(static_cast<unsigned char>(wanted[0])))
        wanted = "a" + wanted;
    std::string name = wanted;
    for (int k = 2; !taken.insert(name).second; ++k)
        name = wanted + "_" + std::to_string(k);
    return name;
}

// "[batch<=64, 784]"; an axis not indexed from 0 by 1 shows its range: "[3 of [1,4)]".
std::string shape_text(const Shape& shape) {
    std::string s = "[";
    for (std::size_t d = 0; d < shape.ranges().size(); ++d) {
        const Range& r = shape.ranges()[d];
        s += d ? ", " : "";
        if (r.is_dynamic())
            s += r.to_string();
        else if (r.start == 0 && r.step == 1)
            s += std::to_string(r.size);
        else
            s += std::to_string(r.size) + " of " + r.to_string();
    }
    return s + "]";
}

void check_request(const AotRequest& r) {
    if (!is_identifier(r.name))
        throw Error("hedra-aot: the name '" + r.name +
                    "' is not a C identifier; give one with --name");
    if (r.outputs.empty()) throw Error("hedra-aot: the program '" + r.name + "' has no outputs");
    if (!r.output_names.empty() && r.output_names.size() != r.outputs.size())
        throw Error("hedra-aot: " + std::to_string(r.output_names.size()) + " output names for " +
                    std::to_string(r.outputs.size()) + " outputs");
    std::set<const Node*> given;
    for (std::size_t i = 0; i < r.placeholders.size(); ++i) {
        if (r.placeholders[i]->kind != NodeKind::Placeholder)
            throw Error("hedra-aot: input " + std::to_string(i) + " is a " +
                        node_kind_name(r.placeholders[i]->kind) + ", not a placeholder");
        if (!given.insert(r.placeholders[i].get()).second)
            throw Error("hedra-aot: input " + std::to_string(i) + " is given twice");
    }
    for (const NodePtr& n : topological_order(r.outputs))
        if (n->kind == NodeKind::Placeholder && !given.count(n.get()))
            throw Error("hedra-aot: the outputs depend on the placeholder '" + n->name + "' " +
                        n->shape.to_string() + ", which is not among the inputs");
    for (const auto* nodes : {&r.outputs, &r.placeholders})
        for (const NodePtr& n : *nodes)
            if (!symbolic_axis_leads(n->shape))
                throw Error("hedra-aot: the array " + n->shape.to_string() +
                            " has a symbolic axis after its first; make it the leading one");
}

AotArray describe(const NodePtr& node, std::string name, int buffer, const poly::ProgramIR& ir) {
    AotArray a{std::move(name),         node->dtype, node->shape.sizes(), {},
               shape_text(node->shape), buffer};
    for (const Range& r : node->shape.ranges())
        a.size_args.push_back(r.is_dynamic() ? ir.param_index(r.param) : -1);
    return a;
}

std::size_t aligned(std::size_t n, std::size_t to) {
    return (n + to - 1) / to * to;
}

// Workspace offsets: the arena's slots, then every other buffer the program allocates that no
// output argument holds.
void plan_workspace(const poly::ProgramIR& ir, const std::vector<backend::BufferBinding>& bind,
                    AotProgram& p) {
    backend::BufferPlan plan = backend::plan_temporaries(ir);
    std::vector<std::size_t> slot_offset;
    for (std::size_t bytes : plan.slot_bytes) {
        slot_offset.push_back(p.workspace_bytes);
        p.workspace_bytes += aligned(bytes, alignment(p));
    }
    std::set<int> held;
    for (const AotArray& o : p.outputs)
        held.insert(o.buffer);
    p.workspace_offset.assign(ir.buffers.size(), -1);
    for (std::size_t b = 0; b < ir.buffers.size(); ++b) {
        if (bind[b].kind != backend::BufferBinding::Kind::Allocate) continue;
        if (plan.slot[b] >= 0) {
            p.workspace_offset[b] = static_cast<std::int64_t>(slot_offset[plan.slot[b]]);
        } else if (!held.count(static_cast<int>(b))) {
            p.workspace_offset[b] = static_cast<std::int64_t>(p.workspace_bytes);
            p.workspace_bytes += aligned(ir.buffers[b].storage_bytes(), alignment(p));
        }
    }
}

} // namespace

AotProgram lower_aot(const AotRequest& r, const AotTarget& target) {
    check_request(r);
    std::vector<NodePtr> leaves = backend::graph_key(r.outputs, r.placeholders).leaves;
    AotProgram p;
    p.target = target.name;
    p.name = r.name;
    poly::ProgramIR ir;
    if (target.name == "openmp") {
        ir = sched::partition(r.outputs, r.placeholders);
        backend::LowerOptions lo;
        lo.entry = "hedra_aot_" + r.name;
        lo.min_parallel_work = backend::openmp_min_parallel_work();
        p.entry = lo.entry;
        p.source = backend::lower(ir, lo).source;
        p.flags = backend::openmp_compile_flags();
    } else if (target.name == "cuda") {
        ir = lower_cuda_program(r, target, p);
    } else {
        throw Error("hedra-aot: unknown target '" + target.name + "' (known: openmp, cuda)");
    }
    p.num_buffers = ir.buffers.size();

    std::set<std::string> taken = {r.name, "workspace", "num_threads"};
    for (std::size_t k = 0; k < ir.params.size(); ++k)
        p.sizes.push_back({unique_identifier(param_name(ir.params[k]), taken), ir.param_max[k]});
    std::vector<backend::BufferBinding> bind;
    std::vector<int> input_buffer(r.placeholders.size(), -1);
    for (const poly::Buffer& b : ir.buffers) {
        bind.push_back(backend::binding_of(b, r.placeholders, leaves, "hedra-aot"));
        const int index = static_cast<int>(bind.size()) - 1;
        if (bind.back().kind == backend::BufferBinding::Kind::Placeholder)
            input_buffer[static_cast<std::size_t>(bind.back().index)] = index;
        if (bind.back().kind == backend::BufferBinding::Kind::Leaf) {
            const NodePtr& leaf = leaves.at(static_cast<std::size_t>(bind.back().index));
            const HostArray& data = leaf->memo() ? *leaf->memo() : leaf->data;
            const char* raw = static_cast<const char*>(data.raw());
            p.embedded.push_back({index, std::string(raw, raw + data.bytes())});
        }
    }
    for (std::size_t i = 0; i < r.placeholders.size(); ++i) {
        const NodePtr& n = r.placeholders[i];
        std::string want = n->name.empty() ? "input" + std::to_string(i) : n->name;
        p.inputs.push_back(describe(n, unique_identifier(want, taken), input_buffer[i], ir));
    }
    for (std::size_t o = 0; o < r.outputs.size(); ++o) {
        std::string want = r.output_names.empty() || r.output_names[o].empty()
                               ? "output" + std::to_string(o)
                               : r.output_names[o];
        p.outputs.push_back(
            describe(r.outputs[o], unique_identifier(want, taken), ir.outputs[o], ir));
    }
    plan_workspace(ir, bind, p);
    for (std::int64_t& scratch : p.scratch_offset) { // (cuda) its size until here
        const auto bytes = static_cast<std::size_t>(scratch);
        scratch = static_cast<std::int64_t>(p.workspace_bytes);
        p.workspace_bytes += aligned(bytes, alignment(p));
    }
    return p;
}

} // namespace hedra::aot

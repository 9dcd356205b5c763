// compute() and compile(): check the graph (placeholders only where compile() was told about
// them), hand it to a backend, and memoize what compute() produced on the nodes, so that later
// graphs using these arrays read the results instead of recomputing them.
#include "core/compute.hpp"

#include <algorithm>
#include <unordered_set>

#include "core/collective.hpp"
#include "core/collective_program.hpp"
#include "core/node_builders.hpp"
#include "core/symbolic.hpp"

namespace hedra {
namespace {

using detail::site;

std::string placeholder_string(const NodePtr& p) {
    return "placeholder " + (p->name.empty() ? "#" + std::to_string(p->id) : "'" + p->name + "'") +
           " (" + std::string(dtype_name(p->dtype)) + " " + p->shape.to_string() + ", created at " +
           site(p) + ")";
}

// Placeholders reachable from `outputs`, not looking behind computed (memoized) nodes.
std::vector<NodePtr> reachable_placeholders(const std::vector<NodePtr>& outputs) {
    std::vector<NodePtr> found, stack(outputs.begin(), outputs.end());
    std::unordered_set<const Node*> seen;
    while (!stack.empty()) {
        NodePtr n = std::move(stack.back());
        stack.pop_back();
        if (!seen.insert(n.get()).second) continue;
        if (n->kind == NodeKind::Placeholder) found.push_back(n);
        if (n->memo()) continue;
        for (const NodePtr& in : n->inputs)
            stack.push_back(in);
    }
    return found;
}

std::shared_ptr<Backend> choose_backend(const ComputeOptions& options) {
    return options.backend.empty() ? default_backend() : get_backend(options.backend);
}

std::vector<NodePtr> nodes_of(const std::vector<Array>& arrays) {
    std::vector<NodePtr> nodes;
    for (const Array& a : arrays)
        nodes.push_back(a.node());
    return nodes;
}

void check_results(const std::string& backend, const std::vector<NodePtr>& nodes,
                   const std::vector<HostArray>& results, const ParamValues& values = {}) {
    HEDRA_INTERNAL_CHECK(results.size() == nodes.size(),
                         "backend '" + backend + "' returned " + std::to_string(results.size()) +
                             " results for " + std::to_string(nodes.size()) + " outputs");
    for (std::size_t i = 0; i < nodes.size(); ++i)
        HEDRA_INTERNAL_CHECK(results[i].sizes() == actual_sizes(nodes[i]->shape, values) &&
                                 results[i].dtype() == nodes[i]->dtype,
                             "backend '" + backend + "' returned a result of shape " +
                                 Shape::of(results[i].sizes()).to_string() + " and dtype " +
                                 std::string(dtype_name(results[i].dtype())) + " for " +
                                 std::string(dtype_name(nodes[i]->dtype)) + " " +
                                 nodes[i]->shape.to_string());
}

// Options every backend relies on; a backend could not report them in the user's words.
void check_options(const CompileOptions& o, const char* op) {
    for (std::size_t i = 0; i < o.tile_sizes.size(); ++i)
        if (o.tile_sizes[i] < 1)
            throw Error(std::string(op) + ": tile size " + std::to_string(o.tile_sizes[i]) +
                        " (entry " + std::to_string(i) + " of tile_sizes " +
                        detail::list_string(o.tile_sizes) + ") must be at least 1");
    if (o.num_threads < 0)
        throw Error(std::string(op) + ": num_threads " + std::to_string(o.num_threads) +
                    " must be 0 (the default) or positive");
}

} // namespace

std::vector<HostArray> compute(const std::vector<Array>& arrays, const ComputeOptions& options) {
    check_options(options, "compute");
    std::vector<NodePtr> nodes = nodes_of(arrays);
    // Evaluate each node without a memo once.
    std::vector<NodePtr> todo;
    for (const NodePtr& n : nodes)
        if (!n->memo() && std::find(todo.begin(), todo.end(), n) == todo.end()) todo.push_back(n);
    if (!todo.empty()) {
        if (auto ps = reachable_placeholders(todo); !ps.empty())
            throw Error("compute: the arrays depend on " + placeholder_string(ps.front()) +
                        "; use compile() and pass the placeholder's value as an input");
        if (auto params = symbolic_params(todo); !params.empty())
            throw Error("compute: the arrays have the symbolic extent '" +
                        param_name(params.front()) +
                        "', which only a compiled program's inputs give a value; use compile() "
                        "with a placeholder that has it");
        std::shared_ptr<Backend> backend = choose_backend(options);
        std::vector<HostArray> results =
            has_collectives(todo) ? detail::compile_with_collectives(todo, {}, options)->run({})
                                  : backend->evaluate(todo, options);
        check_results(backend->name(), todo, results);
        for (std::size_t i = 0; i < todo.size(); ++i)
            todo[i]->set_memo(std::move(results[i]));
    }
    std::vector<HostArray> out;
    for (const NodePtr& n : nodes)
        out.push_back(*n->memo());
    return out;
}

HostArray compute(const Array& a, const ComputeOptions& options) {
    return compute(std::vector<Array>{a}, options).at(0);
}

CompiledProgram::CompiledProgram(std::shared_ptr<Program> program,
                                 std::vector<NodePtr> placeholders, std::vector<NodePtr> outputs)
    : program_(std::move(program)), placeholders_(std::move(placeholders)),
      outputs_(std::move(outputs)) {
    HEDRA_INTERNAL_CHECK(program_ != nullptr, "compiled program without a program");
    std::vector<NodePtr> all = outputs_;
    all.insert(all.end(), placeholders_.begin(), placeholders_.end());
    symbolic_ = has_symbolic_extents(all);
}

std::optional<ProgramMemory> CompiledProgram::memory() const {
    return program_->memory();
}

std::vector<HostArray> CompiledProgram::operator()(const std::vector<HostArray>& inputs) const {
    return (*this)(inputs, OutputHook{});
}

ParamValues CompiledProgram::check_inputs(const std::vector<HostArray>& inputs) const {
    if (inputs.size() != placeholders_.size())
        throw Error("compiled program: expected " + std::to_string(placeholders_.size()) +
                    " inputs (one per placeholder), got " + std::to_string(inputs.size()));
    ParamValues values;
    if (symbolic_) values = bind_params(placeholders_, inputs, "compiled program");
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const NodePtr& p = placeholders_[i];
        if (!symbolic_ && inputs[i].sizes() != p->shape.sizes())
            throw Error("compiled program: input " + std::to_string(i) + " has shape " +
                        Shape::of(inputs[i].sizes()).to_string() + " but " + placeholder_string(p) +
                        " has shape " + p->shape.to_string());
        if (inputs[i].dtype() != p->dtype)
            throw Error("compiled program: input " + std::to_string(i) + " has dtype " +
                        std::string(dtype_name(inputs[i].dtype())) + " but " +
                        placeholder_string(p) + " has dtype " + std::string(dtype_name(p->dtype)));
        if (inputs[i].address() == nullptr && inputs[i].size() > 0)
            throw Error("compiled program: input " + std::to_string(i) + " for " +
                        placeholder_string(p) + " has no data");
    }
    return values;
}

std::vector<HostArray> CompiledProgram::operator()(const std::vector<HostArray>& inputs,
                                                   const OutputHook& hook) const {
    ParamValues values = check_inputs(inputs);
    std::vector<HostArray> results =
        hook.ready ? program_->run_notifying(inputs, hook) : program_->run(inputs);
    check_results("compiled program", outputs_, results, values);
    return results;
}

std::vector<HostArray> CompiledProgram::operator()(std::vector<HostArray>&& inputs) const {
    ParamValues values = check_inputs(inputs);
    std::vector<HostArray> results = program_->run_donated(inputs);
    check_results("compiled program", outputs_, results, values);
    return results;
}

CompiledProgram compile(const std::vector<Array>& outputs, const std::vector<Array>& placeholders,
                        const ComputeOptions& options) {
    check_options(options, "compile");
    std::vector<NodePtr> outs = nodes_of(outputs), ins = nodes_of(placeholders);
    if (outs.empty()) throw Error("compile: no outputs given");
    for (std::size_t i = 0; i < ins.size(); ++i) {
        if (ins[i]->kind != NodeKind::Placeholder)
            throw Error("compile: input " + std::to_string(i) + " is a " +
                        node_kind_name(ins[i]->kind) + " " + ins[i]->shape.to_string() +
                        " created at " + site(ins[i]) + ", not a placeholder");
        for (std::size_t j = 0; j < i; ++j)
            if (ins[j] == ins[i])
                throw Error("compile: " + placeholder_string(ins[i]) + " is given twice, as " +
                            "inputs " + std::to_string(j) + " and " + std::to_string(i));
    }
    for (const NodePtr& p : reachable_placeholders(outs))
        if (std::find(ins.begin(), ins.end(), p) == ins.end())
            throw Error("compile: the outputs depend on " + placeholder_string(p) +
                        ", which is not among the " + std::to_string(ins.size()) +
                        " placeholders given");
    for (std::size_t i = 0; i < options.donate.size(); ++i) {
        const int d = options.donate[i];
        if (d < 0 || d >= static_cast<int>(ins.size()))
            throw Error("compile: donate lists position " + std::to_string(d) + ", but there " +
                        "are " + std::to_string(ins.size()) + " placeholders; list positions of " +
                        "the placeholders given");
        for (std::size_t j = 0; j < i; ++j)
            if (options.donate[j] == d)
                throw Error("compile: donate lists position " + std::to_string(d) + " twice");
    }
    std::shared_ptr<Backend> backend = choose_backend(options);
    std::vector<int> in_params = symbolic_params(ins);
    for (int p : symbolic_params(outs))
        if (std::find(in_params.begin(), in_params.end(), p) == in_params.end())
            throw Error("compile: the outputs have the symbolic extent '" + param_name(p) +
                        "' but none of the " + std::to_string(ins.size()) +
                        " placeholders has it, so no call could give its value");
    std::unique_ptr<Program> program;
    if (has_collectives(outs))
        program = detail::compile_with_collectives(outs, ins, options);
    else if (!in_params.empty() && !backend->compiles_symbolic_extents(outs, ins))
        program = std::make_unique<SpecializingProgram>(backend, outs, ins, options);
    else
        program = backend->compile(outs, ins, options);
    HEDRA_INTERNAL_CHECK(program != nullptr,
                         "backend '" + backend->name() + "' returned no program");
    return CompiledProgram(std::shared_ptr<Program>(std::move(program)), std::move(ins),
                           std::move(outs));
}

} // namespace hedra

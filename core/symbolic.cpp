// Symbolic extents: binding, sizes, specialization (see symbolic.hpp).
#include "core/symbolic.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/node_builders.hpp"
#include "core/scan.hpp"

namespace hedra {
namespace {

bool symbolic(const Shape& s) {
    for (const Range& r : s.ranges())
        if (r.is_dynamic()) return true;
    return false;
}

std::string input_name(const NodePtr& p, std::size_t i) {
    return "input " + std::to_string(i) + " (placeholder " +
           (p->name.empty() ? "#" + std::to_string(p->id) : "'" + p->name + "'") + " " +
           p->shape.to_string() + ")";
}

} // namespace

std::vector<int> symbolic_params(const std::vector<NodePtr>& nodes) {
    std::set<int> params;
    std::vector<const Node*> stack;
    for (const NodePtr& n : nodes)
        stack.push_back(n.get());
    std::unordered_set<const Node*> seen;
    while (!stack.empty()) {
        const Node* n = stack.back();
        stack.pop_back();
        if (!seen.insert(n).second) continue;
        for (const Range& r : n->shape.ranges())
            if (r.is_dynamic()) params.insert(r.param);
        if (n->memo()) continue;
        for (const NodePtr& in : n->inputs)
            stack.push_back(in.get());
    }
    return {params.begin(), params.end()};
}

bool has_symbolic_extents(const std::vector<NodePtr>& nodes) {
    return !symbolic_params(nodes).empty();
}

ParamValues bind_params(const std::vector<NodePtr>& placeholders,
                        const std::vector<HostArray>& inputs, const std::string& op) {
    ParamValues values;
    std::map<int, std::size_t> bound_by;
    for (std::size_t i = 0; i < placeholders.size() && i < inputs.size(); ++i) {
        const Shape& shape = placeholders[i]->shape;
        const std::vector<std::int64_t> sizes = inputs[i].sizes();
        if (static_cast<int>(sizes.size()) != shape.rank())
            throw Error(op + ": " + input_name(placeholders[i], i) + " has shape " +
                        Shape::of(sizes).to_string() + " of rank " + std::to_string(sizes.size()) +
                        "; give an array of rank " + std::to_string(shape.rank()));
        for (int d = 0; d < shape.rank(); ++d) {
            const Range& r = shape[d];
            const std::int64_t n = sizes[static_cast<std::size_t>(d)];
            if (!r.is_dynamic()) {
                if (n != r.size)
                    throw Error(op + ": " + input_name(placeholders[i], i) + " has shape " +
                                Shape::of(sizes).to_string() + " but its axis " +
                                std::to_string(d) + " is static of size " + std::to_string(r.size));
                continue;
            }
            if (n < 1 || n > r.size)
                throw Error(op + ": " + input_name(placeholders[i], i) + " has shape " +
                            Shape::of(sizes).to_string() + ": axis " + std::to_string(d) + " ('" +
                            param_name(r.param) + "') is " + std::to_string(n) + ", outside 1.." +
                            std::to_string(r.size) +
                            " (the declared maximum); compile with a larger maximum");
            auto [it, added] = values.emplace(r.param, n);
            if (!added && it->second != n)
                throw Error(op + ": inputs " + std::to_string(bound_by[r.param]) + " and " +
                            std::to_string(i) + " disagree on '" + param_name(r.param) +
                            "': " + std::to_string(it->second) + " and " + std::to_string(n) +
                            " (" + input_name(placeholders[bound_by[r.param]], bound_by[r.param]) +
                            ", " + input_name(placeholders[i], i) + ")");
            if (added) bound_by[r.param] = i;
        }
    }
    return values;
}

bool symbolic_axis_leads(const Shape& shape) {
    int symbolic_axes = 0;
    bool wide_before = false; // an axis of size > 1 before the first symbolic one
    for (const Range& r : shape.ranges()) {
        if (r.is_dynamic())
            ++symbolic_axes;
        else if (symbolic_axes == 0 && r.size != 1)
            wide_before = true;
    }
    return symbolic_axes == 0 || (symbolic_axes == 1 && !wide_before);
}

std::vector<std::int64_t> actual_sizes(const Shape& shape, const ParamValues& values) {
    std::vector<std::int64_t> sizes = shape.sizes();
    for (int d = 0; d < shape.rank(); ++d)
        if (shape[d].is_dynamic()) {
            auto it = values.find(shape[d].param);
            if (it == values.end())
                throw Error("symbolic extent '" + param_name(shape[d].param) + "' of shape " +
                            shape.to_string() +
                            " has no value: no placeholder given to compile() has it");
            sizes[static_cast<std::size_t>(d)] = it->second;
        }
    return sizes;
}

std::vector<NodePtr> specialize(const std::vector<NodePtr>& nodes, const ParamValues& values) {
    std::unordered_map<const Node*, NodePtr> done;
    for (const NodePtr& n : topological_order(nodes)) {
        bool changed = symbolic(n->shape) && !n->memo();
        std::vector<NodePtr> inputs;
        if (!n->memo())
            for (const NodePtr& in : n->inputs) {
                inputs.push_back(done.at(in.get()));
                changed = changed || inputs.back() != in;
            }
        // A scan's body is a graph of its own: specialized with the same values.
        std::shared_ptr<const ScanBody> body = n->body;
        if (body && !n->memo()) {
            std::vector<NodePtr> all = body->params;
            all.insert(all.end(), body->outputs.begin(), body->outputs.end());
            if (has_symbolic_extents(all) || body->steps.is_dynamic()) {
                std::vector<NodePtr> s = specialize(all, values);
                ScanBody b = *body;
                b.params.assign(s.begin(), s.begin() + static_cast<long>(body->params.size()));
                b.outputs.assign(s.begin() + static_cast<long>(body->params.size()), s.end());
                if (b.steps.is_dynamic())
                    b.steps = range(actual_sizes(Shape{b.steps}, values).at(0));
                b.hash = detail::scan_body_hash(b);
                body = std::make_shared<const ScanBody>(std::move(b));
                changed = true;
            }
        }
        if (!changed) {
            done.emplace(n.get(), n);
            continue;
        }
        std::vector<Range> ranges = n->shape.ranges();
        for (Range& r : ranges)
            if (r.is_dynamic()) r = range(actual_sizes(Shape{r}, values).at(0));
        auto m = detail::copy_node_with(*n, std::move(inputs));
        m->shape = Shape(std::move(ranges));
        m->body = std::move(body);
        done.emplace(n.get(), intern(std::move(m)));
    }
    std::vector<NodePtr> out;
    for (const NodePtr& n : nodes)
        out.push_back(done.at(n.get()));
    return out;
}

std::shared_ptr<Program> SpecializingProgram::program_for(const std::vector<HostArray>& inputs) {
    ParamValues values = bind_params(placeholders_, inputs, "compiled program");
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = programs_.find(values);
    if (it == programs_.end()) {
        std::vector<NodePtr> all = outputs_;
        all.insert(all.end(), placeholders_.begin(), placeholders_.end());
        std::vector<NodePtr> s = specialize(all, values);
        std::vector<NodePtr> outs(s.begin(), s.begin() + static_cast<long>(outputs_.size()));
        std::vector<NodePtr> ins(s.begin() + static_cast<long>(outputs_.size()), s.end());
        it = programs_.emplace(values, backend_->compile(outs, ins, options_)).first;
    }
    return it->second;
}

std::vector<HostArray> SpecializingProgram::run(const std::vector<HostArray>& inputs) {
    return program_for(inputs)->run(inputs);
}

std::vector<HostArray> SpecializingProgram::run_notifying(const std::vector<HostArray>& inputs,
                                                          const OutputHook& hook) {
    return program_for(inputs)->run_notifying(inputs, hook);
}

std::vector<HostArray> SpecializingProgram::run_donated(std::vector<HostArray>& inputs) {
    return program_for(inputs)->run_donated(inputs);
}

} // namespace hedra

// The reference backend: a Program that interprets its graph on every run.
#include "backends/reference/reference_backend.hpp"

#include <algorithm>

#include "backends/reference/interpreter.hpp"
#include "core/error.hpp"

namespace hedra::backend {
namespace {

class ReferenceProgram : public Program {
public:
    ReferenceProgram(std::vector<NodePtr> outputs, std::vector<NodePtr> placeholders)
        : outputs_(std::move(outputs)), placeholders_(std::move(placeholders)) {}

    std::vector<HostArray> run(const std::vector<HostArray>& inputs) override {
        return interpret(outputs_, placeholders_, inputs);
    }

private:
    std::vector<NodePtr> outputs_;
    std::vector<NodePtr> placeholders_;
};

std::string describe(const Node& n) {
    std::string s = node_kind_name(n.kind);
    if (n.kind == NodeKind::Placeholder && !n.name.empty()) s += " '" + n.name + "'";
    return s + " " + std::string(dtype_name(n.dtype)) + " " + n.shape.to_string() + " created at " +
           location_string(n.loc);
}

} // namespace

std::unique_ptr<Program> ReferenceBackend::compile(const std::vector<NodePtr>& outputs,
                                                   const std::vector<NodePtr>& placeholders,
                                                   const CompileOptions&) {
    for (std::size_t i = 0; i < placeholders.size(); ++i)
        if (placeholders[i]->kind != NodeKind::Placeholder)
            throw Error("cannot compile: input " + std::to_string(i) + " is a " +
                        describe(*placeholders[i]) + ", not a placeholder");
    for (const NodePtr& p : required_placeholders(outputs))
        if (std::find(placeholders.begin(), placeholders.end(), p) == placeholders.end())
            throw Error("cannot compile: the outputs need " + describe(*p) +
                        ", which is not among the placeholders given to compile");
    return std::make_unique<ReferenceProgram>(outputs, placeholders);
}

} // namespace hedra::backend

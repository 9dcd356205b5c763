// Cutting a graph at its collectives (see collective_program.hpp).
#include "core/collective_program.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "core/collective.hpp"
#include "core/node_builders.hpp"

namespace hedra::detail {
namespace {

bool is_leaf(const Node& n) {
    return n.memo() || n.kind == NodeKind::Constant || n.kind == NodeKind::Data ||
           n.kind == NodeKind::Placeholder || n.kind == NodeKind::Iota;
}

bool is_all_reduce(const Node& n) {
    return n.kind == NodeKind::Collective && n.collective_op != CollectiveOp::Copy && !n.memo();
}

bool is_view(const Node& n) {
    return n.kind == NodeKind::View && !n.memo();
}

HostArray copy_of(const HostArray& a) {
    HostArray c(a.sizes(), a.dtype());
    if (a.bytes() > 0) std::memcpy(c.raw_mutable(), a.raw(), a.bytes());
    return c;
}

// A value that crosses from one piece (or the inputs) to another.
using Slot = int;

struct AllReduceStep {
    Slot from = 0, to = 0;
    bool copy = true; // the operand is read elsewhere too: reduce a copy
    CollectiveOp op = CollectiveOp::Sum;
    std::shared_ptr<CollectiveGroup> group;
};

struct Piece {
    std::optional<CompiledProgram> program; // empty when nothing is computed at this level
    std::vector<Slot> inputs, outputs;
    std::vector<AllReduceStep> all_reduces; // after the program
};

class CollectiveProgram final : public Program {
public:
    CollectiveProgram(std::vector<Piece> pieces, int slots, int inputs,
                      std::vector<std::pair<Slot, HostArray>> leaves, std::vector<Slot> outputs)
        : pieces_(std::move(pieces)), slots_(slots), inputs_(inputs), leaves_(std::move(leaves)),
          outputs_(std::move(outputs)) {}

    std::vector<HostArray> run(const std::vector<HostArray>& inputs) override {
        HEDRA_INTERNAL_CHECK(static_cast<int>(inputs.size()) == inputs_,
                             "collective program: wrong input count");
        std::vector<HostArray> values(static_cast<std::size_t>(slots_));
        std::copy(inputs.begin(), inputs.end(), values.begin());
        for (const auto& [slot, value] : leaves_)
            values[static_cast<std::size_t>(slot)] = value;
        for (const Piece& p : pieces_) {
            if (p.program) {
                std::vector<HostArray> args;
                for (Slot s : p.inputs)
                    args.push_back(values[static_cast<std::size_t>(s)]);
                std::vector<HostArray> out = (*p.program)(args);
                for (std::size_t i = 0; i < out.size(); ++i)
                    values[static_cast<std::size_t>(p.outputs[i])] = std::move(out[i]);
            }
            for (const AllReduceStep& r : p.all_reduces) {
                HostArray& from = values[static_cast<std::size_t>(r.from)];
                HostArray v = r.copy || !from.unshared() ? copy_of(from) : std::move(from);
                r.group->all_reduce_in_place(v, r.op);
                values[static_cast<std::size_t>(r.to)] = std::move(v);
            }
        }
        std::vector<HostArray> results;
        for (Slot s : outputs_)
            results.push_back(values[static_cast<std::size_t>(s)]);
        return results;
    }

    CollectivePlan plan() const {
        CollectivePlan p;
        for (const Piece& piece : pieces_) {
            p.pieces += piece.program ? 1 : 0;
            p.all_reduces += static_cast<int>(piece.all_reduces.size());
        }
        return p;
    }

private:
    std::vector<Piece> pieces_;
    int slots_ = 0, inputs_ = 0;
    std::vector<std::pair<Slot, HostArray>> leaves_; // host data an all-reduce reads
    std::vector<Slot> outputs_;
};

} // namespace

std::unique_ptr<Program> compile_with_collectives(const std::vector<NodePtr>& outputs_in,
                                                  const std::vector<NodePtr>& placeholders,
                                                  const ComputeOptions& options) {
    // copy_to_group is the identity in a program.
    std::vector<NodePtr> outputs = rebuild_graph(
        outputs_in, [](const NodePtr& n, const std::unordered_map<const Node*, NodePtr>& done) {
            if (n->kind == NodeKind::Collective && n->collective_op == CollectiveOp::Copy &&
                !n->memo())
                return done.at(n->inputs[0].get());
            return NodePtr();
        });
    std::vector<NodePtr> order = topological_order(outputs);

    // Levels: all-reduces on the longest path from the inputs; leaves have none (-1).
    std::unordered_map<const Node*, int> level;
    int levels = 1;
    for (const NodePtr& n : order) {
        if (is_leaf(*n)) {
            level[n.get()] = -1;
            continue;
        }
        int l = 0;
        for (const NodePtr& in : n->inputs)
            l = std::max(l, level.at(in.get()));
        if (is_all_reduce(*n)) ++l;
        level[n.get()] = l;
        levels = std::max(levels, l + 1);
    }
    auto computed_in = [&](const Node* n) { // the piece computing n, or -1
        return is_leaf(*n) || is_all_reduce(*n) ? -1 : level.at(n);
    };

    // Slots: the placeholders first, then every value that crosses a cut.
    std::unordered_map<const Node*, Slot> slot;
    for (std::size_t i = 0; i < placeholders.size(); ++i)
        slot[placeholders[i].get()] = static_cast<Slot>(i);
    int slots = static_cast<int>(placeholders.size());
    auto slot_of = [&](const Node* n) {
        auto [it, fresh] = slot.emplace(n, slots);
        if (fresh) ++slots;
        return it->second;
    };

    // Which pieces read each node, and how many readers it has at all.
    std::unordered_map<const Node*, int> readers;
    std::vector<std::vector<NodePtr>> piece_outputs(static_cast<std::size_t>(levels));
    std::unordered_map<const Node*, bool> exported;
    auto export_from_piece = [&](const NodePtr& n) {
        const int p = computed_in(n.get());
        if (p < 0 || exported[n.get()]) return;
        exported[n.get()] = true;
        piece_outputs[static_cast<std::size_t>(p)].push_back(n);
        slot_of(n.get());
    };
    // A view moves no data: a later piece reading one computes it again from its source, so
    // what crosses the cut is the source (a broadcast of a row is not materialized whole).
    auto source_of = [](NodePtr n) {
        while (is_view(*n))
            n = n->inputs[0];
        return n;
    };
    for (const NodePtr& n : order) {
        if (is_leaf(*n)) continue;
        for (const NodePtr& in : n->inputs) {
            ++readers[in.get()];
            // Read across a cut: by an all-reduce (its operand whole), or by a later piece.
            if (is_all_reduce(*n))
                export_from_piece(in);
            else if (computed_in(in.get()) != computed_in(n.get()))
                export_from_piece(source_of(in));
        }
    }
    for (const NodePtr& n : outputs) {
        ++readers[n.get()];
        if (n->kind == NodeKind::Placeholder || is_all_reduce(*n) || exported[n.get()]) continue;
        if (is_leaf(*n)) { // a constant or host array as an output: the first piece gives it
            exported[n.get()] = true;
            piece_outputs[0].push_back(n);
            slot_of(n.get());
        } else {
            export_from_piece(n);
        }
    }

    ComputeOptions piece_options = options;
    piece_options.donate.clear(); // a later piece may still read an input
    piece_options.output_hooks = false;
    std::vector<std::pair<Slot, HostArray>> leaves;
    std::vector<Piece> pieces(static_cast<std::size_t>(levels));
    for (int p = 0; p < levels; ++p) {
        Piece& piece = pieces[static_cast<std::size_t>(p)];
        const std::vector<NodePtr>& outs = piece_outputs[static_cast<std::size_t>(p)];
        if (!outs.empty()) {
            // The piece's graph: values from other pieces and the inputs become placeholders.
            std::vector<Array> cut_inputs;
            std::unordered_map<const Node*, NodePtr> image;
            auto outside = [&](const Node& n) {
                return n.kind == NodeKind::Placeholder || is_all_reduce(n) ||
                       (!is_leaf(n) && !is_view(n) && computed_in(&n) != p);
            };
            // Rebuilt from the cuts up (inputs before users), walking this piece's nodes only.
            std::vector<std::pair<NodePtr, bool>> stack;
            for (const NodePtr& o : outs)
                stack.emplace_back(o, false);
            while (!stack.empty()) {
                auto [n, inputs_done] = stack.back();
                stack.pop_back();
                if (image.count(n.get())) continue;
                if (outside(*n)) {
                    NodePtr in = n->kind == NodeKind::Placeholder
                                     ? n
                                     : placeholder(n->shape, n->dtype, "cut").node();
                    image.emplace(n.get(), in);
                    cut_inputs.push_back(Array(in));
                    piece.inputs.push_back(slot_of(n.get()));
                    continue;
                }
                if (is_leaf(*n)) {
                    image.emplace(n.get(), n);
                    continue;
                }
                if (!inputs_done) {
                    stack.emplace_back(n, true);
                    for (const NodePtr& in : n->inputs)
                        if (!image.count(in.get())) stack.emplace_back(in, false);
                    continue;
                }
                std::vector<NodePtr> ins;
                bool changed = false;
                for (const NodePtr& in : n->inputs) {
                    ins.push_back(image.at(in.get()));
                    changed = changed || ins.back() != in;
                }
                image.emplace(n.get(), changed ? intern(copy_node_with(*n, std::move(ins))) : n);
            }
            std::vector<NodePtr> rebuilt;
            for (const NodePtr& o : outs)
                rebuilt.push_back(image.at(o.get()));
            std::vector<Array> out_arrays;
            for (const NodePtr& o : rebuilt)
                out_arrays.push_back(Array(o));
            for (const NodePtr& o : outs)
                piece.outputs.push_back(slot.at(o.get()));
            piece.program.emplace(compile(out_arrays, cut_inputs, piece_options));
        }
        // The all-reduces of the next level read this piece's results (or the inputs).
        for (const NodePtr& n : order) {
            if (!is_all_reduce(*n) || level.at(n.get()) != p + 1) continue;
            const Node* operand = n->inputs[0].get();
            AllReduceStep r;
            if (is_leaf(*operand) && operand->kind != NodeKind::Placeholder) {
                if (!slot.count(operand)) {
                    HEDRA_INTERNAL_CHECK(operand->memo() || operand->kind == NodeKind::Data,
                                         "collective program: an all-reduce of a " +
                                             std::string(node_kind_name(operand->kind)));
                    leaves.emplace_back(slot_of(operand),
                                        operand->memo() ? *operand->memo() : operand->data);
                }
            }
            r.from = slot.count(operand) ? slot.at(operand) : slot_of(operand);
            r.to = slot_of(n.get());
            r.copy =
                readers[operand] > 1 || operand->kind == NodeKind::Placeholder || is_leaf(*operand);
            r.op = n->collective_op;
            r.group = n->group;
            piece.all_reduces.push_back(std::move(r));
        }
    }
    std::vector<Slot> result_slots;
    for (const NodePtr& n : outputs)
        result_slots.push_back(slot.at(n.get()));
    return std::make_unique<CollectiveProgram>(std::move(pieces), slots,
                                               static_cast<int>(placeholders.size()),
                                               std::move(leaves), std::move(result_slots));
}

CollectivePlan collective_plan(const Program& program) {
    const auto* p = dynamic_cast<const CollectiveProgram*>(&program);
    return p ? p->plan() : CollectivePlan{};
}

} // namespace hedra::detail

// The reference interpreter (see interpreter.hpp). Every node's value is a dense HostArray over
// its shape in row-major *counter* order: the element with counters k has index start+step*k.
// Each primitive is a loop over result elements that reads its inputs through that convention;
// there is no fusion, no scheduling and no cleverness, so the results can serve as the oracle.
#include "backends/reference/interpreter.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "backends/reference/elements.hpp"
#include "core/error.hpp"

namespace hedra::backend {
namespace {

using namespace element;

std::string describe_placeholder(const Node& n) {
    std::string s = "placeholder";
    if (!n.name.empty()) s += " '" + n.name + "'";
    return s + " " + std::string(dtype_name(n.dtype)) + " " + n.shape.to_string() + " created at " +
           location_string(n.loc);
}

// The identity of a built-in reduction in the accumulator dtype.
ScalarValue reduce_identity(ReduceOp op, DType acc) {
    bool fl = is_float(acc);
    double inf = std::numeric_limits<double>::infinity();
    auto lowest = acc == DType::I32 ? std::numeric_limits<std::int32_t>::min()
                                    : std::numeric_limits<std::int64_t>::min();
    auto highest = acc == DType::I32 ? std::numeric_limits<std::int32_t>::max()
                                     : std::numeric_limits<std::int64_t>::max();
    switch (op) {
    case ReduceOp::Sum:
        return fl ? float_value(0.0, acc) : int_value(0, acc);
    case ReduceOp::Prod:
        return fl ? float_value(1.0, acc) : int_value(1, acc);
    case ReduceOp::Max:
        if (acc == DType::Bool) return int_value(0, acc);
        return fl ? float_value(-inf, acc) : int_value(lowest, acc);
    case ReduceOp::Min:
        if (acc == DType::Bool) return int_value(1, acc);
        return fl ? float_value(inf, acc) : int_value(highest, acc);
    case ReduceOp::And:
        return int_value(1, acc);
    case ReduceOp::Or:
        return int_value(0, acc);
    case ReduceOp::Custom:
        break;
    }
    internal_error("reduce_identity: custom reductions carry their own identity");
}

std::int64_t wrapping_add(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
std::int64_t wrapping_mul(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}

class Interpreter {
public:
    Interpreter(const std::vector<NodePtr>& placeholders, const std::vector<HostArray>& inputs)
        : placeholders_(placeholders), inputs_(inputs) {
        if (inputs.size() != placeholders.size())
            throw Error("cannot run the program: it takes " + std::to_string(placeholders.size()) +
                        " inputs but got " + std::to_string(inputs.size()));
    }

    std::vector<HostArray> run(const std::vector<NodePtr>& outputs) {
        collect_leaves(outputs);
        for (const NodePtr& n : topological_order(outputs)) {
            if (!needed_.count(n.get())) continue;
            auto leaf = leaves_.find(n.get());
            values_[n.get()] = leaf != leaves_.end() ? *leaf->second : evaluate_node(*n);
            check_value(*n, values_[n.get()]);
        }
        std::vector<HostArray> results;
        for (const NodePtr& n : outputs) {
            const HostArray& v = value(n);
            bool aliases_user_memory =
                !leaves_.count(n.get()) &&
                (n->kind == NodeKind::Data || n->kind == NodeKind::Placeholder);
            results.push_back(aliases_user_memory ? deep_copy(v) : v);
        }
        return results;
    }

private:
    // Marks the nodes to evaluate; memoized nodes are leaves (their inputs are not visited).
    void collect_leaves(const std::vector<NodePtr>& outputs) {
        std::vector<const Node*> stack;
        for (const NodePtr& n : outputs)
            stack.push_back(n.get());
        while (!stack.empty()) {
            const Node* n = stack.back();
            stack.pop_back();
            if (!needed_.insert(n).second) continue;
            if (auto memo = n->memo()) {
                leaves_[n] = std::move(memo);
                continue;
            }
            for (const NodePtr& in : n->inputs)
                stack.push_back(in.get());
        }
    }

    const HostArray& value(const NodePtr& n) const {
        auto it = values_.find(n.get());
        HEDRA_INTERNAL_CHECK(it != values_.end(), "interpreter: input evaluated after its user");
        return it->second;
    }

    static void check_value(const Node& n, const HostArray& v) {
        HEDRA_INTERNAL_CHECK(v.sizes() == n.shape.sizes() && v.dtype() == n.dtype,
                             std::string("interpreter: ") + node_kind_name(n.kind) +
                                 " value does not match the node's sizes or dtype");
    }

    // The zero-filled value of `n` (by default over its shape); an allocation error names the
    // node's operation, shape and creation site.
    static HostArray result(const Node& n) { return result(n, n.shape.sizes(), n.dtype); }
    static HostArray result(const Node& n, std::vector<std::int64_t> sizes, DType dtype) {
        try {
            return HostArray(std::move(sizes), dtype);
        } catch (const Error& e) {
            throw Error(std::string(e.what()) + "; the value of a " + node_kind_name(n.kind) +
                        " of shape " + n.shape.to_string() + " created at " +
                        location_string(n.loc) + " (reference backend)");
        }
    }

    HostArray evaluate_node(const Node& n) {
        switch (n.kind) {
        case NodeKind::Constant:
            return constant(n);
        case NodeKind::Data:
            return data(n);
        case NodeKind::Placeholder:
            return placeholder(n);
        case NodeKind::Iota:
            return iota(n);
        case NodeKind::Map:
            return map(n);
        case NodeKind::View:
            return view(n);
        case NodeKind::Reduce:
            return reduce(n);
        case NodeKind::Fuse:
            return fuse(n);
        case NodeKind::Gather:
            return gather(n);
        case NodeKind::Scatter:
            return scatter(n);
        case NodeKind::Scan:
            scan(n);
            return result(n);
        case NodeKind::ScanOutput:
            return scans_.at(n.inputs.at(0).get()).at(static_cast<std::size_t>(n.component));
        case NodeKind::Collective: // compile() cuts the graph at them
            break;
        }
        internal_error("interpreter: unknown node kind");
    }

    HostArray constant(const Node& n) {
        HostArray out = result(n);
        HEDRA_INTERNAL_CHECK(out.size() == 1, "interpreter: a constant has one element");
        store(out, 0, hedra::evaluate(n.expr, {}));
        return out;
    }

    HostArray data(const Node& n) {
        HEDRA_INTERNAL_CHECK(n.data.sizes() == n.shape.sizes(), "interpreter: data sizes");
        if (n.data.dtype() == n.dtype) return n.data;
        HostArray out = result(n);
        for (std::int64_t i = 0; i < out.size(); ++i)
            store(out, i, load(n.data, i));
        return out;
    }

    HostArray placeholder(const Node& n) {
        for (std::size_t p = 0; p < placeholders_.size(); ++p) {
            if (placeholders_[p].get() != &n) continue;
            const HostArray& in = inputs_[p];
            if (in.sizes() != n.shape.sizes() || in.dtype() != n.dtype)
                throw Error("cannot run the program: input " + std::to_string(p) + " for " +
                            describe_placeholder(n) + " has dtype " +
                            std::string(dtype_name(in.dtype())) + " and shape " +
                            Shape::of(in.sizes()).to_string());
            return in;
        }
        throw Error("cannot run the program: " + describe_placeholder(n) +
                    " is not bound to an input; list it among the placeholders given to compile");
    }

    HostArray iota(const Node& n) {
        HostArray out = result(n);
        HEDRA_INTERNAL_CHECK(n.axis >= 0 && n.axis < n.shape.rank(), "interpreter: iota axis");
        const Range& r = n.shape[n.axis];
        for_each_counter(n.shape.sizes(), [&](const Counters& k, std::int64_t i) {
            store(out, i, int_value(r.index(k[n.axis]), DType::I64));
        });
        return out;
    }

    HostArray map(const Node& n) {
        HostArray out = result(n);
        std::vector<const HostArray*> ins;
        for (const NodePtr& in : n.inputs) {
            HEDRA_INTERNAL_CHECK(in->shape.sizes() == n.shape.sizes(),
                                 "interpreter: a map input differs from the map's sizes");
            ins.push_back(&value(in));
        }
        std::vector<ScalarValue> args(ins.size());
        ScalarProgram f(n.expr);
        for (std::int64_t i = 0; i < out.size(); ++i) {
            for (std::size_t k = 0; k < ins.size(); ++k)
                args[k] = load(*ins[k], i);
            store(out, i, f(args));
        }
        return out;
    }

    HostArray view(const Node& n) {
        HostArray out = result(n);
        const HostArray& in = value(n.inputs.at(0));
        const AffineMap& m = n.access;
        HEDRA_INTERNAL_CHECK(m.in_rank() == n.shape.rank() && m.out_rank() == in.rank(),
                             "interpreter: view access ranks " + m.to_string());
        for_each_counter(n.shape.sizes(), [&](const Counters& k, std::int64_t i) {
            store(out, i, load(in, flat_index(in.sizes(), m.apply(k))));
        });
        return out;
    }

    // The flat index of the result element that input counters `c` reduce into (`o`: scratch).
    static std::int64_t result_index(const std::vector<std::int64_t>& out_sizes, bool keepdims,
                                     const std::vector<bool>& reduced, const Counters& c,
                                     Counters& o) {
        o.clear();
        for (std::size_t d = 0; d < reduced.size(); ++d)
            if (!reduced[d])
                o.push_back(c[d]);
            else if (keepdims)
                o.push_back(0);
        return flat_index(out_sizes, o);
    }

    // A component of a reduction of several arrays: every component's accumulator is kept
    // (each step reads all of them), and this node's is returned.
    HostArray tuple_reduce(const Node& n) {
        const std::size_t k = n.tuple_exprs.size();
        std::vector<const HostArray*> ins;
        for (const NodePtr& in : n.inputs)
            ins.push_back(&value(in));
        HEDRA_INTERNAL_CHECK(ins.size() == k, "interpreter: tuple reduction inputs");
        std::vector<ScalarProgram> step;
        for (const ScalarExpr& e : n.tuple_exprs)
            step.emplace_back(e);
        auto out_sizes = n.shape.sizes();
        std::int64_t count = 1;
        for (std::int64_t s : out_sizes)
            count *= s;
        std::vector<ScalarValue> acc; // acc[o * k + j]
        for (std::int64_t o = 0; o < count; ++o)
            for (const ScalarExpr& id : n.tuple_identities)
                acc.push_back(hedra::evaluate(id, {}));
        std::vector<bool> reduced(ins[0]->rank(), false);
        for (int a : n.axes)
            reduced[a] = true;
        std::vector<ScalarValue> args(2 * k), next(k);
        Counters o;
        for_each_counter(ins[0]->sizes(), [&](const Counters& c, std::int64_t i) {
            std::size_t base =
                static_cast<std::size_t>(result_index(out_sizes, n.keepdims, reduced, c, o)) * k;
            for (std::size_t j = 0; j < k; ++j) {
                args[j] = acc[base + j];
                args[k + j] = load(*ins[j], i);
            }
            for (std::size_t j = 0; j < k; ++j)
                next[j] = step[j](args);
            for (std::size_t j = 0; j < k; ++j)
                acc[base + j] = next[j];
        });
        HostArray out = result(n, out_sizes, n.dtype);
        for (std::int64_t q = 0; q < count; ++q)
            store(out, q,
                  acc[static_cast<std::size_t>(q) * k + static_cast<std::size_t>(n.component)]);
        return out;
    }

    HostArray reduce(const Node& n) {
        if (!n.tuple_exprs.empty()) return tuple_reduce(n);
        const HostArray& in = value(n.inputs.at(0));
        DType in_type = in.dtype(), out_type = n.dtype;
        bool float_product =
            is_float(out_type) && (n.reduce_op == ReduceOp::Sum || n.reduce_op == ReduceOp::Prod);
        DType acc_type = float_product ? DType::F64 : out_type;
        ScalarValue identity = n.reduce_op == ReduceOp::Custom
                                   ? convert(hedra::evaluate(n.identity, {}), acc_type)
                                   : reduce_identity(n.reduce_op, acc_type);
        std::vector<ScalarValue> acc(static_cast<std::size_t>(n.shape.size()), identity);

        std::vector<bool> reduced(in.rank(), false);
        for (int a : n.axes) {
            HEDRA_INTERNAL_CHECK(a >= 0 && a < in.rank(), "interpreter: reduce axis");
            reduced[a] = true;
        }
        ScalarExpr extremum;
        if ((n.reduce_op == ReduceOp::Max || n.reduce_op == ReduceOp::Min) &&
            acc_type != DType::Bool)
            extremum = scalar_binary(n.reduce_op == ReduceOp::Max ? ScalarOp::Max : ScalarOp::Min,
                                     scalar_input(0, acc_type), scalar_input(1, acc_type));
        std::optional<ScalarProgram> step;
        if (n.reduce_op == ReduceOp::Custom)
            step.emplace(n.expr);
        else if (extremum)
            step.emplace(extremum);
        auto out_sizes = n.shape.sizes();
        Counters o;
        for_each_counter(in.sizes(), [&](const Counters& k, std::int64_t i) {
            ScalarValue& a = acc[result_index(out_sizes, n.keepdims, reduced, k, o)];
            a = combine(n, step ? &*step : nullptr, a, load(in, i), in_type, acc_type);
        });

        HostArray out = result(n, out_sizes, out_type);
        for (std::size_t i = 0; i < acc.size(); ++i)
            store(out, i, acc[i]);
        return out;
    }

    // One step of a reduction; `step` is the custom combiner, or the max/min expression for
    // non-bool max/min.
    static ScalarValue combine(const Node& n, ScalarProgram* step, const ScalarValue& acc,
                               const ScalarValue& x_in, DType in_type, DType acc_type) {
        if (n.reduce_op == ReduceOp::Custom)
            return convert((*step)({convert(acc, in_type), x_in}), acc_type);
        ScalarValue x = convert(x_in, acc_type);
        bool fl = is_float(acc_type);
        switch (n.reduce_op) {
        case ReduceOp::Sum:
            return fl ? float_value(acc.f + x.f, acc_type)
                      : convert(int_value(wrapping_add(acc.i, x.i), DType::I64), acc_type);
        case ReduceOp::Prod:
            return fl ? float_value(acc.f * x.f, acc_type)
                      : convert(int_value(wrapping_mul(acc.i, x.i), DType::I64), acc_type);
        case ReduceOp::Max:
            if (acc_type == DType::Bool) return int_value(acc.i || x.i, acc_type);
            return (*step)({acc, x});
        case ReduceOp::Min:
            if (acc_type == DType::Bool) return int_value(acc.i && x.i, acc_type);
            return (*step)({acc, x});
        case ReduceOp::And:
            return int_value(acc.i && x.i, DType::Bool);
        case ReduceOp::Or:
            return int_value(acc.i || x.i, DType::Bool);
        case ReduceOp::Custom:
            break;
        }
        internal_error("interpreter: unknown reduce op");
    }

    HostArray fuse(const Node& n) {
        HostArray out = result(n);
        int rank = n.shape.rank();
        Counters index(rank), c(rank);
        for_each_counter(n.shape.sizes(), [&](const Counters& k, std::int64_t i) {
            for (int d = 0; d < rank; ++d)
                index[d] = n.shape[d].index(k[d]);
            const Node* piece = nullptr;
            for (auto it = n.inputs.rbegin(); it != n.inputs.rend(); ++it) {
                if (!(*it)->shape.contains(index)) continue;
                HEDRA_INTERNAL_CHECK(n.overwrite || piece == nullptr,
                                     "interpreter: fuse pieces overlap");
                if (!piece) piece = it->get();
                if (n.overwrite) break;
            }
            HEDRA_INTERNAL_CHECK(piece != nullptr, "interpreter: fuse index in no piece");
            for (int d = 0; d < rank; ++d)
                c[d] = piece->shape[d].counter(index[d]);
            const HostArray& v = values_.at(piece);
            store(out, i, load(v, flat_index(v.sizes(), c)));
        });
        return out;
    }

    // The flat index of (p, clamp(indices(q)), r) in an array of `sizes` for the counters
    // k = (p, q, r) of take's result (q: the indices' axes from `axis`); `c` is scratch.
    static std::int64_t taken_index(const HostArray& idx, int axis,
                                    const std::vector<std::int64_t>& sizes, const Counters& k,
                                    Counters& c) {
        const int q = idx.rank();
        Counters at(k.begin() + axis, k.begin() + axis + q);
        const std::int64_t v = load(idx, flat_index(idx.sizes(), at)).i;
        c.resize(sizes.size());
        for (int d = 0; d < static_cast<int>(sizes.size()); ++d)
            c[d] = d < axis ? k[d]
                   : d > axis
                       ? k[d + q - 1]
                       : std::clamp<std::int64_t>(v, 0, sizes[static_cast<std::size_t>(d)] - 1);
        return flat_index(sizes, c);
    }

    HostArray gather(const Node& n) {
        HostArray out = result(n);
        const HostArray& src = value(n.inputs.at(0));
        const HostArray& idx = value(n.inputs.at(1));
        Counters c;
        for_each_counter(out.sizes(), [&](const Counters& k, std::int64_t i) {
            store(out, i, load(src, taken_index(idx, n.axis, src.sizes(), k, c)));
        });
        return out;
    }

    // Zeros, then values(p, q, r) added at (p, clamp(indices(q)), r); float sums in f64 as
    // the reference's reductions, integer sums wrapping in the result's dtype.
    // The steps one after the other, each the body interpreted on its own: the carries, the
    // step's rows of the scanned arrays and the closures bound to the body's placeholders.
    void scan(const Node& n) {
        const ScanBody& b = *n.body;
        // The length and every size are the values' own (symbolic extents at their values).
        const std::int64_t steps =
            b.xs > 0 ? value(n.inputs[static_cast<std::size_t>(b.carries)]).sizes().at(0)
                     : b.steps.size;
        auto row_bytes = [](const HostArray& a) {
            return a.bytes() / static_cast<std::size_t>(a.sizes().at(0));
        };
        auto row = [&](const HostArray& a, std::int64_t t) {
            std::vector<std::int64_t> sizes(a.sizes().begin() + 1, a.sizes().end());
            HostArray r(std::move(sizes), a.dtype());
            std::memcpy(r.raw_mutable(),
                        static_cast<const char*>(a.raw()) +
                            static_cast<std::size_t>(t) * row_bytes(a),
                        row_bytes(a));
            return r;
        };
        // Row t of a stacked component, allocated from the first row's sizes.
        std::vector<HostArray> components(static_cast<std::size_t>(b.carries + b.ys()));
        auto put_row = [&](std::size_t c, std::int64_t t, const HostArray& r) {
            HostArray& a = components[c];
            if (a.sizes().empty()) {
                std::vector<std::int64_t> sizes{steps};
                sizes.insert(sizes.end(), r.sizes().begin(), r.sizes().end());
                a = result(n, std::move(sizes), r.dtype());
            }
            std::memcpy(static_cast<char*>(a.raw_mutable()) +
                            static_cast<std::size_t>(t) * row_bytes(a),
                        r.raw(), row_bytes(a));
        };
        std::vector<HostArray> carries;
        for (int k = 0; k < b.carries; ++k)
            carries.push_back(value(n.inputs[static_cast<std::size_t>(k)]));
        for (std::int64_t i = 0; i < steps; ++i) {
            const std::int64_t t = b.reverse ? steps - 1 - i : i;
            std::vector<HostArray> in = carries;
            for (int x = 0; x < b.xs; ++x)
                in.push_back(row(value(n.inputs[static_cast<std::size_t>(b.carries + x)]), t));
            for (int c = 0; c < b.closures(); ++c)
                in.push_back(value(n.inputs[static_cast<std::size_t>(b.carries + b.xs + c)]));
            for (int k = 0; k < b.carries; ++k)
                put_row(static_cast<std::size_t>(k), t, carries[static_cast<std::size_t>(k)]);
            std::vector<HostArray> out = interpret(b.outputs, b.params, in);
            for (int y = 0; y < b.ys(); ++y)
                put_row(static_cast<std::size_t>(b.carries + y), t,
                        out[static_cast<std::size_t>(b.carries + y)]);
            out.resize(static_cast<std::size_t>(b.carries));
            carries = std::move(out);
        }
        for (HostArray& c : carries)
            components.push_back(std::move(c));
        scans_[&n] = std::move(components);
    }

    HostArray scatter(const Node& n) {
        const HostArray& values = value(n.inputs.at(0));
        const HostArray& idx = value(n.inputs.at(1));
        const std::vector<std::int64_t> sizes = n.shape.sizes();
        const bool fl = is_float(n.dtype);
        std::vector<double> fsum(fl ? static_cast<std::size_t>(n.shape.size()) : 0, 0.0);
        std::vector<std::int64_t> isum(fl ? 0 : static_cast<std::size_t>(n.shape.size()), 0);
        Counters c;
        for_each_counter(values.sizes(), [&](const Counters& k, std::int64_t i) {
            const auto o = static_cast<std::size_t>(taken_index(idx, n.axis, sizes, k, c));
            ScalarValue x = load(values, i);
            if (fl)
                fsum[o] += x.f;
            else
                isum[o] = wrapping_add(isum[o], x.i);
        });
        HostArray out = result(n);
        for (std::int64_t o = 0; o < out.size(); ++o)
            store(out, o,
                  fl ? float_value(fsum[static_cast<std::size_t>(o)], n.dtype)
                     : convert(int_value(isum[static_cast<std::size_t>(o)], DType::I64), n.dtype));
        return out;
    }

    const std::vector<NodePtr>& placeholders_;
    const std::vector<HostArray>& inputs_;
    std::unordered_set<const Node*> needed_;
    std::unordered_map<const Node*, std::shared_ptr<const HostArray>> leaves_;
    std::unordered_map<const Node*, HostArray> values_;
    std::unordered_map<const Node*, std::vector<HostArray>> scans_; // per Scan: its components
};

} // namespace

std::vector<HostArray> interpret(const std::vector<NodePtr>& outputs,
                                 const std::vector<NodePtr>& placeholders,
                                 const std::vector<HostArray>& inputs) {
    return Interpreter(placeholders, inputs).run(outputs);
}

std::vector<NodePtr> required_placeholders(const std::vector<NodePtr>& outputs) {
    std::unordered_set<const Node*> reachable;
    std::vector<const Node*> stack;
    for (const NodePtr& n : outputs)
        stack.push_back(n.get());
    while (!stack.empty()) {
        const Node* n = stack.back();
        stack.pop_back();
        if (!reachable.insert(n).second || n->memo()) continue;
        for (const NodePtr& in : n->inputs)
            stack.push_back(in.get());
    }
    std::vector<NodePtr> result;
    for (const NodePtr& n : topological_order(outputs))
        if (n->kind == NodeKind::Placeholder && reachable.count(n.get()) && !n->memo())
            result.push_back(n);
    return result;
}

} // namespace hedra::backend

// The lazy graph's node table: hash-consing (intern), fresh identities, memoized results,
// topological order and a readable listing. Interning makes structurally equal nodes the same
// object, so graph identity is pointer identity. Hashes combine the inputs' hashes (never
// pointer values), so they are identical across runs.
#include "core/node.hpp"

#include <algorithm>
#include <iterator>
#include <unordered_map>
#include <unordered_set>

#include "core/collective.hpp"

namespace hedra {
namespace {

std::uint64_t mix(std::uint64_t x) { // splitmix64 finalizer
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

void combine(std::uint64_t& h, std::uint64_t v) {
    h = mix(h ^ mix(v));
}

std::size_t structural_hash(const Node& n) {
    std::uint64_t h = 0x68656472615f6e64ULL;
    combine(h, static_cast<std::uint64_t>(n.kind));
    combine(h, static_cast<std::uint64_t>(n.dtype));
    combine(h, static_cast<std::uint64_t>(n.shape.rank()));
    for (const Range& r : n.shape.ranges()) {
        combine(h, static_cast<std::uint64_t>(r.start));
        combine(h, static_cast<std::uint64_t>(r.step));
        combine(h, static_cast<std::uint64_t>(r.size));
        combine(h, static_cast<std::uint64_t>(r.param + 1));
    }
    combine(h, n.inputs.size());
    for (const NodePtr& in : n.inputs)
        combine(h, in->hash);
    combine(h, n.expr ? n.expr->hash : 0);
    combine(h, n.identity ? n.identity->hash : 0);
    for (const ScalarExpr& e : n.tuple_exprs)
        combine(h, e->hash);
    for (const ScalarExpr& e : n.tuple_identities)
        combine(h, e->hash);
    combine(h, static_cast<std::uint64_t>(n.component));
    combine(h, static_cast<std::uint64_t>(n.access.in_rank()));
    combine(h, static_cast<std::uint64_t>(n.access.out_rank()));
    for (auto c : n.access.matrix())
        combine(h, static_cast<std::uint64_t>(c));
    for (auto c : n.access.offsets())
        combine(h, static_cast<std::uint64_t>(c));
    combine(h, static_cast<std::uint64_t>(n.axis));
    for (int a : n.axes)
        combine(h, static_cast<std::uint64_t>(a));
    combine(h, n.keepdims);
    combine(h, static_cast<std::uint64_t>(n.reduce_op));
    combine(h, n.overwrite);
    combine(h, n.id);
    combine(h, n.body ? n.body->hash : 0);
    combine(h, static_cast<std::uint64_t>(n.collective_op));
    if (n.group) { // equal nodes also have the same group object
        combine(h, static_cast<std::uint64_t>(n.group->size()));
        combine(h, static_cast<std::uint64_t>(n.group->rank()));
    }
    return static_cast<std::size_t>(h);
}

bool same_expr(const ScalarExpr& a, const ScalarExpr& b) {
    if (a.get() == nullptr || b.get() == nullptr) return a.get() == b.get();
    return a == b || structurally_equal(a, b);
}

bool same_exprs(const std::vector<ScalarExpr>& a, const std::vector<ScalarExpr>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!same_expr(a[i], b[i])) return false;
    return true;
}

bool same_body(const std::shared_ptr<const ScanBody>& a, const std::shared_ptr<const ScanBody>& b) {
    if (a == b) return true;
    if (!a || !b) return false;
    return a->hash == b->hash && a->params == b->params && a->outputs == b->outputs &&
           a->carries == b->carries && a->xs == b->xs && a->steps == b->steps &&
           a->reverse == b->reverse;
}

bool structurally_equal_nodes(const Node& a, const Node& b) {
    return a.hash == b.hash && a.kind == b.kind && a.dtype == b.dtype && a.shape == b.shape &&
           a.inputs == b.inputs && a.access == b.access && a.axis == b.axis && a.axes == b.axes &&
           a.keepdims == b.keepdims && a.reduce_op == b.reduce_op && a.overwrite == b.overwrite &&
           a.id == b.id && same_expr(a.expr, b.expr) && same_expr(a.identity, b.identity) &&
           a.component == b.component && same_exprs(a.tuple_exprs, b.tuple_exprs) &&
           same_exprs(a.tuple_identities, b.tuple_identities) && same_body(a.body, b.body) &&
           a.collective_op == b.collective_op && a.group == b.group;
}

// The global table of live nodes by hash. Expired entries are dropped when their bucket is
// visited and, amortized, by a full sweep whenever the table has doubled since the last one.
struct NodeTable {
    std::mutex mutex;
    std::unordered_multimap<std::size_t, std::weak_ptr<const Node>> nodes;
    std::size_t sweep_at = 1024;

    void sweep() {
        for (auto it = nodes.begin(); it != nodes.end();)
            it = it->second.expired() ? nodes.erase(it) : std::next(it);
        sweep_at = std::max<std::size_t>(1024, 2 * nodes.size());
    }
};

NodeTable& node_table() {
    static NodeTable* table = new NodeTable; // never destroyed: nodes may outlive statics
    return *table;
}

} // namespace

const char* node_kind_name(NodeKind k) {
    switch (k) {
    case NodeKind::Constant:
        return "constant";
    case NodeKind::Data:
        return "data";
    case NodeKind::Placeholder:
        return "placeholder";
    case NodeKind::Iota:
        return "iota";
    case NodeKind::Map:
        return "map";
    case NodeKind::View:
        return "view";
    case NodeKind::Reduce:
        return "reduce";
    case NodeKind::Fuse:
        return "fuse";
    case NodeKind::Gather:
        return "gather";
    case NodeKind::Scatter:
        return "scatter";
    case NodeKind::Scan:
        return "scan";
    case NodeKind::ScanOutput:
        return "scan_output";
    case NodeKind::Collective:
        return "collective";
    }
    return "?";
}

const char* reduce_op_name(ReduceOp op) {
    switch (op) {
    case ReduceOp::Sum:
        return "sum";
    case ReduceOp::Prod:
        return "prod";
    case ReduceOp::Max:
        return "max";
    case ReduceOp::Min:
        return "min";
    case ReduceOp::And:
        return "and";
    case ReduceOp::Or:
        return "or";
    case ReduceOp::Custom:
        return "custom";
    }
    return "?";
}

std::shared_ptr<const HostArray> Node::memo() const {
    std::lock_guard<std::mutex> lock(memo_mutex_);
    return memo_;
}

void Node::set_memo(HostArray value) const {
    auto v = std::make_shared<const HostArray>(std::move(value));
    std::lock_guard<std::mutex> lock(memo_mutex_);
    memo_ = std::move(v);
}

Node::~Node() {
    // Inputs whose last owner is this node give up their own inputs first, so that they die
    // without recursing. intern() only revives nodes under the table's mutex, so checking the
    // use count under that mutex is race-free.
    std::vector<NodePtr> pending = std::move(inputs);
    while (!pending.empty()) {
        NodePtr n = std::move(pending.back());
        pending.pop_back();
        if (n.use_count() != 1 || n->inputs.empty()) continue;
        std::lock_guard<std::mutex> lock(node_table().mutex);
        if (n.use_count() != 1) continue;
        auto& orphan = const_cast<Node&>(*n);
        for (NodePtr& in : orphan.inputs)
            pending.push_back(std::move(in));
        orphan.inputs.clear();
    }
}

NodePtr intern(std::shared_ptr<Node> node) {
    HEDRA_INTERNAL_CHECK(node != nullptr, "intern of a null node");
    for (const NodePtr& in : node->inputs)
        HEDRA_INTERNAL_CHECK(in != nullptr, "node with a null input");
    node->hash = structural_hash(*node);
    NodeTable& table = node_table();
    // Collisions revived here are released after the lock: their destructor may take it.
    std::vector<NodePtr> collisions;
    std::lock_guard<std::mutex> lock(table.mutex);
    auto [first, last] = table.nodes.equal_range(node->hash);
    for (auto it = first; it != last;) {
        NodePtr existing = it->second.lock();
        if (!existing) {
            it = table.nodes.erase(it);
            continue;
        }
        if (structurally_equal_nodes(*existing, *node)) return existing;
        collisions.push_back(std::move(existing));
        ++it;
    }
    table.nodes.emplace(node->hash, node);
    if (table.nodes.size() > table.sweep_at) table.sweep();
    return node;
}

std::uint64_t fresh_node_id() {
    static std::atomic<std::uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

std::vector<NodePtr> topological_order(const std::vector<NodePtr>& outputs) {
    std::vector<NodePtr> order;
    std::unordered_set<const Node*> done;
    // Iterative post-order DFS: a frame is a node and the index of its next input.
    std::vector<std::pair<const NodePtr*, std::size_t>> stack;
    for (const NodePtr& out : outputs) {
        if (!out || done.count(out.get())) continue;
        stack.emplace_back(&out, 0);
        std::unordered_set<const Node*> on_stack{out.get()};
        while (!stack.empty()) {
            auto& [node, next] = stack.back();
            if (next < (*node)->inputs.size()) {
                const NodePtr& in = (*node)->inputs[next++];
                if (!done.count(in.get()) && !on_stack.count(in.get())) {
                    on_stack.insert(in.get());
                    stack.emplace_back(&in, 0);
                }
                continue;
            }
            done.insert(node->get());
            order.push_back(*node);
            stack.pop_back();
        }
    }
    return order;
}

namespace {

std::string describe_payload(const Node& n) {
    switch (n.kind) {
    case NodeKind::Constant:
    case NodeKind::Map:
        return to_string(n.expr);
    case NodeKind::Data:
        return "#" + std::to_string(n.id);
    case NodeKind::Placeholder:
        return "#" + std::to_string(n.id) + (n.name.empty() ? "" : " '" + n.name + "'");
    case NodeKind::Iota:
    case NodeKind::Gather:
    case NodeKind::Scatter:
        return "axis " + std::to_string(n.axis);
    case NodeKind::View:
        return n.access.to_string();
    case NodeKind::Reduce: {
        std::string s = reduce_op_name(n.reduce_op);
        if (n.reduce_op == ReduceOp::Custom)
            s += " " + to_string(n.expr) + " identity " + to_string(n.identity);
        if (!n.tuple_exprs.empty())
            s += " component " + std::to_string(n.component) + " of " +
                 std::to_string(n.tuple_exprs.size());
        s += " axes [";
        for (std::size_t i = 0; i < n.axes.size(); ++i)
            s += (i ? "," : "") + std::to_string(n.axes[i]);
        return s + "]" + (n.keepdims ? " keepdims" : "");
    }
    case NodeKind::Fuse:
        return n.overwrite ? "overwrite" : "disjoint";
    case NodeKind::Scan:
        return std::string(n.body->reverse ? "reverse " : "") + n.body->steps.to_string() +
               " steps, " + std::to_string(n.body->carries) + " carries, " +
               std::to_string(n.body->xs) + " xs, " + std::to_string(n.body->closures()) +
               " closures -> " + std::to_string(n.body->ys()) + " ys; body:\n  " + [&] {
                   std::string b = to_string(n.body->outputs);
                   std::string out;
                   for (char c : b.substr(0, b.size() - 1))
                       out += c == '\n' ? std::string("\n  ") : std::string(1, c);
                   return out;
               }();
    case NodeKind::ScanOutput:
        return "component " + std::to_string(n.component);
    case NodeKind::Collective:
        return std::string(collective_op_name(n.collective_op)) + " over " + n.group->describe();
    }
    return "";
}

} // namespace

std::string to_string(const std::vector<NodePtr>& outputs) {
    std::vector<NodePtr> order = topological_order(outputs);
    std::unordered_map<const Node*, std::size_t> number;
    std::string s;
    for (const NodePtr& n : order) {
        number[n.get()] = number.size();
        s += "%" + std::to_string(number[n.get()]) + " = " + node_kind_name(n->kind) + " " +
             describe_payload(*n);
        if (!n->inputs.empty()) {
            s += " (";
            for (std::size_t i = 0; i < n->inputs.size(); ++i)
                s += (i ? ", %" : "%") + std::to_string(number.at(n->inputs[i].get()));
            s += ")";
        }
        s += " : " + std::string(dtype_name(n->dtype)) + " " + n->shape.to_string();
        if (n->memo()) s += " (computed)";
        s += "\n";
    }
    s += "outputs:";
    for (const NodePtr& out : outputs)
        s += out ? " %" + std::to_string(number.at(out.get())) : " <null>";
    return s + "\n";
}

} // namespace hedra

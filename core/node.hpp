// The lazy graph: immutable, hash-consed nodes. Two structurally equal nodes built anywhere are
// the same object, so graph identity is pointer identity (CSE for free, cheap cache keys).
// Every node's own index space is its shape; accesses to inputs are stored in *counter space*
// (index = start + step * counter), where every primitive's access is an integer affine map.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/affine_map.hpp"
#include "core/host_array.hpp"
#include "core/scalar_expr.hpp"
#include "core/shape.hpp"
#include "core/source_location.hpp"

namespace hedra {

enum class NodeKind : std::uint8_t {
    Constant,    // rank 0; `expr` is a Const scalar
    Data,        // host data `data`, identity `id`
    Placeholder, // an input of a compiled program, identity `id`, optional `name`
    Iota,        // index_components: the index value along `axis` (i64)
    Map,         // `expr` over inputs (all of the node's shape); Input(k) is inputs[k]
    View,        // result counters -> input counters through `access`
    Reduce,      // `reduce_op` over `axes` of inputs[0] (and `expr`/`identity` for Custom)
    Fuse,        // union of inputs' shapes; with `overwrite`, the rightmost input wins
    Gather,      // take: inputs[0] read along `axis` at the values of inputs[1] (integers)
    Scatter,     // scatter_add: inputs[0] summed along `axis` into the rows inputs[1] names
    Scan,        // a scan's loop (core/scan.hpp): inputs are its initial carries, its scanned
                 // arrays (the scan axis first) and its closures; `body` is the step. Its
                 // values are the ScanOutput nodes that read it; it has none of its own.
    ScanOutput,  // component `component` of inputs[0], a Scan (ScanBody::Component)
    Collective,  // `collective_op` of inputs[0] over the ranks of `group` (core/collective.hpp)
};
const char* node_kind_name(NodeKind k);

enum class ReduceOp : std::uint8_t { Sum, Prod, Max, Min, And, Or, Custom };
const char* reduce_op_name(ReduceOp op);

enum class CollectiveOp : std::uint8_t {
    Sum,  // all-reduce sum; gradient: copy_to_group
    Max,  // all-reduce max; no gradient (wrap it in ad::stop_gradient, as a softmax's shift)
    Copy, // the identity; gradient: all-reduce sum
};
const char* collective_op_name(CollectiveOp op);
class CollectiveGroup; // core/collective.hpp

struct Node;
using NodePtr = std::shared_ptr<const Node>;

// The step of a scan (core/scan.hpp): a closed graph, traced once on placeholders of its own,
// that maps the carries entering a step and that step's slices of the scanned arrays to the
// carries leaving it and the step's outputs. Every array the step reads from outside is a
// closure: a parameter here, an input of the Scan node there.
struct ScanBody {
    std::vector<NodePtr> params;  // placeholders: the carries, the x slices, the closures
    std::vector<NodePtr> outputs; // the new carries, then the per-step outputs (ys)
    int carries = 0;
    int xs = 0;
    Range steps;          // the scan axis of every stacked array: T steps, static or symbolic
    bool reverse = false; // the steps run from T - 1 down to 0
    std::size_t hash = 0; // of the structure above (set by make_scan_body)

    int closures() const { return static_cast<int>(params.size()) - carries - xs; }
    int ys() const { return static_cast<int>(outputs.size()) - carries; }
    // The components a Scan's ScanOutput nodes select, in order: per carry the stacked carries
    // entering each step (T, carry...), per output its stacked values (T, y...), per carry
    // its value after the last step.
    enum class Component { States, Ys, Final };
    Component component_kind(int c) const {
        return c < carries          ? Component::States
               : c < carries + ys() ? Component::Ys
                                    : Component::Final;
    }
    int components() const { return 2 * carries + ys(); }
};

struct Node {
    NodeKind kind;
    DType dtype;
    Shape shape;
    std::vector<NodePtr> inputs;

    ScalarExpr expr;     // Constant, Map, Reduce(Custom: combiner of Input(0), Input(1))
    ScalarExpr identity; // Reduce(Custom): the identity element, a Const
    // Reduce(Custom) of k > 1 arrays together (reduce_multiple_value): every component's
    // combiner, over Input(0..k-1) = the accumulators and Input(k..2k-1) = the elements, and
    // identity; this node is component `component` (its expr and identity are that one's).
    std::vector<ScalarExpr> tuple_exprs, tuple_identities;
    int component = 0;
    std::shared_ptr<const ScanBody> body; // Scan
    AffineMap access;                     // View
    int axis = 0;                         // Iota, Gather, Scatter
    std::vector<int> axes;                // Reduce: sorted reduced axes of inputs[0]
    bool keepdims = false;                // Reduce: reduced axes stay as [0,1)
    ReduceOp reduce_op = ReduceOp::Sum;
    bool overwrite = false;                         // Fuse
    CollectiveOp collective_op = CollectiveOp::Sum; // Collective
    std::shared_ptr<CollectiveGroup> group;         // Collective
    std::uint64_t id = 0;                           // Data, Placeholder: unique identity
    std::string name;     // Placeholder: user's name (not part of identity)
    HostArray data;       // Data
    SourceLocation loc;   // where the user created it (first creator when shared)
    std::size_t hash = 0; // structural hash

    // The memoized result after `compute`, shared by every user of this node.
    std::shared_ptr<const HostArray> memo() const;
    void set_memo(HostArray value) const;

    // Releases long input chains iteratively (a lazy loop of 100k steps must not overflow the
    // stack when it is dropped).
    ~Node();

private:
    mutable std::mutex memo_mutex_;
    mutable std::shared_ptr<const HostArray> memo_;
};

// Intern a node: computes its `hash` and returns the existing equal node if there is one
// (hash and structure), else this one. Thread-safe. Build with std::make_shared<Node>().
NodePtr intern(std::shared_ptr<Node> node);
// A fresh identity for Data and Placeholder nodes.
std::uint64_t fresh_node_id();

// Nodes reachable from `outputs`, inputs before users, each once (deterministic order).
std::vector<NodePtr> topological_order(const std::vector<NodePtr>& outputs);
// A readable multi-line listing: "%3 = map add(in0, in1) (%1, %2) : f32 (4,5)".
std::string to_string(const std::vector<NodePtr>& outputs);

} // namespace hedra

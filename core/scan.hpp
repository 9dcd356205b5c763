// scan: a loop over one axis carrying a state, the step traced once. JAX's lax.scan:
//   carry = init
//   for t in 0..T-1 (T-1..0 with `reverse`):
//       carry, y[t] = f(carry, x[t])
// f takes the carries entering a step and the step's slices of the scanned arrays (the scan
// axis removed) and returns the carries leaving it (each of its initial value's shape and
// dtype) and the step's outputs (any shapes). It is traced once, on placeholders, into a closed
// graph (ScanBody): every array it reads from outside becomes an input of the scan, so a
// compiled program runs the steps as one sequential loop whose body is scheduled like any
// other program (docs/api.md). The step cannot see another step's slice or outputs: a body
// that needs a neighbour's value carries it.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/array.hpp"
#include "core/source_location.hpp"

namespace hedra {

struct ScanStep {
    std::vector<Array> carries; // the carries leaving the step, in the order of `init`
    std::vector<Array> ys;      // the step's outputs, stacked along the scan axis
};

using ScanFunction =
    std::function<ScanStep(const std::vector<Array>& carries, const std::vector<Array>& xs)>;

struct ScanOptions {
    bool reverse = false; // run the steps from the last to the first (outputs stay in place)
    // The number of steps when there are no scanned arrays (ignored otherwise).
    std::int64_t length = -1;
    // Memory for the gradient: with checkpoint = k > 1 (a static length that k divides), the
    // steps run as T/k segments of k, and the gradient stores the carries only where a segment
    // starts (T/k of them) and what one segment needs, recomputing each segment's steps once in
    // the backward sweep; 0 or 1: every step's carries (and contractions) are stored.
    std::int64_t checkpoint = 0;
};

struct ScanResult {
    std::vector<Array> carries; // after the last step
    std::vector<Array> ys;      // per output: the steps' values along `axis`
    // Per carry: its value entering every step, along `axis` (index t: before step t runs).
    std::vector<Array> states;
};

// Scans `xs` along `axis` (each xs[i] must have it, all of one range; negative counts from the
// end). Throws hedra::Error for an empty scan, an axis out of range, scanned arrays of different
// lengths, or a step that returns the wrong number of carries or changes a carry's shape or
// dtype.
ScanResult scan(const ScanFunction& f, const std::vector<Array>& init, const std::vector<Array>& xs,
                int axis = 0, const ScanOptions& options = {},
                SourceLocation loc = SourceLocation::current());

// One carry and one scanned array: f(carry, x) returns {new carry, y}. Returns {final carry,
// stacked ys}.
std::pair<Array, Array>
scan(const std::function<std::pair<Array, Array>(const Array&, const Array&)>& f, const Array& init,
     const Array& xs, int axis = 0, const ScanOptions& options = {},
     SourceLocation loc = SourceLocation::current());

namespace detail {
// The Scan node of a ScanBody built from traced outputs: `params` are the slots the step was
// traced on (carries, then x slices), `outputs` what it returned (new carries, then ys);
// closures are found and cut out here. Returns the Scan node; `inits` and `xs` (scan axis
// first) are its first inputs. Used by scan() and by its adjoint.
NodePtr make_scan_node(const std::vector<NodePtr>& params, const std::vector<NodePtr>& outputs,
                       const std::vector<NodePtr>& inits, const std::vector<NodePtr>& xs,
                       const Range& steps, bool reverse, SourceLocation loc);
// A Scan node like `scan` (same body, inputs and order) whose step also outputs `extra`
// (nodes of its body): its components are `scan`'s with those ys added after its own, so a
// program that needs both computes only this one (sched::merge_scans).
NodePtr extend_scan(const NodePtr& scan, const std::vector<NodePtr>& extra);
// The component of `larger` (extend_scan of `scan`) that holds component `c` of `scan`.
int extended_component(const ScanBody& scan, const ScanBody& larger, int c);
// Component `c` of a Scan node (ScanBody::Component), scan axis first.
NodePtr scan_output(const NodePtr& scan, int c, SourceLocation loc);
// ScanBody::hash of a body (for a body read from a graph file).
std::size_t scan_body_hash(const ScanBody& body);
// A placeholder for slot `k` of a scan body being traced: a carry, an x slice or a closure.
enum class ScanSlot { Carry, X, Closure };
NodePtr scan_slot(ScanSlot kind, int k, const Shape& shape, DType dtype, SourceLocation loc);
} // namespace detail

} // namespace hedra

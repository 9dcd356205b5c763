// The kernel IR: what the partitioner hands to the polyhedral layer. A program is a list of
// buffers and a sequence of kernels; a kernel is a small set of statements, each an assignment
// or a reduction update over a box of iteration counters, reading and writing buffers through
// integer affine maps. No isl here: this is plain data, printable and testable on its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/affine_map.hpp"
#include "core/host_array.hpp"
#include "core/node.hpp"
#include "core/scalar_expr.hpp"

namespace hedra::poly {

enum class BufferRole : std::uint8_t {
    Input,    // bound at run time: a placeholder, host data or a memoized node
    Output,   // a program output (may also be read by later kernels)
    Temporary // materialized between kernels, owned by the program
};

// A buffer that is one row of another along its leading axis: the row a step of a scan's loop
// (Kernel::loop) reads or writes. It has no memory of its own: at step t (the loop's i-th
// iteration) the loop points it at row t + shift of `parent`, or with a window of rows at row
// (i + shift) mod window; on the last iteration, at buffer `edge` instead when there is one
// (the carries after the last step).
struct StepSlice {
    int parent = -1;
    int shift = 0;
    int edge = -1;
    int window = 0;
    bool operator==(const StepSlice&) const = default;
};

struct Buffer {
    std::string name; // "b3": stable, deterministic
    DType dtype = DType::F32;
    std::vector<std::int64_t> sizes; // dense row-major, counter space of its node
    BufferRole role = BufferRole::Temporary;
    NodePtr node; // the lazy node whose value this buffer holds
    // A temporary that one row-fused kernel writes and reads row by row over its leading
    // row_local axes (scheduler/row_fusion.hpp): the printed kernel keeps one row of it per
    // thread, in registers or on the stack, and the program gives it no memory. The polyhedral
    // passes still see the whole buffer, so rows stay independent.
    int row_local = 0;
    // A temporary between two stages of a stencil stream (scheduler/stencil_stream.hpp): only
    // row_window consecutive rows of it (a power of two) are live at any time, and row r is
    // stored at r mod row_window.
    int row_window = 0;
    // With row_window, in a stream run in bands of rows (Statement::stream_bands): axis 0
    // counts the bands, each with a window of its own over the rows of axis 1.
    int window_bands = 0;
    int window_axis() const { return window_bands > 0 ? 1 : 0; }
    // Per axis, the symbolic extent (Range::param) whose run-time value is its size, or -1;
    // empty when every axis is static. `sizes` holds the declared maxima: the memory it gets.
    std::vector<int> params;
    // An input whose memory its caller donated (CompileOptions::donate) and that the program
    // overwrites with an output (scheduler/donate_inputs.hpp): every other read of it comes
    // before the write, or is the write's own element in the same statement instance.
    bool donated = false;
    StepSlice slice; // a row of another buffer, in a scan's loop (slice.parent >= 0)
    bool is_slice() const { return slice.parent >= 0; }
    bool symbolic() const {
        for (int p : params)
            if (p >= 0) return true;
        return false;
    }
    std::size_t bytes() const {
        std::size_t n = dtype_size(dtype);
        for (std::int64_t s : sizes)
            n *= static_cast<std::size_t>(s);
        return n;
    }
    // The memory the program gives it: all of it, one window of rows, or none (row-local).
    std::size_t storage_bytes() const {
        if (row_local > 0 || is_slice()) return 0;
        if (row_window == 0 || sizes.empty()) return bytes();
        return bytes() / static_cast<std::size_t>(sizes[static_cast<std::size_t>(window_axis())]) *
               static_cast<std::size_t>(row_window);
    }
};

// One operand of a statement's expression (Input(k) of `value` is reads[k]).
struct Read {
    int buffer = -1;  // a buffer index, or -1: the value is the affine index expression itself
    AffineMap access; // statement counters -> buffer counters (out_rank 1 when buffer == -1)
    // A data-dependent read (take): the access's inputs after the counters are the values of
    // reads `indirect[j]` of the same statement (plain integer reads), each clamped to
    // [0, indirect_extent[j]) first. Empty for an affine read.
    std::vector<int> indirect;
    std::vector<std::int64_t> indirect_extent;
    bool is_indirect() const { return !indirect.empty(); }
    bool operator==(const Read&) const = default;
};

// A bound a symbolic extent puts on a statement: expr(counters) < the parameter's value. The
// extents hold the declared maxima; the AST generator intersects the domain with these.
struct ParamBound {
    AffineMap expr; // statement counters -> one value
    int param = -1; // Range::param
    bool operator==(const ParamBound&) const = default;
};

enum class StatementKind : std::uint8_t {
    Assign, // write[access(i)] = value
    Update  // write[access(i)] = combine(write[access(i)], value): a reduction step
};

struct Statement {
    std::string name; // "S0", "S1", ...: unique within the program
    StatementKind kind = StatementKind::Assign;
    std::vector<std::int64_t> extents; // domain: 0 <= i_d < extents[d]
    int write_buffer = -1;
    AffineMap write_access; // counters -> write buffer counters
    ScalarExpr value;       // over Input(k) = reads[k], in the write buffer's dtype
    std::vector<Read> reads;
    ReduceOp reduce_op = ReduceOp::Sum; // Update: how to combine
    ScalarExpr combiner;                // Update with Custom: over Input(0)=acc, Input(1)=value
    std::vector<int> reduction_dims;    // Update: the counters that are reduced (not in write)
    // A data-dependent write (scatter_add's Update): write_access's inputs after the counters
    // are the values of reads `write_indirect[j]`, each clamped to [0, write_indirect_extent[j]).
    // The write's access relation covers that whole range, so instances that may add into one
    // element are ordered by the dependences.
    std::vector<int> write_indirect;
    std::vector<std::int64_t> write_indirect_extent;
    // A step of a reduction of several values (reduce_multiple_value), an Assign: further
    // buffers written at write_access with their own values over the same reads. Every value
    // is computed before any is stored, so each reads the accumulators as they were.
    struct TupleWrite {
        int buffer = -1;
        ScalarExpr value;
    };
    std::vector<TupleWrite> tuple_writes;
    // With tuple_writes: reads[m] for m < k (k = 1 + tuple_writes.size()) is component m's
    // accumulator, and tuple_combiners[m] is its new value over Input(0..k-1) = the
    // accumulators and Input(k..2k-1) = another tuple, unlike `value` not specialized to an
    // element: the combiner is associative, so a backend may fold partial tuples with it.
    std::vector<ScalarExpr> tuple_combiners;
    // In a stencil stream (scheduler/stencil_stream.hpp): the stage; the statement writes its
    // buffer's row r at step r + stream_stage * stream_shift of the kernel's one loop over
    // rows. -1 outside a stream.
    int stream_stage = -1;
    int stream_shift = 0;
    // A stream run in bands of rows, one per thread at a time: counter 0 is the band, the
    // row counter is counter 1, and `guards` keep each stage's rows to its band's, widened by
    // the rows later stages of the band read (overlapped: neighbouring bands compute those
    // rows twice). 0: not banded.
    int stream_bands = 0;
    // Affine expressions of the counters (out_rank 1) that are >= 0 on the domain, besides the
    // extents' bounds; a pass that rewrites the counters rewrites these too.
    std::vector<AffineMap> guards;
    // The counters that run over a symbolic extent (see ParamBound); a pass that rewrites the
    // counters rewrites these as it rewrites the accesses.
    std::vector<ParamBound> param_bounds;
};

struct ScanLoop;

// A kernel: statements scheduled together (one isl schedule, one generated function), or a
// scan's loop over kernels of its own (`loop`, and no statements).
struct Kernel {
    std::string name;                  // "k0", ...
    std::vector<Statement> statements; // in program (DSL) order
    std::shared_ptr<const ScanLoop> loop;
};

// A scan's sequential loop (core/scan.hpp): its kernels, partitioned from the scan's body like
// any program, run in order once per step t. Their buffers are the program's: the body's
// temporaries are temporaries of the program, its carries, slices and outputs StepSlices of the
// scan's stacked buffers, its closures the buffers that hold them.
struct ScanLoop {
    std::vector<Kernel> kernels;
    std::int64_t steps = 0;   // T (for a symbolic length, its maximum)
    int param = -1;           // a symbolic length: its Range::param, else -1
    bool reverse = false;     // t runs from T - 1 down to 0
    std::vector<int> slices;  // the StepSlice buffers the loop points, in order
    std::vector<int> touched; // every buffer of the program the loop reads or writes, slices'
                              // parents and edges included (sorted)
};

// Every statement of the kernel, its loop's kernels' included (in order).
template <class F>
void for_each_statement(const Kernel& kernel, F&& f) {
    for (const Statement& st : kernel.statements)
        f(st);
    if (kernel.loop)
        for (const Kernel& k : kernel.loop->kernels)
            for_each_statement(k, f);
}

// Whether the program has a scan's loop.
bool has_loops(const struct ProgramIR& program);
// The kernels of the program's loops, depth first (a loop's kernels after it, before the
// next): profiles number them after the program's own kernels in this order.
std::vector<const Kernel*> nested_kernels(const struct ProgramIR& program);
// Per buffer of the program: whether a scan's loop touches it (ScanLoop::touched).
std::vector<bool> loop_buffers(const struct ProgramIR& program);

// Whether a statement (any statement of the kernel) reads or writes data-dependently. The
// passes that reason about affine accesses (forms, register tiles, lane reductions, streams,
// split reductions) leave such kernels to the general path, whose access relations cover the
// whole range of the indirect inputs.
bool has_indirect(const Statement& st);
// Whether the statement is a plain Assign whose value is its one read of a buffer, unchanged
// (at an affine access; whatever the read and write accesses are).
bool is_copy(const Statement& st);
bool has_indirect(const Kernel& kernel);

// Whether the kernel is a stencil stream (Statement::stream_stage).
bool is_stream(const Kernel& kernel);

struct ProgramIR {
    std::vector<Buffer> buffers;
    std::vector<Kernel> kernels; // executed in order
    std::vector<int> outputs;    // buffer index per requested output, in request order
    std::vector<int> inputs;     // buffer indices bound at run time, deterministic order
    // The symbolic extents (Range::param) the program's sizes depend on, sorted: the kernels
    // take their values as arguments in this order.
    std::vector<int> params;
    std::vector<std::int64_t> param_max; // per params entry: its declared maximum
    // The position of `param` in `params`, or -1.
    int param_index(int param) const {
        for (std::size_t i = 0; i < params.size(); ++i)
            if (params[i] == param) return static_cast<int>(i);
        return -1;
    }
};

// "hd_n<k>": the value of ProgramIR::params[k] in isl sets and generated code.
inline std::string param_value_name(int k) {
    return "hd_n" + std::to_string(k);
}

// Readable listing for dumps and tests.
std::string to_string(const ProgramIR& program);

} // namespace hedra::poly

// The fuzzer's own description of a random hedra program: a list of operations in SSA form
// (each reads earlier ones by index) plus the scalar expressions of its maps. It is kept apart
// from the lazy graph so that one description can be built into hedra arrays, printed as a C++
// reproducer, analysed for the tolerance each output needs, and edited by the shrinker.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hedra.hpp"

namespace hedra::fuzz {

// A scalar expression of a map, built with the Sym operators exactly as a user would write it.
struct Expr {
    // Repeat: y = init (args[0]), then `input` times y = step (args[1]), where the step reads y
    // as Input -1: one shared node per step, a DAG with 2^count paths (never a tree).
    enum class Kind : std::uint8_t { Input, Literal, Unary, Binary, Select, Cast, Repeat };
    enum class Literal : std::uint8_t { Double, Int, Bool };
    Kind kind = Kind::Input;
    int input = 0;                     // Input: the map operand number
    Literal literal = Literal::Double; // Literal: a weak C++ literal
    double value = 0.0;
    ScalarOp op = ScalarOp::Add; // Unary, Binary
    DType to = DType::F32;       // Cast
    std::vector<Expr> args;

    static Expr in(int k);
    static Expr lit(Literal kind, double value);
    static Expr unary(ScalarOp op, Expr a);
    static Expr binary(ScalarOp op, Expr a, Expr b);
    static Expr select(Expr c, Expr a, Expr b);
    static Expr cast(Expr a, DType to);
    static Expr repeat(Expr init, Expr step, int count);
    static constexpr int kRunning = -1; // the Input number of a Repeat's running value
    int size() const;                   // number of nodes
};

// How the values of a data leaf are drawn (fuzz_data.hpp).
enum class ValueKind : std::uint8_t { Dyadic, Uniform, Special, SmallInt, WideInt, Bool };

enum class OpKind : std::uint8_t {
    Data,             // array(values, shape) or a placeholder fed the same values
    Constant,         // constant(value, dtype)
    Full,             // full(shape, value, dtype)
    Iota,             // index_components(shape, axis)
    Map,              // lazy_n_ary(expr, operands)
    ReshapeTransform, // reshape(a, transform)
    ReshapeShape,     // reshape(a, shape)
    View,             // view(a, shape, map)
    BroadcastTo,      // broadcast_to(a, shape)
    Reduce,           // reduce(op, a, axes, keepdims)
    CustomReduce,     // reduce(combiner, identity, a, axes, keepdims)
    Fuse,             // fuse(inputs)
    Overwrite,        // overwrite(inputs)
    Stack,            // stack(axis, inputs)
    Matmul,           // matmul(a, b)
    Transpose,        // transpose(a, perm)
    Pad,              // pad(a, pads, value)
    Flatten,          // flatten(a, first, last)
    Unflatten,        // unflatten(a, axis, sizes)
    Rebase,           // rebase(a)
    Cast,             // cast(a, dtype)
    Take,             // take(a, indices, axis)
    Scan,             // scan(step, inits, {xs}, axis, options): see Op's scan fields
};
const char* op_kind_name(OpKind k);

// The combiners of CustomReduce (associative and commutative, so any order is right).
// ArgMax: reduce_multiple_value over (a, its index along the first reduced axis), largest value
// then lowest index (NaNs never win); the op is the index (i64).
enum class Combiner : std::uint8_t { Add, Mul, Max, Min, SelectMax, ArgMax };

// What a Scan op is: a carry after the last step, the stacked outputs, or a carry's states.
enum class ScanValue : std::uint8_t { Carry, Ys, States };
// What the step computes besides maps: nothing, sum(x), matmul(carry 0, matrix), or the final
// carry of a scan over x's leading axis (sum(v) accumulated: a scan inside the step).
enum class ScanExtra : std::uint8_t { None, Sum, Matmul, Inner };

// One operand of a map: an input of the op (by position in Op::inputs) or a weak literal.
struct MapOperand {
    int slot = -1; // index into Op::inputs; -1: literal
    Expr::Literal literal = Expr::Literal::Double;
    double value = 0.0;
};

struct Op {
    OpKind kind = OpKind::Data;
    std::vector<int> inputs; // earlier ops read by this one

    Shape shape;              // Data, Full, Iota, ReshapeShape, View, BroadcastTo
    DType dtype = DType::F32; // Data, Constant, Full, Cast
    std::uint64_t seed = 0;   // Data
    ValueKind values_kind = ValueKind::Uniform;
    std::vector<double> values; // Data: explicit values (set by the shrinker); else from seed
    bool placeholder = false;   // Data: a placeholder of a compiled program
    double value = 0.0;         // Constant, Full, Pad, CustomReduce identity
    int axis = 0;               // Iota, Stack, Unflatten, Flatten (first), Take
    int last = -1;              // Flatten
    std::vector<int> axes;      // Reduce, CustomReduce; Transpose: the permutation
    bool keepdims = false;
    ReduceOp reduce_op = ReduceOp::Sum;
    Combiner combiner = Combiner::Add;
    std::optional<Transform> transform;                      // ReshapeTransform
    AffineMap map;                                           // View
    std::vector<std::pair<std::int64_t, std::int64_t>> pads; // Pad
    std::vector<std::int64_t> sizes;                         // Unflatten
    Expr expr;                                               // Map
    std::vector<MapOperand> operands;                        // Map

    // Scan (axis: the scan axis of xs): inputs are xs, the initial carries, then the closure
    // and the matrix when present. The step's maps read, in order, the carries, the x slice,
    // the closure and the extra; `step` holds one expression per carry (cast to its dtype),
    // then the output y's.
    int carries = 1;
    bool reverse = false;
    bool closure = false;
    ScanExtra extra = ScanExtra::None;
    ScanValue scan_value = ScanValue::Carry;
    int component = 0; // the carry of Carry and States
    std::vector<Expr> step;
};

struct FuzzProgram {
    std::vector<Op> ops;
    std::vector<int> outputs; // op indices
    std::uint64_t seed = 0;   // the generator seed it came from (for messages only)
};

// The arrays of a built program.
struct BuiltProgram {
    std::vector<Array> values;       // one per op
    std::vector<Array> outputs;      // FuzzProgram::outputs
    std::vector<Array> placeholders; // Data ops with placeholder set, in op order
    std::vector<HostArray> inputs;   // their values
};

// Builds the program with hedra's public API. Throws whatever hedra throws.
BuiltProgram build(const FuzzProgram& p);
// The same program with one Data op of leading axis [0, n) (n >= 2) read as a placeholder
// whose leading axis is the symbolic extent "fz" <= n (the first candidate, of at most three,
// that hedra accepts: a slice or a static operand on that axis rejects it); its input is the
// op's full data and `symbolic_input` its index among the placeholders. Null if none builds.
std::optional<BuiltProgram> build_symbolic(const FuzzProgram& p, int& symbolic_input);
// Builds one op given the arrays of earlier ops (used by the generator step by step).
Array build_op(const Op& op, const std::vector<Array>& values, std::vector<Array>* placeholders,
               std::vector<HostArray>* inputs);
// The expression of a nested scan's step (ScanExtra::Inner): a * 0.5 + sum(v).
Expr inner_scan_step();
// The number of map operands of a Scan op's step.
int scan_operands(const Op& op);

// The scalar expression as Syms over `in` (the same calls the printed reproducer makes).
// `running`: the value Input -1 reads inside a Repeat's step.
Sym build_expr(const Expr& e, const std::vector<Sym>& in, const Sym* running = nullptr);

// The program as a C++ doctest case for tests/differential (see fuzz_print.cpp).
std::string to_cpp(const FuzzProgram& p, const std::string& test_name);
std::string to_cpp(const Expr& e);

// Ops not reachable from the outputs removed, indices renumbered.
FuzzProgram without_dead_ops(const FuzzProgram& p);

} // namespace hedra::fuzz

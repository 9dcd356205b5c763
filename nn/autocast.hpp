// Mixed precision as PyTorch's autocast does it: inside an Autocast scope the nn layers cast
// their operands by a fixed list of operations. Contractions (linear, conv2d, attention's two
// products) read their operands rounded to the half type, form the products and their sum in
// f32 and round the result once (core matmul's form for half inputs, which tensor cores run);
// softmax, log-softmax, layer norm, GELU and the losses read their input in f32 and compute in
// f32; everything else (residual sums, ReLU, pooling, dropout, embeddings) follows the ordinary
// promotion rule, so a half activation added to the f32 residual stream gives f32. Parameters
// stay what they are (f32 master weights): the casts are nodes of the graph, so the gradient of
// a parameter comes back through its cast as f32, and activation gradients are rounded where
// the activations were. The scope is per thread and only changes how graphs are built.
#pragma once

#include "core/array.hpp"
#include "core/dtype.hpp"
#include "core/source_location.hpp"

namespace hedra::nn {

// While alive, the nn layers built on this thread use `half` (DType::BF16 or DType::F16) for
// their contractions; DType::F32 turns autocast off inside an outer scope. Scopes nest; the
// previous setting comes back when one ends. Any other dtype throws hedra::Error.
class Autocast {
public:
    explicit Autocast(DType half);
    ~Autocast();
    Autocast(const Autocast&) = delete;
    Autocast& operator=(const Autocast&) = delete;

private:
    DType previous_;
};

// The half type of the innermost Autocast scope, or DType::F32 when none is active.
DType autocast_dtype();

// A contraction's operand: x rounded to the autocast half type when autocast is on and x is an
// f32 array; x unchanged otherwise.
Array autocast_half(const Array& x, SourceLocation loc = SourceLocation::current());

// An operand of an f32 operation (softmax, normalization, losses): x cast to f32 when autocast
// is on and x is half; x unchanged otherwise.
Array autocast_f32(const Array& x, SourceLocation loc = SourceLocation::current());

} // namespace hedra::nn

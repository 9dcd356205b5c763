// Recurrent layers on scan (core/scan.hpp), with PyTorch's equations, gate order, weight names
// and layouts (torch.nn.RNN, LSTM, GRU), so a PyTorch state dict loads unchanged:
//   Elman RNN  h' = act(W_ih x + b_ih + W_hh h + b_hh)                  (act: tanh or relu)
//   LSTM       i, f, g, o = split(W_ih x + b_ih + W_hh h + b_hh)        (rows 0..4H in that order)
//              c' = σ(f)·c + σ(i)·tanh(g),  h' = σ(o)·tanh(c')
//   GRU        r, z, n-rows of W_ih x + b_ih and of W_hh h + b_hh       (rows 0..3H: r, z, n)
//              r = σ(x_r + h_r), z = σ(x_z + h_z), n = tanh(x_n + r·h_n), h' = (1 − z)·n + z·h
// One layer and direction is one scan over time. The input projection W_ih x + b_ih of every
// step is computed before the scan as one contraction over T·B rows; the step itself is one
// contraction h·W_hhᵀ and elementwise gates, so the sequential loop does only what must be
// sequential. Inputs are time-major (T, B, I), or (B, T, I) with batch_first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/array.hpp"
#include "core/host_array.hpp"
#include "core/source_location.hpp"
#include "nn/model.hpp"

namespace hedra::nn {

enum class RecurrentMode { RnnTanh, RnnRelu, Lstm, Gru };

// The gates per hidden unit: 1 (RNN), 4 (LSTM: i, f, g, o), 3 (GRU: r, z, n).
std::int64_t gate_count(RecurrentMode mode);

// One layer in one direction: weight_ih (G·H, I), weight_hh (G·H, H), bias_ih and bias_hh
// (G·H) or both empty Arrays (PyTorch's bias=False).
struct RecurrentWeights {
    Array weight_ih, weight_hh, bias_ih, bias_hh;
};

struct RecurrentResult {
    Array output; // (T, B, D·H) (D = 2 when bidirectional), or (B, T, D·H) with batch_first
    Array h;      // the final hidden state: (B, H) for a layer, (L·D, B, H) for a stack
    Array c;      // the final cell state (LSTM only, else empty), shaped like h
};

// One step on x (B, I) and h (B, H) (and c (B, H) for the LSTM), as PyTorch's RNNCell,
// LSTMCell and GRUCell: the new h (and c; empty for the others).
RecurrentResult recurrent_cell(RecurrentMode mode, const Array& x, const Array& h, const Array& c,
                               const RecurrentWeights& w,
                               SourceLocation loc = SourceLocation::current());

// The same for one mode, as PyTorch names them.
inline RecurrentResult rnn_cell(const Array& x, const Array& h, const RecurrentWeights& w,
                                bool relu = false, SourceLocation loc = SourceLocation::current()) {
    return recurrent_cell(relu ? RecurrentMode::RnnRelu : RecurrentMode::RnnTanh, x, h, Array(), w,
                          loc);
}
inline RecurrentResult lstm_cell(const Array& x, const Array& h, const Array& c,
                                 const RecurrentWeights& w,
                                 SourceLocation loc = SourceLocation::current()) {
    return recurrent_cell(RecurrentMode::Lstm, x, h, c, w, loc);
}
inline RecurrentResult gru_cell(const Array& x, const Array& h, const RecurrentWeights& w,
                                SourceLocation loc = SourceLocation::current()) {
    return recurrent_cell(RecurrentMode::Gru, x, h, Array(), w, loc);
}

// One layer in one direction over x (T, B, I), time-major: output (T, B, H) and the final h
// and c. h0 and c0 (B, H) may be empty Arrays (zeros). `reverse` runs from the last step to the
// first (the backward half of a bidirectional layer; its outputs stay at their own steps).
RecurrentResult recurrent_layer(RecurrentMode mode, const Array& x, const RecurrentWeights& w,
                                const Array& h0 = Array(), const Array& c0 = Array(),
                                bool reverse = false,
                                SourceLocation loc = SourceLocation::current());

struct RecurrentConfig {
    RecurrentMode mode = RecurrentMode::Lstm;
    std::int64_t input_size = 0;
    std::int64_t hidden_size = 0;
    std::int64_t num_layers = 1;
    bool bias = true;
    bool batch_first = false;
    bool bidirectional = false;
};

struct RecurrentParameter {
    std::string name;                // "weight_ih_l0", "bias_hh_l1_reverse"
    std::vector<std::int64_t> shape; // PyTorch's layout
};

// The parameters in PyTorch's order (per layer, per direction: weight_ih, weight_hh, bias_ih,
// bias_hh). Layer l > 0 reads D·H features (the previous layer's directions concatenated).
std::vector<RecurrentParameter> recurrent_parameters(const RecurrentConfig& config);

// PyTorch's default initialisation, U(±1/sqrt(H)) for every parameter, drawn in
// recurrent_parameters() order from hedra's seeded generator (nn/init.hpp).
std::vector<HostArray> recurrent_init(const RecurrentConfig& config, std::uint64_t seed);

// The whole stack, as torch.nn.RNN/LSTM/GRU's forward: x (T, B, I) (or (B, T, I) with
// batch_first), params as recurrent_parameters() lists them, h0 and c0 (L·D, B, H) or empty
// (zeros). Returns the last layer's output and the final h (and c) of every layer and
// direction, (L·D, B, H) in PyTorch's order. Dropout between layers is not supported.
RecurrentResult recurrent(const RecurrentConfig& config, const std::vector<Array>& params,
                          const Array& x, const Array& h0 = Array(), const Array& c0 = Array(),
                          SourceLocation loc = SourceLocation::current());

// A sequence classifier as PyTorch writes it: an LSTM (batch_first) over examples (steps,
// features), then fc: linear(hidden → classes) on the last layer's final h. Parameters
// "lstm.weight_ih_l0", ..., "fc.weight", "fc.bias" (a module with self.lstm and self.fc), the
// LSTM's drawn first with recurrent_init's scheme, then fc's with nn.Linear's, from one seed.
// MNIST images read row by row are (28, 28); pixel by pixel, (784, 1).
Model lstm_classifier(std::int64_t steps, std::int64_t features, std::int64_t hidden,
                      std::int64_t classes, std::uint64_t seed, std::int64_t num_layers = 1);

} // namespace hedra::nn

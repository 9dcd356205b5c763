// The recurrent layers of recurrent.hpp. A gate is a view of columns [k·H, (k+1)·H) of the
// fused (B, G·H) pre-activation, so each step has one recurrent contraction and the gates are
// elementwise maps over views of it. The LSTM's and the RNN's hidden bias is added once to
// the input projection outside the loop; the GRU keeps b_hh inside, since r multiplies its
// n rows.
#include "nn/recurrent.hpp"

#include <cmath>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "core/library.hpp"
#include "core/primitives.hpp"
#include "core/scan.hpp"
#include "nn/index_space.hpp"
#include "nn/init.hpp"
#include "nn/layers.hpp"

namespace hedra::nn {

namespace {

using detail::at;
using detail::IndexMap;

const char* mode_name(RecurrentMode mode) {
    switch (mode) {
    case RecurrentMode::RnnTanh:
        return "rnn_tanh";
    case RecurrentMode::RnnRelu:
        return "rnn_relu";
    case RecurrentMode::Lstm:
        return "lstm";
    case RecurrentMode::Gru:
        return "gru";
    }
    return "recurrent";
}

std::string sizes_string(const std::vector<std::int64_t>& sizes) {
    std::string out = "(";
    for (std::size_t i = 0; i < sizes.size(); ++i)
        out += (i ? ", " : "") + std::to_string(sizes[i]);
    return out + ")";
}

// An axis as an index space's axis: [0, n), or a symbolic extent (a batch) as it is.
Range space_range(const Range& r) {
    return r.is_dynamic() ? r : range(r.size);
}

// Gate k of a (B, G·H) pre-activation: columns [k·H, (k+1)·H) as a (B, H) view.
Array gate(const Array& a, std::int64_t k, std::int64_t hidden, SourceLocation loc) {
    IndexMap m(2, a.shape());
    m.read(0, 0).read(1, 1).shift(1, k * hidden);
    return view(a, Shape{space_range(a.shape()[0]), range(hidden)}, m.map(), loc);
}

// Entry k of a stacked state (L·D, B, H) as (B, H).
Array state_entry(const Array& s, std::int64_t k, SourceLocation loc) {
    IndexMap m(2, s.shape());
    m.shift(0, k).read(1, 0).read(2, 1);
    return view(s, Shape{space_range(s.shape()[1]), range(s.shape()[2].size)}, m.map(), loc);
}

void check_weights(RecurrentMode mode, const RecurrentWeights& w, std::int64_t input,
                   SourceLocation loc) {
    const char* op = mode_name(mode);
    const std::int64_t g = gate_count(mode);
    auto require = [&](const char* name, const Array& a, const std::vector<std::int64_t>& sizes,
                       bool optional) {
        if (optional && !a.valid()) return;
        if (!a.valid() || !is_float(a.dtype()) || a.shape().sizes() != sizes)
            throw Error(std::string(op) + ": " + name + " must be a float array of shape " +
                        sizes_string(sizes) + (optional ? " or an empty Array" : "") + ", got " +
                        (a.valid() ? a.describe() : std::string("an empty Array")) +
                        "; the weights are PyTorch's (gates x hidden, features)" + at(loc));
    };
    if (!w.weight_hh.valid() || w.weight_hh.rank() != 2 || w.weight_hh.shape()[0].size % g != 0)
        throw Error(std::string(op) + ": weight_hh must be (" + std::to_string(g) +
                    "·hidden, hidden), got " +
                    (w.weight_hh.valid() ? w.weight_hh.describe() : std::string("an empty Array")) +
                    at(loc));
    const std::int64_t h = w.weight_hh.shape()[0].size / g;
    require("weight_hh", w.weight_hh, {g * h, h}, false);
    require("weight_ih", w.weight_ih, {g * h, input}, false);
    require("bias_ih", w.bias_ih, {g * h}, true);
    require("bias_hh", w.bias_hh, {g * h}, true);
}

std::int64_t hidden_of(RecurrentMode mode, const RecurrentWeights& w) {
    return w.weight_hh.shape()[0].size / gate_count(mode);
}

Array add_optional(const Array& a, const Array& b) {
    if (!a.valid()) return b;
    if (!b.valid()) return a;
    return a + b;
}

// The bias of the input projection computed outside the loop, and the one left inside it.
Array input_bias(RecurrentMode mode, const RecurrentWeights& w) {
    return mode == RecurrentMode::Gru ? w.bias_ih : add_optional(w.bias_ih, w.bias_hh);
}
Array hidden_bias(RecurrentMode mode, const RecurrentWeights& w) {
    return mode == RecurrentMode::Gru ? w.bias_hh : Array();
}

// One step from the input projection gx (B, G·H) (with input_bias) and the state.
std::pair<Array, Array> step(RecurrentMode mode, const Array& gx, const Array& h, const Array& c,
                             const Array& weight_hh, const Array& bias_hh, std::int64_t hidden,
                             SourceLocation loc) {
    Array gh = linear(h, weight_hh, bias_hh, loc);
    switch (mode) {
    case RecurrentMode::RnnTanh:
        return {tanh(gx + gh, loc), Array()};
    case RecurrentMode::RnnRelu:
        return {relu(gx + gh, loc), Array()};
    case RecurrentMode::Lstm: {
        Array g = gx + gh;
        Array i = sigmoid(gate(g, 0, hidden, loc), loc);
        Array f = sigmoid(gate(g, 1, hidden, loc), loc);
        Array cell = tanh(gate(g, 2, hidden, loc), loc);
        Array o = sigmoid(gate(g, 3, hidden, loc), loc);
        Array c_next = f * c + i * cell;
        return {o * tanh(c_next, loc), c_next};
    }
    case RecurrentMode::Gru: {
        Array r = sigmoid(gate(gx, 0, hidden, loc) + gate(gh, 0, hidden, loc), loc);
        Array z = sigmoid(gate(gx, 1, hidden, loc) + gate(gh, 1, hidden, loc), loc);
        Array n = tanh(gate(gx, 2, hidden, loc) + r * gate(gh, 2, hidden, loc), loc);
        return {(1.0f - z) * n + z * h, Array()};
    }
    }
    throw Error("recurrent: unknown mode" + at(loc));
}

// h0 or c0 (B, H), or zeros of x's batch when empty.
Array initial_state(const char* op, const char* name, const Array& s, const Range& batch,
                    std::int64_t hidden, DType dtype, SourceLocation loc) {
    if (!s.valid()) return zeros(Shape{space_range(batch), range(hidden)}, dtype, loc);
    if (s.rank() != 2 || s.shape()[0].size != batch.size || s.shape()[1].size != hidden)
        throw Error(std::string(op) + ": " + name + " must be (batch " +
                    std::to_string(batch.size) + ", hidden " + std::to_string(hidden) +
                    ") or an empty Array for zeros, got " + s.describe() + at(loc));
    return s;
}

} // namespace

std::int64_t gate_count(RecurrentMode mode) {
    switch (mode) {
    case RecurrentMode::Lstm:
        return 4;
    case RecurrentMode::Gru:
        return 3;
    default:
        return 1;
    }
}

RecurrentResult recurrent_cell(RecurrentMode mode, const Array& x, const Array& h, const Array& c,
                               const RecurrentWeights& w, SourceLocation loc) {
    const char* op = mode_name(mode);
    if (x.rank() != 2 || !is_float(x.dtype()))
        throw Error(std::string(op) + ": x must be a float array (batch, features), got " +
                    x.describe() + at(loc));
    check_weights(mode, w, x.shape()[1].size, loc);
    const std::int64_t hidden = hidden_of(mode, w);
    const Array h0 = initial_state(op, "h", h, x.shape()[0], hidden, x.dtype(), loc);
    const Array c0 = mode == RecurrentMode::Lstm
                         ? initial_state(op, "c", c, x.shape()[0], hidden, x.dtype(), loc)
                         : Array();
    Array gx = linear(x, w.weight_ih, input_bias(mode, w), loc);
    auto [h1, c1] = step(mode, gx, h0, c0, w.weight_hh, hidden_bias(mode, w), hidden, loc);
    return {h1, h1, c1};
}

RecurrentResult recurrent_layer(RecurrentMode mode, const Array& x, const RecurrentWeights& w,
                                const Array& h0, const Array& c0, bool reverse,
                                SourceLocation loc) {
    const char* op = mode_name(mode);
    if (x.rank() != 3 || !is_float(x.dtype()))
        throw Error(std::string(op) + ": x must be a float array (time, batch, features), got " +
                    x.describe() +
                    " (transpose a batch-first input, or use recurrent() with "
                    "batch_first)" +
                    at(loc));
    check_weights(mode, w, x.shape()[2].size, loc);
    const std::int64_t hidden = hidden_of(mode, w);
    const bool lstm = mode == RecurrentMode::Lstm;
    std::vector<Array> init{initial_state(op, "h0", h0, x.shape()[1], hidden, x.dtype(), loc)};
    if (lstm) init.push_back(initial_state(op, "c0", c0, x.shape()[1], hidden, x.dtype(), loc));
    // Every step's input projection at once: (T, B, G·H), T·B rows of one contraction.
    Array gx = linear(x, w.weight_ih, input_bias(mode, w), loc);
    const Array weight_hh = w.weight_hh, bias_hh = hidden_bias(mode, w);
    ScanOptions options;
    options.reverse = reverse;
    ScanResult r = scan(
        [=](const std::vector<Array>& carries, const std::vector<Array>& xs) {
            auto [h, c] = step(mode, xs[0], carries[0], lstm ? carries[1] : Array(), weight_hh,
                               bias_hh, hidden, loc);
            std::vector<Array> next{h};
            if (lstm) next.push_back(c);
            return ScanStep{next, {h}};
        },
        init, {gx}, 0, options, loc);
    return {r.ys[0], r.carries[0], lstm ? r.carries[1] : Array()};
}

std::vector<RecurrentParameter> recurrent_parameters(const RecurrentConfig& config) {
    const std::int64_t g = gate_count(config.mode), h = config.hidden_size;
    const std::int64_t dirs = config.bidirectional ? 2 : 1;
    std::vector<RecurrentParameter> out;
    for (std::int64_t l = 0; l < config.num_layers; ++l)
        for (std::int64_t d = 0; d < dirs; ++d) {
            const std::string suffix = "_l" + std::to_string(l) + (d ? "_reverse" : "");
            const std::int64_t in = l == 0 ? config.input_size : dirs * h;
            out.push_back({"weight_ih" + suffix, {g * h, in}});
            out.push_back({"weight_hh" + suffix, {g * h, h}});
            if (config.bias) {
                out.push_back({"bias_ih" + suffix, {g * h}});
                out.push_back({"bias_hh" + suffix, {g * h}});
            }
        }
    return out;
}

std::vector<HostArray> recurrent_init(const RecurrentConfig& config, std::uint64_t seed) {
    if (config.hidden_size <= 0 || config.input_size <= 0 || config.num_layers <= 0)
        throw Error("recurrent_init: input_size, hidden_size and num_layers must be positive, "
                    "got " +
                    std::to_string(config.input_size) + ", " + std::to_string(config.hidden_size) +
                    " and " + std::to_string(config.num_layers));
    InitRng rng(seed);
    const double bound = 1.0 / std::sqrt(static_cast<double>(config.hidden_size));
    std::vector<HostArray> out;
    for (const RecurrentParameter& p : recurrent_parameters(config))
        out.push_back(uniform(p.shape, bound, rng));
    return out;
}

RecurrentResult recurrent(const RecurrentConfig& config, const std::vector<Array>& params,
                          const Array& x, const Array& h0, const Array& c0, SourceLocation loc) {
    const char* op = mode_name(config.mode);
    const std::vector<RecurrentParameter> spec = recurrent_parameters(config);
    if (params.size() != spec.size())
        throw Error(std::string(op) + ": expected " + std::to_string(spec.size()) +
                    " parameters (recurrent_parameters() lists them), got " +
                    std::to_string(params.size()) + at(loc));
    if (x.rank() != 3 || !is_float(x.dtype()))
        throw Error(std::string(op) + ": x must be a float array " +
                    (config.batch_first ? "(batch, time, features)" : "(time, batch, features)") +
                    ", got " + x.describe() + at(loc));
    const Array xt = config.batch_first ? transpose(x, {1, 0, 2}, loc) : x;
    if (xt.shape()[2].size != config.input_size)
        throw Error(std::string(op) + ": x has " + std::to_string(xt.shape()[2].size) +
                    " features but input_size is " + std::to_string(config.input_size) + at(loc));
    const std::int64_t dirs = config.bidirectional ? 2 : 1, hidden = config.hidden_size;
    const std::int64_t states = config.num_layers * dirs;
    const bool lstm = config.mode == RecurrentMode::Lstm;
    auto check_state = [&](const char* name, const Array& s) {
        if (!s.valid()) return;
        if (s.rank() != 3 || s.shape()[0].size != states ||
            s.shape()[1].size != xt.shape()[1].size || s.shape()[2].size != hidden)
            throw Error(std::string(op) + ": " + name + " must be (layers x directions " +
                        std::to_string(states) + ", batch " + std::to_string(xt.shape()[1].size) +
                        ", hidden " + std::to_string(hidden) +
                        ") or an empty Array for zeros, got " + s.describe() + at(loc));
    };
    check_state("h0", h0);
    if (lstm) check_state("c0", c0);
    const std::size_t per = config.bias ? 4 : 2;
    Array input = xt;
    std::vector<Array> hs, cs;
    for (std::int64_t l = 0; l < config.num_layers; ++l) {
        std::vector<Array> outputs;
        for (std::int64_t d = 0; d < dirs; ++d) {
            const std::int64_t k = l * dirs + d;
            const std::size_t p = static_cast<std::size_t>(k) * per;
            RecurrentWeights w{params[p], params[p + 1], config.bias ? params[p + 2] : Array(),
                               config.bias ? params[p + 3] : Array()};
            RecurrentResult r = recurrent_layer(
                config.mode, input, w, h0.valid() ? state_entry(h0, k, loc) : Array(),
                lstm && c0.valid() ? state_entry(c0, k, loc) : Array(), d == 1, loc);
            outputs.push_back(r.output);
            hs.push_back(r.h);
            if (lstm) cs.push_back(r.c);
        }
        // PyTorch concatenates the directions on the feature axis: backward at [H, 2H).
        input = dirs == 1
                    ? outputs[0]
                    : fuse({outputs[0], reshape(outputs[1], Transform::shift({0, 0, hidden}), loc)},
                           loc);
    }
    Array output = config.batch_first ? transpose(input, {1, 0, 2}, loc) : input;
    return {output, stack(0, hs, loc), lstm ? stack(0, cs, loc) : Array()};
}

Model lstm_classifier(std::int64_t steps, std::int64_t features, std::int64_t hidden,
                      std::int64_t classes, std::uint64_t seed, std::int64_t num_layers) {
    if (steps <= 0 || features <= 0 || hidden <= 0 || classes <= 0 || num_layers <= 0)
        throw Error("lstm_classifier: steps, features, hidden, classes and num_layers must be "
                    "positive, got " +
                    sizes_string({steps, features, hidden, classes, num_layers}));
    const RecurrentConfig config{.mode = RecurrentMode::Lstm,
                                 .input_size = features,
                                 .hidden_size = hidden,
                                 .num_layers = num_layers,
                                 .batch_first = true};
    Model m;
    InitRng rng(seed);
    const double bound = 1.0 / std::sqrt(static_cast<double>(hidden));
    for (const RecurrentParameter& p : recurrent_parameters(config)) {
        m.names.push_back("lstm." + p.name);
        m.params.push_back(uniform(p.shape, bound, rng));
    }
    m.names.push_back("fc.weight");
    m.params.push_back(kaiming_uniform({classes, hidden}, rng));
    m.names.push_back("fc.bias");
    m.params.push_back(bias_uniform(classes, hidden, rng));
    const std::size_t lstm_params = m.params.size() - 2;
    m.forward = [config, lstm_params](const std::vector<Array>& p, const Array& x) {
        std::vector<Array> lstm(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(lstm_params));
        RecurrentResult r = recurrent(config, lstm, x);
        // The last layer's final h: entry L − 1 of the stacked (L, B, H) states.
        Array last = state_entry(r.h, config.num_layers - 1, SourceLocation::current());
        return linear(last, p[lstm_params], p[lstm_params + 1]);
    };
    m.example_shape = {steps, features};
    return m;
}

} // namespace hedra::nn

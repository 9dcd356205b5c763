// hedra.nn: the layers, optimizers and models of nn/ (a model's forward function may be
// Python: it is called, with the GIL held, when a program is built, never per step); the
// training steps and the data and checkpoint files are bound in bind_training and bind_nn_io.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "hedra_python.hpp"
#include "nn/clip_grad.hpp"
#include "nn/gpt.hpp"
#include "nn/gpt_generator.hpp"
#include "nn/layers.hpp"
#include "nn/model.hpp"
#include "nn/optim.hpp"
#include "nn/recurrent.hpp"
#include "nn/transformer.hpp"

namespace hedra::python {

using namespace nb::literals;

namespace {

Array optional_array(nb::handle h, const char* op) {
    return h.is_none() ? Array() : to_array(h, op);
}

void bind_layers(nb::module_& nn) {
    nn.def(
        "linear",
        [](ArrayLike x, ArrayLike w, OptionalArrayLike b) {
            return nn::linear(to_array(x, "linear"), to_array(w, "linear"),
                              optional_array(b, "linear"), python_location());
        },
        "x"_a, "weight"_a, "bias"_a = nb::none(),
        "x · weightᵀ (+ bias), weight (out, in...) as PyTorch's.");
    nn.def(
        "conv2d",
        [](ArrayLike x, ArrayLike w, OptionalArrayLike b, std::int64_t stride,
           std::int64_t padding) {
            return nn::conv2d(to_array(x, "conv2d"), to_array(w, "conv2d"),
                              optional_array(b, "conv2d"), stride, padding, python_location());
        },
        "x"_a, "weight"_a, "bias"_a = nb::none(), "stride"_a = 1, "padding"_a = 0);
    nn.def(
        "maxpool2d",
        [](ArrayLike x, std::int64_t kernel, std::int64_t stride) {
            return nn::maxpool2d(to_array(x, "maxpool2d"), kernel, stride, python_location());
        },
        "x"_a, "kernel"_a, "stride"_a = 0);
    nn.def(
        "softmax",
        [](ArrayLike x, int axis) {
            return nn::softmax(to_array(x, "softmax"), axis, python_location());
        },
        "x"_a, "axis"_a = -1);
    nn.def(
        "log_softmax",
        [](ArrayLike x, int axis) {
            return nn::log_softmax(to_array(x, "log_softmax"), axis, python_location());
        },
        "x"_a, "axis"_a = -1);
    nn.def(
        "softmax_cross_entropy",
        [](ArrayLike logits, ArrayLike labels) {
            return nn::softmax_cross_entropy(to_array(logits, "softmax_cross_entropy"),
                                             to_array(labels, "softmax_cross_entropy"),
                                             python_location());
        },
        "logits"_a, "labels"_a, "Mean cross-entropy of logits (B, K) against integer labels (B).");
    nn.def(
        "cross_entropy",
        [](ArrayLike logits, ArrayLike labels) {
            return nn::cross_entropy(to_array(logits, "cross_entropy"),
                                     to_array(labels, "cross_entropy"), python_location());
        },
        "logits"_a, "labels"_a);
    nn.def(
        "count_correct",
        [](ArrayLike logits, ArrayLike labels) {
            return nn::count_correct(to_array(logits, "count_correct"),
                                     to_array(labels, "count_correct"), python_location());
        },
        "logits"_a, "labels"_a);
    nn.def(
        "dropout",
        [](ArrayLike x, double p, OptionalArrayLike seed, bool training) {
            return nn::dropout(to_array(x, "dropout"), p, optional_array(seed, "dropout"), training,
                               python_location());
        },
        "x"_a, "p"_a, "seed"_a = nb::none(), "training"_a = true);
    nn.def(
        "layer_norm",
        [](ArrayLike x, OptionalArrayLike w, OptionalArrayLike b, double eps) {
            return nn::layer_norm(to_array(x, "layer_norm"), optional_array(w, "layer_norm"),
                                  optional_array(b, "layer_norm"), eps, python_location());
        },
        "x"_a, "weight"_a = nb::none(), "bias"_a = nb::none(), "eps"_a = 1e-5);
    nn.def(
        "gelu", [](ArrayLike x) { return nn::gelu(to_array(x, "gelu"), python_location()); },
        "x"_a);
    nn.def(
        "embedding",
        [](ArrayLike i, ArrayLike t) {
            return nn::embedding(to_array(i, "embedding"), to_array(t, "embedding"),
                                 python_location());
        },
        "indices"_a, "table"_a);
    nn.def(
        "causal_self_attention",
        [](ArrayLike x, ArrayLike w_qkv, OptionalArrayLike b_qkv, ArrayLike w_proj,
           OptionalArrayLike b_proj, std::int64_t heads) {
            const char* op = "causal_self_attention";
            return nn::causal_self_attention(to_array(x, op), to_array(w_qkv, op),
                                             optional_array(b_qkv, op), to_array(w_proj, op),
                                             optional_array(b_proj, op), heads, python_location());
        },
        "x"_a, "w_qkv"_a, nb::arg("b_qkv").none(), "w_proj"_a, nb::arg("b_proj").none(), "heads"_a,
        "nanoGPT's CausalSelfAttention (no dropout) of x (B, T, C).");
    nn.def(
        "clip_grad_norm",
        [](ArraySequence grads, double max_norm) {
            nn::ClippedGradients c =
                nn::clip_grad_norm(to_arrays(grads, "clip_grad_norm"), max_norm);
            return ClippedTuple(nb::make_tuple(to_array_list(c.grads), c.total_norm));
        },
        "grads"_a, "max_norm"_a,
        "(clipped gradients, total norm before clipping), PyTorch's clip_grad_norm_ as arrays.");
}

void bind_gpt(nb::module_& nn) {
    nb::class_<nn::GptConfig>(nn, "GptConfig", "nanoGPT's model sizes.")
        .def(
            "__init__",
            [](nn::GptConfig* c, std::int64_t vocab, std::int64_t block, std::int64_t layers,
               std::int64_t heads, std::int64_t embd,
               bool bias) { new (c) nn::GptConfig{vocab, block, layers, heads, embd, bias}; },
            "vocab"_a = 84, "block"_a = 64, "layers"_a = 4, "heads"_a = 4, "embd"_a = 128,
            "bias"_a = true)
        .def_rw("vocab", &nn::GptConfig::vocab)
        .def_rw("block", &nn::GptConfig::block)
        .def_rw("layers", &nn::GptConfig::layers)
        .def_rw("heads", &nn::GptConfig::heads)
        .def_rw("embd", &nn::GptConfig::embd)
        .def_rw("bias", &nn::GptConfig::bias);
    nn.def(
        "gpt_parameters",
        [](const nn::GptConfig& config) {
            nb::list out;
            for (const nn::GptParameter& p : nn::gpt_parameters(config))
                out.append(nb::make_tuple(p.name, p.shape, p.decay));
            return GptParameterList(std::move(out));
        },
        "config"_a, "(name, shape, decay) per parameter, in nanoGPT's order.");
    nn.def(
        "gpt_logits",
        [](const nn::GptConfig& config, ArraySequence params, ArrayLike tokens) {
            return nn::gpt_logits(config, to_arrays(params, "gpt_logits"),
                                  to_array(tokens, "gpt_logits"));
        },
        "config"_a, "params"_a, "tokens"_a);
    nn.def(
        "gpt_loss",
        [](const nn::GptConfig& config, ArraySequence params, ArrayLike tokens, ArrayLike targets) {
            return nn::gpt_loss(config, to_arrays(params, "gpt_loss"), to_array(tokens, "gpt_loss"),
                                to_array(targets, "gpt_loss"));
        },
        "config"_a, "params"_a, "tokens"_a, "targets"_a);
    nn.def(
        "gpt_init",
        [](const nn::GptConfig& config, std::uint64_t seed) {
            return to_numpy_list(nn::gpt_init(config, seed));
        },
        "config"_a, "seed"_a, "nanoGPT's initialization from hedra's generator.");
    nb::class_<nn::GptGenerator>(
        nn, "GptGenerator",
        "Text generation with a key-value cache: each new token is one cached decoding step; two "
        "programs are compiled once, for every position.")
        .def(
            "__init__",
            [](nn::GptGenerator* g, const nn::GptConfig& config, ArraySequence params,
               std::int64_t batch, const std::string& backend, int num_threads) {
                ComputeOptions options;
                options.backend = backend;
                options.num_threads = num_threads;
                new (g) nn::GptGenerator(config, to_host_arrays(params), batch, options);
            },
            "config"_a, "params"_a, "batch"_a = 1, "backend"_a = "", "num_threads"_a = 0)
        .def(
            "generate",
            [](nn::GptGenerator& g, const std::vector<std::vector<std::int64_t>>& prompt,
               std::int64_t count, double temperature, std::int64_t top_k, std::uint64_t seed) {
                return g.generate(prompt, count, nn::SamplingOptions{temperature, top_k, seed});
            },
            "prompt"_a, "count"_a, "temperature"_a = 0.0, "top_k"_a = 0, "seed"_a = 0,
            "Feeds each row of `prompt` (batch rows of equal length), then appends `count` tokens "
            "to each: greedy at temperature 0, else sampled (top_k > 0: among the k most likely) "
            "from a generator seeded with `seed`. Returns the new tokens, one list per row.")
        .def_prop_ro(
            "last_logits",
            [](const nn::GptGenerator& g) {
                const std::vector<float>& l = g.last_logits();
                const std::int64_t rows = l.empty() ? 0 : g.batch();
                return to_numpy(HostArray::from(l, {rows, rows ? g.config().vocab : 0}));
            },
            "The logits (batch, vocab) after the last token fed; empty before any.")
        .def_prop_ro("programs_compiled", &nn::GptGenerator::programs_compiled)
        .def_prop_ro("compile_seconds", &nn::GptGenerator::compile_seconds);
}

void bind_optimizers(nb::module_& nn) {
    nb::class_<nn::Optimizer>(nn, "Optimizer")
        .def_prop_ro("name", &nn::Optimizer::name)
        .def_prop_ro("lr", &nn::Optimizer::learning_rate);
    nb::class_<nn::Sgd, nn::Optimizer>(nn, "SGD", "torch.optim.SGD's rule.")
        .def(
            "__init__",
            [](nn::Sgd* o, double lr, double momentum, double weight_decay, bool nesterov) {
                new (o) nn::Sgd(nn::SgdOptions{lr, momentum, weight_decay, nesterov});
            },
            "lr"_a = 0.01, "momentum"_a = 0.0, "weight_decay"_a = 0.0, "nesterov"_a = false);
    nb::class_<nn::Adam, nn::Optimizer>(nn, "Adam", "torch.optim.Adam's rule.")
        .def(
            "__init__",
            [](nn::Adam* o, double lr, double beta1, double beta2, double eps, double wd) {
                new (o) nn::Adam(nn::AdamOptions{lr, beta1, beta2, eps, wd});
            },
            "lr"_a = 1e-3, "beta1"_a = 0.9, "beta2"_a = 0.999, "eps"_a = 1e-8,
            "weight_decay"_a = 0.0);
    nb::class_<nn::AdamW, nn::Optimizer>(nn, "AdamW", "torch.optim.AdamW's rule.")
        .def(
            "__init__",
            [](nn::AdamW* o, double lr, double beta1, double beta2, double eps, double wd,
               std::vector<bool> decay_mask) {
                new (o)
                    nn::AdamW(nn::AdamWOptions{lr, beta1, beta2, eps, wd, std::move(decay_mask)});
            },
            "lr"_a = 1e-3, "beta1"_a = 0.9, "beta2"_a = 0.999, "eps"_a = 1e-8,
            "weight_decay"_a = 1e-2, "decay_mask"_a = std::vector<bool>{});
}

nn::ForwardFunction python_forward(ForwardCallable f) {
    return [f](const std::vector<Array>& params, const Array& x) {
        nb::gil_scoped_acquire gil;
        return to_array(call_python(f, to_array_list(params), nb::cast(x)), "forward");
    };
}

void bind_models(nb::module_& nn) {
    nb::class_<nn::Model>(nn, "Model", "Named parameters and a forward function to logits.")
        .def(
            "__init__",
            [](nn::Model* m, std::vector<std::string> names, ArraySequence params,
               ForwardCallable forward, std::vector<std::int64_t> example_shape) {
                new (m) nn::Model{std::move(names), to_host_arrays(params), python_forward(forward),
                                  std::move(example_shape)};
            },
            "names"_a, "params"_a, "forward"_a, "example_shape"_a,
            "forward(params, x) returns logits (B, classes) for x (B, example_shape...).")
        .def_ro("names", &nn::Model::names)
        .def_prop_ro("params", [](const nn::Model& m) { return to_numpy_list(m.params); })
        .def_ro("example_shape", &nn::Model::example_shape)
        .def(
            "__call__",
            [](const nn::Model& m, ArrayLike x) {
                std::vector<Array> params;
                for (const HostArray& p : m.params)
                    params.push_back(array(p));
                return m.forward(params, to_array(x, "Model"));
            },
            "x"_a, "The logits for x at the model's parameters (lazy).");
    nn.def("mlp", &nn::mlp, "sizes"_a, "seed"_a,
           "Dense layers sizes[0] -> ... -> sizes[-1], ReLU between, PyTorch's initialisation.");
    nn.def("mnist_cnn", &nn::mnist_cnn, "seed"_a, "c0"_a = 16, "c1"_a = 32, "classes"_a = 10);
    nn.def("lstm_classifier", &nn::lstm_classifier, "steps"_a, "features"_a, "hidden"_a,
           "classes"_a, "seed"_a, "num_layers"_a = 1,
           "examples/mnist_rnn's model: an LSTM (batch_first) over examples (steps, features), "
           "then a linear layer on the last layer's final h; PyTorch's names "
           "('lstm.weight_ih_l0', ..., 'fc.weight', 'fc.bias').");
}

nn::RecurrentMode recurrent_mode(const std::string& mode) {
    if (mode == "rnn_tanh") return nn::RecurrentMode::RnnTanh;
    if (mode == "rnn_relu") return nn::RecurrentMode::RnnRelu;
    if (mode == "lstm") return nn::RecurrentMode::Lstm;
    if (mode == "gru") return nn::RecurrentMode::Gru;
    throw Error("nn.recurrent: unknown mode '" + mode +
                "'; use 'rnn_tanh', 'rnn_relu', 'lstm' or 'gru' (torch.nn.RNN/LSTM/GRU)");
}

nn::RecurrentConfig recurrent_config(const std::string& mode, std::int64_t input_size,
                                     std::int64_t hidden_size, std::int64_t num_layers, bool bias,
                                     bool batch_first, bool bidirectional) {
    return {recurrent_mode(mode), input_size,   hidden_size, num_layers, bias,
            batch_first,          bidirectional};
}

// torch.nn.RNN/LSTM/GRU on hd.scan (nn/recurrent.hpp): parameters by PyTorch's names and
// layouts, its initialisation, and the forward pass of the whole stack.
void bind_recurrent(nb::module_& nn) {
    nn.def(
        "recurrent_parameters",
        [](const std::string& mode, std::int64_t input_size, std::int64_t hidden_size,
           std::int64_t num_layers, bool bias, bool bidirectional) {
            std::vector<std::pair<std::string, std::vector<std::int64_t>>> out;
            for (const nn::RecurrentParameter& p : nn::recurrent_parameters(recurrent_config(
                     mode, input_size, hidden_size, num_layers, bias, false, bidirectional)))
                out.emplace_back(p.name, p.shape);
            return out;
        },
        "mode"_a, "input_size"_a, "hidden_size"_a, "num_layers"_a = 1, "bias"_a = true,
        "bidirectional"_a = false,
        "[(name, shape)] in torch.nn.RNN/LSTM/GRU's named_parameters() order.");
    nn.def(
        "recurrent_init",
        [](const std::string& mode, std::int64_t input_size, std::int64_t hidden_size,
           std::uint64_t seed, std::int64_t num_layers, bool bias, bool bidirectional) {
            return to_numpy_list(
                nn::recurrent_init(recurrent_config(mode, input_size, hidden_size, num_layers, bias,
                                                    false, bidirectional),
                                   seed));
        },
        "mode"_a, "input_size"_a, "hidden_size"_a, "seed"_a, "num_layers"_a = 1, "bias"_a = true,
        "bidirectional"_a = false, "PyTorch's default U(+-1/sqrt(H)) from hedra's generator.");
    nn.def(
        "recurrent",
        [](const std::string& mode, ArraySequence params, ArrayLike x, std::int64_t input_size,
           std::int64_t hidden_size, std::int64_t num_layers, bool bias, bool batch_first,
           bool bidirectional, std::optional<ArrayLike> h0, std::optional<ArrayLike> c0) {
            nn::RecurrentResult r =
                nn::recurrent(recurrent_config(mode, input_size, hidden_size, num_layers, bias,
                                               batch_first, bidirectional),
                              to_arrays(params, "nn.recurrent"), to_array(x, "nn.recurrent"),
                              h0 ? to_array(*h0, "nn.recurrent") : Array(),
                              c0 ? to_array(*c0, "nn.recurrent") : Array(), python_location());
            return nb::make_tuple(r.output, r.h, r.c.valid() ? nb::cast(r.c) : nb::none());
        },
        "mode"_a, "params"_a, "x"_a, "input_size"_a, "hidden_size"_a, "num_layers"_a = 1,
        "bias"_a = true, "batch_first"_a = false, "bidirectional"_a = false, "h0"_a = nb::none(),
        "c0"_a = nb::none(),
        "torch.nn.RNN/LSTM/GRU's forward on x (T, B, I), or (B, T, I) with batch_first: "
        "(output, h, c), c None but for 'lstm'. One scan per layer and direction.");
}

} // namespace

void bind_nn(nb::module_& m) {
    nb::module_ nn = m.def_submodule("nn", "Layers, optimizers, training steps, checkpoints.");
    bind_layers(nn);
    bind_recurrent(nn);
    bind_optimizers(nn);
    bind_models(nn);
    bind_gpt(nn);
    bind_training(nn);
    bind_nn_io(nn);
}

} // namespace hedra::python

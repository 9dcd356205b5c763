// gpt_char's data: the text (or an export's token stream) as ids split for training and
// validation, the batches cut from it, and what a replay of a PyTorch export (gpt_torch.py
// --export DIR) takes from DIR: initial weights, batch and evaluation offsets, learning rates,
// PyTorch's losses and evaluations.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/host_array.hpp"
#include "nn/gpt.hpp"

namespace hedra::examples::gpt_char {

// The text as character ids: vocabulary = sorted set of its bytes (id = rank), the first
// (9 n) / 10 characters for training and the rest for validation, as gpt_torch.py splits it.
// A replay of a synthetic stream (gpt_torch.py --vocab N) has token ids and no characters.
struct Corpus {
    std::vector<unsigned char> vocab; // empty for a synthetic stream
    std::int64_t vocab_size = 0;
    std::vector<std::int64_t> train, val;
    bool synthetic() const { return vocab.empty(); }
};

// The text at `path`, as character ids.
Corpus load_corpus(const std::string& path);
// An export's synthetic token stream (tokens.npy, ids below config.json's vocab_size), split as
// a text is.
Corpus load_token_corpus(const std::string& dir);
// DIR/name.
std::string dir_file(const std::string& dir, const std::string& name);

// Rows of batch offsets (each row: a batch's starting positions).
using Offsets = std::vector<std::vector<std::int64_t>>;

// `rows` rows of `batch` offsets drawn uniformly from [0, high).
Offsets random_offsets(std::mt19937_64& engine, std::int64_t rows, std::int64_t batch,
                       std::int64_t high);

// What a run takes from the outside: initial weights, offsets, learning rates and, in replay
// mode, PyTorch's losses and evaluations.
struct Plan {
    std::vector<HostArray> init;
    Offsets train, eval_val, eval_train;
    std::vector<double> lrs;
    std::vector<double> ref_losses;
    nlohmann::json ref_evals;          // [{"step", "train", "val"}, ...]
    std::string ref_precision = "f32"; // PyTorch's: "bf16" under its autocast
};

// A replay's plan from the export DIR, whose vocabulary must be the corpus's.
Plan replay_plan(const std::string& dir, const nn::GptConfig& cfg, std::int64_t batch,
                 const Corpus& c);

// The batch at offsets `row` of `split`: tokens (rows, T) and targets, the tokens shifted by one.
std::vector<HostArray> batch_of(const std::vector<std::int64_t>& split,
                                const std::vector<std::int64_t>& row, std::int64_t T);

} // namespace hedra::examples::gpt_char

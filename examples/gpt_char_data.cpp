// gpt_char's data (see gpt_char_data.hpp).
#include "gpt_char_data.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <sstream>

#include "core/error.hpp"
#include "core/shape.hpp"
#include "nn/io/npy_reader.hpp"

namespace hedra::examples::gpt_char {
namespace {

Offsets offsets_from(const HostArray& a, const std::string& name, std::int64_t batch) {
    if (a.dtype() != DType::I64 || a.rank() != 2 || a.sizes()[1] != batch)
        throw Error(name + " must be int64 (rows, " + std::to_string(batch) + ")");
    auto v = a.values<std::int64_t>();
    Offsets out(static_cast<std::size_t>(a.sizes()[0]));
    for (std::size_t r = 0; r < out.size(); ++r)
        out[r].assign(v.begin() + long(r * batch), v.begin() + long((r + 1) * batch));
    return out;
}

void check_replay_vocabulary(const std::string& dir, const Corpus& c) {
    if (c.synthetic()) return; // its ids are the export's own
    std::ifstream in(dir_file(dir, "vocab.txt"));
    if (!in) throw Error("--replay " + dir + ": no vocab.txt");
    std::vector<unsigned char> vocab;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream s(line);
        long id = 0, code = 0;
        if (s >> id >> code) vocab.push_back(static_cast<unsigned char>(code));
    }
    if (vocab != c.vocab)
        throw Error("--replay " + dir + ": its vocabulary (" + std::to_string(vocab.size()) +
                    " characters) differs from the text's (" + std::to_string(c.vocab.size()) +
                    "); pass the --data it was exported from");
}

HostArray batch_array(const std::vector<std::int64_t>& split, const std::vector<std::int64_t>& row,
                      std::int64_t T, std::int64_t shift) {
    std::vector<std::int64_t> v;
    const auto rows = static_cast<std::int64_t>(row.size());
    v.reserve(std::size_t(rows * T));
    for (std::int64_t o : row) {
        if (o < 0 || o + T + 1 > std::int64_t(split.size()))
            throw Error("batch offset " + std::to_string(o) + " is outside the split of " +
                        std::to_string(split.size()) + " characters");
        for (std::int64_t t = 0; t < T; ++t)
            v.push_back(split[std::size_t(o + t + shift)]);
    }
    return HostArray::from(std::move(v), {rows, T});
}

} // namespace

Corpus load_corpus(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error("cannot open the text " + path +
                    " (run scripts/get_shakespeare.sh, or pass --data FILE)");
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::vector<bool> seen(256, false);
    for (char c : text)
        seen[static_cast<unsigned char>(c)] = true;
    Corpus c;
    std::vector<std::int64_t> id(256, -1);
    for (int b = 0; b < 256; ++b)
        if (seen[std::size_t(b)]) {
            id[std::size_t(b)] = std::int64_t(c.vocab.size());
            c.vocab.push_back(static_cast<unsigned char>(b));
        }
    c.vocab_size = std::int64_t(c.vocab.size());
    const std::size_t n_train = (9 * text.size()) / 10;
    for (std::size_t i = 0; i < text.size(); ++i)
        (i < n_train ? c.train : c.val).push_back(id[static_cast<unsigned char>(text[i])]);
    if (std::int64_t(c.val.size()) < 66)
        throw Error("the text " + path + " is too short: " + std::to_string(text.size()) +
                    " characters");
    return c;
}

std::string dir_file(const std::string& dir, const std::string& name) {
    return (std::filesystem::path(dir) / name).string();
}

// An export's synthetic token stream (tokens.npy, ids below config.json's vocab_size), split as
// a text is.
Corpus load_token_corpus(const std::string& dir) {
    std::ifstream in(dir_file(dir, "config.json"));
    if (!in) throw Error("--replay " + dir + ": no config.json");
    Corpus c;
    c.vocab_size = nlohmann::json::parse(in).value("vocab_size", std::int64_t{0});
    const HostArray tokens = nn::read_npy(dir_file(dir, "tokens.npy"));
    if (tokens.dtype() != DType::I64 || tokens.sizes().size() != 1 || c.vocab_size < 2)
        throw Error("--replay " + dir +
                    ": tokens.npy must be a 1-D int64 stream and config.json's "
                    "vocab_size at least 2");
    const std::span<const std::int64_t> ids = tokens.values<std::int64_t>();
    const std::size_t n = std::size_t(tokens.size()), n_train = (9 * n) / 10;
    for (std::size_t i = 0; i < n; ++i) {
        if (ids[i] < 0 || ids[i] >= c.vocab_size)
            throw Error("--replay " + dir + ": tokens.npy holds id " + std::to_string(ids[i]) +
                        " outside the vocabulary of " + std::to_string(c.vocab_size));
        (i < n_train ? c.train : c.val).push_back(ids[i]);
    }
    return c;
}

Offsets random_offsets(std::mt19937_64& engine, std::int64_t rows, std::int64_t batch,
                       std::int64_t high) {
    std::uniform_int_distribution<std::int64_t> pick(0, high - 1); // [0, high), as numpy's
    Offsets out(static_cast<std::size_t>(rows), std::vector<std::int64_t>(batch));
    for (auto& row : out)
        for (auto& o : row)
            o = pick(engine);
    return out;
}

Plan replay_plan(const std::string& dir, const nn::GptConfig& cfg, std::int64_t batch,
                 const Corpus& c) {
    check_replay_vocabulary(dir, c);
    Plan p;
    for (const nn::GptParameter& spec : nn::gpt_parameters(cfg)) {
        HostArray w = nn::read_npy(dir_file(dir, spec.name + ".npy"));
        if (w.dtype() != DType::F32 || w.sizes() != spec.shape)
            throw Error("--replay " + dir + ": " + spec.name + ".npy must be f32 " +
                        Shape::of(spec.shape).to_string());
        p.init.push_back(w);
    }
    p.train = offsets_from(nn::read_npy(dir_file(dir, "offsets.npy")), "offsets.npy", batch);
    p.eval_val = offsets_from(nn::read_npy(dir_file(dir, "eval_val_offsets.npy")),
                              "eval_val_offsets.npy", batch);
    p.eval_train = offsets_from(nn::read_npy(dir_file(dir, "eval_train_offsets.npy")),
                                "eval_train_offsets.npy", batch);
    p.lrs = nn::read_npy(dir_file(dir, "lr.npy")).to_doubles();
    if (std::filesystem::exists(dir_file(dir, "losses.npy")))
        p.ref_losses = nn::read_npy(dir_file(dir, "losses.npy")).to_doubles();
    if (std::ifstream e(dir_file(dir, "evals.json")); e) p.ref_evals = nlohmann::json::parse(e);
    if (std::ifstream c(dir_file(dir, "config.json")); c) {
        const nlohmann::json config = nlohmann::json::parse(c);
        if (config.value("autocast", std::string("none")) == "bf16") p.ref_precision = "bf16";
    }
    return p;
}

std::vector<HostArray> batch_of(const std::vector<std::int64_t>& split,
                                const std::vector<std::int64_t>& row, std::int64_t T) {
    return {batch_array(split, row, T, 0), batch_array(split, row, T, 1)};
}

} // namespace hedra::examples::gpt_char

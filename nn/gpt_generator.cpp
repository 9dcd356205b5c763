// Generation with a key-value cache (see gpt_generator.hpp).
#include "nn/gpt_generator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "core/array.hpp"
#include "core/error.hpp"
#include "core/range.hpp"
#include "nn/gpt_decode.hpp"

namespace hedra::nn {

GptGenerator::GptGenerator(GptConfig config, std::vector<HostArray> params, std::int64_t batch,
                           ComputeOptions options)
    : config_(config), params_(std::move(params)), batch_(batch), options_(std::move(options)) {
    std::vector<GptParameter> spec = gpt_parameters(config_);
    if (params_.size() != spec.size())
        throw Error("GptGenerator: expected " + std::to_string(spec.size()) +
                    " parameters (gpt_parameters), got " + std::to_string(params_.size()));
    for (std::size_t i = 0; i < spec.size(); ++i)
        if (params_[i].sizes() != spec[i].shape || params_[i].dtype() != DType::F32)
            throw Error("GptGenerator: parameter " + spec[i].name + " must be f32 " +
                        Shape::of(spec[i].shape).to_string() + ", got " +
                        std::string(dtype_name(params_[i].dtype())) + " " +
                        Shape::of(params_[i].sizes()).to_string());
    if (batch_ < 1)
        throw Error("GptGenerator: the batch must be at least 1, got " + std::to_string(batch));
    const std::int64_t d = config_.embd / config_.heads;
    const auto rows = static_cast<std::size_t>(config_.block * batch_ * config_.heads * d);
    for (std::int64_t l = 0; l < config_.layers; ++l) {
        keys_.push_back(std::make_shared<std::vector<float>>(rows));
        values_.push_back(std::make_shared<std::vector<float>>(rows));
    }
}

void GptGenerator::feed(const std::vector<std::int64_t>& tokens) {
    const std::int64_t heads = config_.heads, d = config_.embd / config_.heads;
    const bool first = length_ == 0;
    std::optional<CompiledProgram>& program = first ? first_ : next_;
    if (!program) {
        const auto start = std::chrono::steady_clock::now();
        std::vector<Array> ps;
        for (const GptParameter& p : gpt_parameters(config_))
            ps.push_back(placeholder(Shape::of(p.shape), DType::F32, p.name));
        Array tok = placeholder(Shape::of({batch_}), DType::I64, "tokens");
        Array pos = placeholder(Shape{}, DType::I64, "position");
        std::vector<Array> ks, vs, inputs = ps;
        inputs.push_back(tok);
        inputs.push_back(pos);
        if (!first) {
            // One program for every cache length 1 .. block - 1.
            Range length =
                dynamic("gpt_kv_length_" + std::to_string(config_.block), config_.block - 1);
            Shape cache{length, range(batch_), range(heads), range(d)};
            for (std::int64_t l = 0; l < config_.layers; ++l) {
                ks.push_back(placeholder(cache, DType::F32, "keys." + std::to_string(l)));
                vs.push_back(placeholder(cache, DType::F32, "values." + std::to_string(l)));
            }
            inputs.insert(inputs.end(), ks.begin(), ks.end());
            inputs.insert(inputs.end(), vs.begin(), vs.end());
        }
        GptDecodeStep step = gpt_decode_step(config_, ps, tok, pos, ks, vs);
        std::vector<Array> outputs{step.logits};
        outputs.insert(outputs.end(), step.keys.begin(), step.keys.end());
        outputs.insert(outputs.end(), step.values.begin(), step.values.end());
        program.emplace(compile(outputs, inputs, options_));
        compile_seconds_ +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        ++compiled_;
    }
    std::vector<HostArray> in = params_;
    in.push_back(HostArray::from(tokens, {batch_}));
    in.push_back(HostArray::from(std::vector<std::int64_t>{length_}, {}));
    if (!first) {
        // The cache's first length_ rows, read in place.
        std::vector<std::int64_t> sizes{length_, batch_, heads, d};
        for (auto* caches : {&keys_, &values_})
            for (const auto& buffer : *caches)
                in.emplace_back(sizes, DType::F32, buffer, buffer->data());
    }
    std::vector<HostArray> out = (*program)(in);
    auto logits = out[0].values<float>();
    logits_.assign(logits.begin(), logits.end());
    const std::size_t row = static_cast<std::size_t>(batch_ * heads * d);
    const auto layers = static_cast<std::size_t>(config_.layers);
    for (std::size_t l = 0; l < layers; ++l) {
        std::memcpy(keys_[l]->data() + static_cast<std::size_t>(length_) * row,
                    out[1 + l].values<float>().data(), row * sizeof(float));
        std::memcpy(values_[l]->data() + static_cast<std::size_t>(length_) * row,
                    out[1 + layers + l].values<float>().data(), row * sizeof(float));
    }
    ++length_;
}

std::int64_t GptGenerator::choose(const float* logits, const SamplingOptions& s,
                                  std::mt19937_64& engine) {
    const std::int64_t v = config_.vocab;
    if (s.temperature <= 0.0) return std::max_element(logits, logits + v) - logits;
    std::vector<double> z(logits, logits + v);
    double cut = -INFINITY;
    if (s.top_k > 0 && s.top_k < v) {
        std::vector<double> sorted = z;
        std::nth_element(sorted.begin(), sorted.begin() + (s.top_k - 1), sorted.end(),
                         std::greater<>());
        cut = sorted[static_cast<std::size_t>(s.top_k - 1)];
    }
    const double top = *std::max_element(z.begin(), z.end());
    double total = 0;
    for (double& x : z) {
        x = x < cut ? 0.0 : std::exp((x - top) / s.temperature);
        total += x;
    }
    double u = std::uniform_real_distribution<double>(0.0, total)(engine);
    for (std::int64_t i = 0; i < v; ++i) {
        u -= z[static_cast<std::size_t>(i)];
        if (u < 0 && z[static_cast<std::size_t>(i)] > 0) return i;
    }
    for (std::int64_t i = v; i-- > 0;) // rounding left u at the end: the last kept token
        if (z[static_cast<std::size_t>(i)] > 0) return i;
    return 0;
}

std::vector<std::vector<std::int64_t>>
GptGenerator::generate(const std::vector<std::vector<std::int64_t>>& prompt, std::int64_t count,
                       const SamplingOptions& sampling) {
    if (static_cast<std::int64_t>(prompt.size()) != batch_ || prompt.empty() || prompt[0].empty())
        throw Error("GptGenerator::generate: the prompt needs " + std::to_string(batch_) +
                    " rows (the batch) of at least one token, got " +
                    std::to_string(prompt.size()) + " rows");
    const std::size_t n = prompt[0].size();
    for (const auto& row : prompt) {
        if (row.size() != n)
            throw Error("GptGenerator::generate: every prompt row needs the same length; found " +
                        std::to_string(n) + " and " + std::to_string(row.size()));
        for (std::int64_t t : row)
            if (t < 0 || t >= config_.vocab)
                throw Error("GptGenerator::generate: token " + std::to_string(t) +
                            " is outside the vocabulary [0, " + std::to_string(config_.vocab) +
                            ")");
    }
    if (count < 0 || static_cast<std::int64_t>(n) + count > config_.block)
        throw Error("GptGenerator::generate: a prompt of " + std::to_string(n) + " tokens and " +
                    std::to_string(count) + " new ones exceed the context of " +
                    std::to_string(config_.block) + " positions; ask for at most " +
                    std::to_string(config_.block - static_cast<std::int64_t>(n)));
    if (sampling.temperature < 0 || sampling.top_k < 0)
        throw Error("GptGenerator::generate: temperature and top_k must not be negative");
    length_ = 0;
    std::vector<std::int64_t> column(static_cast<std::size_t>(batch_));
    for (std::size_t t = 0; t < n; ++t) {
        for (std::size_t b = 0; b < prompt.size(); ++b)
            column[b] = prompt[b][t];
        feed(column);
    }
    std::mt19937_64 engine(sampling.seed);
    std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(batch_));
    for (std::int64_t i = 0; i < count; ++i) {
        for (std::size_t b = 0; b < out.size(); ++b) {
            column[b] = choose(logits_.data() + b * static_cast<std::size_t>(config_.vocab),
                               sampling, engine);
            out[b].push_back(column[b]);
        }
        if (i + 1 < count) feed(column);
    }
    return out;
}

} // namespace hedra::nn

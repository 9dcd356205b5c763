// GPT generation with a key-value cache: each decoding step's logits equal the full causal
// forward's at that position; greedy generation equals a loop that recomputes the whole
// context per token; two programs serve every position; sampling repeats with its seed.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/expect_error.hpp"
#include "hedra.hpp"
#include "nn/gpt.hpp"
#include "nn/gpt_generator.hpp"

using namespace hedra;

namespace {

nn::GptConfig tiny() {
    return {.vocab = 11, .block = 8, .layers = 2, .heads = 2, .embd = 16, .bias = true};
}

// Logits (T, vocab) of one sequence by the full forward.
std::vector<float> full_logits(const nn::GptConfig& c, const std::vector<HostArray>& params,
                               const std::vector<std::int64_t>& tokens) {
    std::vector<Array> ps;
    for (const HostArray& p : params)
        ps.push_back(array(p));
    auto t = static_cast<std::int64_t>(tokens.size());
    HostArray h = compute(nn::gpt_logits(c, ps, array(tokens, Shape::of({1, t}))));
    auto v = h.values<float>();
    return {v.begin(), v.end()};
}

} // namespace

TEST_CASE("gpt generation: a cached step's logits are the full forward's at that position") {
    nn::GptConfig c = tiny();
    std::vector<HostArray> params = nn::gpt_init(c, 3);
    std::vector<std::int64_t> tokens{4, 1, 9, 9, 0, 7, 2};
    std::vector<float> full = full_logits(c, params, tokens);
    nn::GptGenerator g(c, params);
    for (std::size_t t = 0; t < tokens.size(); ++t) {
        CAPTURE(t);
        std::vector<std::int64_t> prefix(tokens.begin(), tokens.begin() + long(t + 1));
        g.generate({prefix}, 0);
        const std::vector<float>& got = g.last_logits();
        REQUIRE(got.size() == static_cast<std::size_t>(c.vocab));
        for (std::int64_t v = 0; v < c.vocab; ++v)
            CHECK(got[std::size_t(v)] ==
                  doctest::Approx(full[t * std::size_t(c.vocab) + std::size_t(v)]).epsilon(1e-5));
    }
    CHECK(g.programs_compiled() == 2); // the first position's and every later one's
}

TEST_CASE("gpt generation: greedy tokens equal recomputing the whole context per token") {
    nn::GptConfig c = tiny();
    std::vector<HostArray> params = nn::gpt_init(c, 5);
    std::vector<std::vector<std::int64_t>> prompt{{1, 2}, {10, 0}};
    nn::GptGenerator g(c, params, 2);
    std::vector<std::vector<std::int64_t>> got = g.generate(prompt, 6);
    for (std::size_t b = 0; b < prompt.size(); ++b) {
        std::vector<std::int64_t> context = prompt[b];
        for (int i = 0; i < 6; ++i) {
            std::vector<float> l = full_logits(c, params, context);
            auto last = l.begin() + long((context.size() - 1) * std::size_t(c.vocab));
            context.push_back(std::max_element(last, last + c.vocab) - last);
        }
        CHECK(std::vector<std::int64_t>(context.begin() + 2, context.end()) == got[b]);
    }
    CHECK(g.programs_compiled() == 2);
}

TEST_CASE("gpt generation: sampling repeats with its seed; top-1 is greedy") {
    nn::GptConfig c = tiny();
    std::vector<HostArray> params = nn::gpt_init(c, 7);
    nn::GptGenerator g(c, params);
    nn::SamplingOptions s{.temperature = 1.5, .top_k = 0, .seed = 42};
    auto a = g.generate({{3}}, 7, s), b = g.generate({{3}}, 7, s);
    CHECK(a == b);
    bool differs = false;
    for (std::uint64_t seed = 1; seed < 6 && !differs; ++seed)
        differs = g.generate({{3}}, 7, {.temperature = 1.5, .top_k = 0, .seed = seed}) != a;
    CHECK(differs);
    CHECK(g.generate({{3}}, 7, {.temperature = 1.0, .top_k = 1, .seed = 9}) ==
          g.generate({{3}}, 7));
    auto k3 = g.generate({{3}}, 7, {.temperature = 2.0, .top_k = 3, .seed = 1});
    for (std::int64_t t : k3[0])
        CHECK((t >= 0 && t < c.vocab));
}

TEST_CASE("gpt generation: bad requests name what to do") {
    nn::GptConfig c = tiny();
    nn::GptGenerator g(c, nn::gpt_init(c, 1));
    CHECK_ERROR(g.generate({{1, 2, 3}}, 6), "context of 8", "at most 5");
    CHECK_ERROR(g.generate({{1}, {2}}, 1), "1 rows (the batch)");
    CHECK_ERROR(g.generate({{11}}, 1), "token 11", "[0, 11)");
    CHECK_ERROR(nn::GptGenerator(c, {}), "expected");
}

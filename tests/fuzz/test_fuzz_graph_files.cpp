// Graph files under fuzzing: random programs saved and loaded back compute the same values
// (round trip), and thousands of mutated files (flipped and deleted bytes, swapped numbers,
// truncations) either load as a valid graph, which the reference then evaluates, or throw
// hedra::Error; never another exception, a crash or an out-of-bounds read (run it under
// scripts/sanitize.sh asan). The same loader is a libFuzzer target in libfuzzer/ for clang.
#include <doctest/doctest.h>

#include <cctype>
#include <cstring>
#include <random>

#include "core/graph_file.hpp"
#include "fuzz/lib/fuzz_data.hpp"
#include "fuzz/lib/fuzz_generator.hpp"

using namespace hedra;
using namespace hedra::fuzz;

namespace {

std::vector<HostArray> reference(const std::vector<NodePtr>& outputs) {
    return get_backend("reference")->evaluate(outputs, {});
}

bool same(const HostArray& a, const HostArray& b) {
    if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) return false;
    return std::memcmp(a.raw(), b.raw(), a.bytes()) == 0;
}

// One random edit of the text.
std::string mutate(std::string s, std::mt19937_64& rng) {
    auto at = [&](std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); };
    static const std::vector<std::string> tokens = {"-1",
                                                    "0",
                                                    "1",
                                                    "2",
                                                    "9223372036854775807",
                                                    "-9223372036854775808",
                                                    "1e309",
                                                    "0.5",
                                                    "null",
                                                    "true",
                                                    "[]",
                                                    "{}",
                                                    "\"\"",
                                                    "\"f64\"",
                                                    "\"view\"",
                                                    "\"fuse\"",
                                                    ",",
                                                    "]",
                                                    "}"};
    static const std::vector<std::string> numbers = {
        "-1", "0", "1", "2", "3", "7", "64", "4611686018427387904", "-5", "1e300"};
    if (rng() % 2 == 0) { // replace a whole number: the text stays valid JSON
        std::vector<std::size_t> starts;
        for (std::size_t i = 0; i < s.size(); ++i)
            if ((std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '-') &&
                (i == 0 || !std::isalnum(static_cast<unsigned char>(s[i - 1]))))
                starts.push_back(i);
        if (!starts.empty()) {
            std::size_t i = starts[at(starts.size())], j = i + 1;
            while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.' ||
                                    s[j] == 'e' || s[j] == '-'))
                ++j;
            s.replace(i, j - i, numbers[at(numbers.size())]);
            return s;
        }
    }
    switch (rng() % 6) {
    case 0: // flip a byte
        if (!s.empty()) s[at(s.size())] ^= static_cast<char>(1 + rng() % 127);
        break;
    case 1: { // delete a span
        std::size_t i = at(s.size());
        s.erase(i, 1 + at(16));
        break;
    }
    case 2: { // duplicate a span
        std::size_t i = at(s.size());
        s.insert(i, s.substr(i, 1 + at(32)));
        break;
    }
    case 3: // truncate
        s.resize(at(s.size()));
        break;
    default: { // replace a number or insert a token
        std::size_t i = at(s.size());
        std::size_t j = i;
        while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '-'))
            ++j;
        s.replace(i, j - i, tokens[at(tokens.size())]);
        break;
    }
    }
    return s;
}

// Elements of every node: a mutated size could ask for terabytes.
std::int64_t total_elements(const std::vector<NodePtr>& outputs) {
    std::int64_t n = 0;
    for (const NodePtr& node : topological_order(outputs))
        n += node->shape.size();
    return n;
}

// Every program the generator draws, scans included, can be saved.
Generated generate_savable(std::uint64_t seed) {
    return generate(seed, GeneratorOptions{});
}

} // namespace

TEST_CASE("fuzz: random programs survive a graph-file round trip") {
    int checked = 0;
    for (std::uint64_t seed = 1; seed <= 60; ++seed) {
        FuzzProgram p = generate_savable(seed).program;
        for (Op& op : p.ops)
            op.placeholder = false;
        BuiltProgram b = build(p);
        std::vector<NodePtr> outs;
        for (const Array& a : b.outputs)
            outs.push_back(a.node());
        std::string text = save_graph(outs);
        GraphFile g = load_graph(text, "seed " + std::to_string(seed));
        REQUIRE(g.outputs.size() == outs.size());
        CHECK(g.placeholders.empty());
        std::vector<HostArray> want = reference(outs), got = reference(g.outputs);
        for (std::size_t k = 0; k < want.size(); ++k) {
            CAPTURE(seed);
            CAPTURE(k);
            CHECK(same(got[k], want[k]));
        }
        GraphLoadOptions same_ids;
        same_ids.keep_ids = true; // then the very same nodes, saving to the same bytes
        GraphFile h = load_graph(text, "seed " + std::to_string(seed), same_ids);
        CHECK(h.outputs == outs);
        CHECK(save_graph(h.outputs) == text);
        ++checked;
    }
    CHECK(checked == 60);
}

TEST_CASE("fuzz: mutated graph files load or throw hedra::Error") {
    std::mt19937_64 rng(2024);
    int loaded = 0, rejected = 0, evaluated = 0;
    for (std::uint64_t seed = 100; seed < 180; ++seed) {
        FuzzProgram p = generate_savable(seed).program;
        BuiltProgram b = build(p);
        std::vector<NodePtr> outs;
        for (const Array& a : b.outputs)
            outs.push_back(a.node());
        const std::string text = save_graph(outs, {});
        for (int m = 0; m < 150; ++m) {
            std::string bad = text;
            for (int k = 0, n = 1 + static_cast<int>(rng() % 3); k < n; ++k)
                bad = mutate(bad, rng);
            try {
                GraphFile g = load_graph(bad, "mutant");
                ++loaded;
                if (!g.placeholders.empty() || total_elements(g.outputs) > 200000) continue;
                try {
                    reference(g.outputs);
                    ++evaluated;
                } catch (const Error&) {
                }
            } catch (const Error&) {
                ++rejected;
            } catch (const std::exception& e) {
                FAIL_CHECK("seed " << seed << ", mutant " << m << ": " << typeid(e).name() << ": "
                                   << e.what() << "\n"
                                   << bad);
            }
        }
    }
    MESSAGE("mutants: " << loaded << " loaded (" << evaluated << " evaluated), " << rejected
                        << " rejected");
    CHECK(rejected > 0);
}

// Malformed graph files: each error names the file, the line and column, the entry and what
// is wrong, and nothing malformed reaches a backend.
#include <doctest/doctest.h>

#include "core/expect_error.hpp"
#include "core/graph_file.hpp"
#include "tools/dump_examples.hpp"

using namespace hedra;

namespace {

// A valid file: x (2,3) f32, y = x * 2 viewed transposed, summed over axis 0.
std::string file(const std::string& exprs, const std::string& nodes,
                 const std::string& tail = "\"inputs\": [0], \"outputs\": [3]") {
    return "{\"format\": \"hedra-graph\", \"version\": 1,\n\"exprs\": [" + exprs +
           "],\n\"nodes\": [\n" + nodes + "],\n" + tail + "}";
}

const std::string kExprs = "{\"op\": \"input\", \"dtype\": \"f32\", \"index\": 0}, "
                           "{\"op\": \"const\", \"dtype\": \"f32\", \"value\": 2}, "
                           "{\"op\": \"mul\", \"dtype\": \"f32\", \"args\": [0, 1]}";
const std::string kX =
    "{\"kind\": \"placeholder\", \"dtype\": \"f32\", \"shape\": [[0,1,2],[0,1,3]], \"id\": 9}";
const std::string kMap = "{\"kind\": \"map\", \"dtype\": \"f32\", \"shape\": [[0,1,2],[0,1,3]], "
                         "\"inputs\": [0], \"expr\": 2}";
const std::string kView =
    "{\"kind\": \"view\", \"dtype\": \"f32\", \"shape\": [[0,1,3],[0,1,2]], \"inputs\": [1], "
    "\"access\": {\"matrix\": [[0,1],[1,0]], \"offset\": [0,0]}}";
const std::string kSum =
    "{\"kind\": \"reduce\", \"dtype\": \"f32\", \"shape\": [[0,1,2]], \"inputs\": [2], "
    "\"op\": \"sum\", \"axes\": [0], \"keepdims\": false}";

std::string nodes(const std::string& x, const std::string& map, const std::string& view,
                  const std::string& sum) {
    return x + ",\n" + map + ",\n" + view + ",\n" + sum + "\n";
}

std::string valid() {
    return file(kExprs, nodes(kX, kMap, kView, kSum));
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
    auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
}

} // namespace

TEST_CASE("graph file errors: the valid base file loads") {
    GraphFile f = load_graph(valid(), "g.json");
    REQUIRE(f.outputs.size() == 1);
    CHECK(f.outputs[0]->shape == Shape::of({2}));
    CHECK(f.placeholders.size() == 1);
}

TEST_CASE("graph file errors: not JSON, not a graph file, wrong version") {
    CHECK_ERROR(load_graph("{\"format\": \"hedra-graph\",\n \"version\" 1}", "m.json"),
                "m.json:2:12:", "expected ':'");
    CHECK_ERROR(load_graph("[1, 2]", "m.json"), "m.json:1:1:", "a graph file is a JSON object");
    CHECK_ERROR(load_graph("{\"format\": \"onnx\"}", "m.json"),
                "m.json:1:12:", "not a hedra graph file");
    CHECK_ERROR(load_graph(replace(valid(), "\"version\": 1", "\"version\": 2"), "m.json"),
                "m.json:1:38:", "unsupported graph file version 2");
    CHECK_ERROR(load_graph(replace(valid(), "\"outputs\": [3]", "\"outputs\": []"), "m.json"),
                "m.json:", "'outputs' is empty");
    CHECK_ERROR(load_graph_file("/nonexistent/graph.json"),
                "cannot open '/nonexistent/graph.json'");
}

TEST_CASE("graph file errors: references, kinds and fields") {
    CHECK_ERROR(
        load_graph(file(kExprs, nodes(kX, replace(kMap, "[0]", "[3]"), kView, kSum)), "r.json"),
        "r.json:5:", "node 1 (map)", "refers to node 3, which is not defined before it");
    CHECK_ERROR(
        load_graph(file(kExprs, nodes(replace(kX, "placeholder", "tensor"), kMap, kView, kSum)),
                   "r.json"),
        "r.json:4:10:", "node 0", "unknown node kind 'tensor'");
    CHECK_ERROR(
        load_graph(file(kExprs, nodes(replace(kX, "\"f32\"", "\"f8\""), kMap, kView, kSum)),
                   "r.json"),
        "r.json:4:", "node 0 (placeholder)", "f8");
    CHECK_ERROR(
        load_graph(file(kExprs, nodes(replace(kX, "[0,1,2]", "[0,0,2]"), kMap, kView, kSum)),
                   "r.json"),
        "r.json:4:", "'step' is 0");
    CHECK_ERROR(load_graph(file(kExprs, nodes(replace(kX, "[0,1,2]", "[0,1]"), kMap, kView, kSum)),
                           "r.json"),
                "a range is [start, step, size]");
    CHECK_ERROR(
        load_graph(file(kExprs, nodes(kX, kMap, kView, replace(kSum, "\"axes\": [0], ", ""))),
                   "r.json"),
        "node 3 (reduce)", "missing member 'axes'");
    CHECK_ERROR(
        load_graph(file(kExprs, nodes(kX, kMap, kView, replace(kSum, "\"sum\"", "\"avg\""))),
                   "r.json"),
        "unknown reduction 'avg'");
    CHECK_ERROR(
        load_graph(replace(valid(), "\"inputs\": [0], \"outputs\"", "\"inputs\": [1], \"outputs\""),
                   "r.json"),
        "input refers to node 1, a map node, not a placeholder");
}

TEST_CASE("graph file errors: semantic checks") {
    // The map reads in0 as f32 but its input is f64.
    CHECK_ERROR(
        load_graph(file(kExprs, nodes(replace(kX, "\"f32\"", "\"f64\""), kMap, kView, kSum)),
                   "s.json"),
        "node 1 (map)", "reads in0 as f32 but that input has dtype f64");
    // A view reading past its input.
    CHECK_ERROR(
        load_graph(
            file(kExprs,
                 nodes(kX, kMap, replace(kView, "\"offset\": [0,0]", "\"offset\": [0,1]"), kSum)),
            "s.json"),
        "node 2 (view)", "of input axis 1, which has 3");
    CHECK_ERROR(
        load_graph(file(kExprs, nodes(kX, kMap, replace(kView, "[[0,1],[1,0]]", "[[0,1]]"), kSum)),
                   "s.json"),
        "'matrix' has 1 rows but the input has rank 2");
    // A reduction whose shape is not its input's minus the axes.
    CHECK_ERROR(
        load_graph(file(kExprs, nodes(kX, kMap, kView, replace(kSum, "[[0,1,2]]", "[[0,1,3]]"))),
                   "s.json"),
        "node 3 (reduce)", "gives shape (2), not (3)");
    // A map of the wrong shape.
    CHECK_ERROR(
        load_graph(file(kExprs, nodes(kX, replace(kMap, "[[0,1,2],[0,1,3]]", "[[0,1,3],[0,1,2]]"),
                                      kView, kSum)),
                   "s.json"),
        "input 0 has shape (2,3) but the map has shape (3,2)");
    // Expressions: unknown op, arity, a cast the constructor would insert, declared dtype.
    CHECK_ERROR(
        load_graph(file(replace(kExprs, "\"mul\"", "\"fma\""), nodes(kX, kMap, kView, kSum)),
                   "e.json"),
        "e.json:2:", "expr 2", "unknown scalar operation 'fma'");
    CHECK_ERROR(
        load_graph(file(replace(kExprs, "[0, 1]", "[0]"), nodes(kX, kMap, kView, kSum)), "e.json"),
        "expr 2", "'mul' takes 2 arguments, found 1");
    CHECK_ERROR(load_graph(file(replace(kExprs, "\"value\": 2}",
                                        "\"value\": 2}, {\"op\": \"lt\", "
                                        "\"dtype\": \"f32\", \"args\": [0, 1]}"),
                                nodes(kX, kMap, kView, kSum)),
                           "e.json"),
                "expr 2", "declared dtype f32 but 'lt' of these arguments has dtype bool");
    CHECK_ERROR(load_graph(file(replace(kExprs, "\"dtype\": \"f32\", \"value\": 2",
                                        "\"dtype\": \"i32\", \"value\": 2"),
                                nodes(kX, kMap, kView, kSum)),
                           "e.json"),
                "need an explicit cast");
    CHECK_ERROR(load_graph(file(replace(kExprs, "\"value\": 2", "\"value\": \"two\""),
                                nodes(kX, kMap, kView, kSum)),
                           "e.json"),
                "'value' must be a number");
}

TEST_CASE("graph file errors: host data") {
    std::string data =
        "{\"kind\": \"data\", \"dtype\": \"f32\", \"shape\": [[0,1,2],[0,1,3]], \"id\": 4, "
        "\"data\": \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}";
    CHECK(load_graph(file(kExprs, nodes(data, kMap, kView, kSum), "\"outputs\": [3]"), "d.json")
              .placeholders.empty());
    CHECK_ERROR(
        load_graph(file(kExprs, nodes(replace(data, "AAAAAAAA\"", "AAAA\""), kMap, kView, kSum),
                        "\"outputs\": [3]"),
                   "d.json"),
        "d.json:4:", "'data' holds 21 bytes but f32 (2,3) needs 24");
    CHECK_ERROR(
        load_graph(file(kExprs, nodes(replace(data, "AAAAAAAA\"", "AAA*AAAA\""), kMap, kView, kSum),
                        "\"outputs\": [3]"),
                   "d.json"),
        "'data' is not valid base64");
}

namespace {

// Damages `text` at random `trials` times (1-3 edits each): every load must either succeed or
// throw hedra::Error naming the file, never crash or report an internal error.
void check_random_damage(const std::string& text, int trials) {
    std::uint64_t state = 12345;
    auto next = [&] {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<std::size_t>(state >> 33);
    };
    const std::string alphabet = "{}[],:\"0123456789-.eatrufnl xyz";
    int rejected = 0;
    for (int trial = 0; trial < trials; ++trial) {
        std::string damaged = text;
        int edits = 1 + static_cast<int>(next() % 3);
        for (int e = 0; e < edits; ++e) {
            std::size_t at = next() % damaged.size();
            switch (next() % 3) {
            case 0:
                damaged[at] = alphabet[next() % alphabet.size()];
                break;
            case 1:
                damaged.erase(at, 1 + next() % 4);
                break;
            default:
                damaged.insert(at, 1, alphabet[next() % alphabet.size()]);
            }
        }
        try {
            load_graph(damaged, "damaged.json");
        } catch (const Error& e) {
            ++rejected;
            std::string message = e.what();
            CHECK(message.rfind("damaged.json", 0) == 0);
            CHECK(message.find("internal error") == std::string::npos);
        }
    }
    CHECK(rejected > trials / 2);
}

} // namespace

TEST_CASE("graph file errors: random damage never crashes, only throws hedra::Error") {
    check_random_damage(valid(), 2000);
    for (const char* name : {"conv2d", "mlp_step"}) {
        INFO(name);
        tools::ExampleGraph g = tools::find_example(name)->build();
        check_random_damage(save_graph(g.outputs, g.placeholders), 300);
    }
}

TEST_CASE("graph file errors: ranges whose arithmetic would overflow 64 bits") {
    // An end (start + step*size) beyond 2^62, once by the start and once by step*size alone.
    CHECK_ERROR(load_graph(file(kExprs, nodes(replace(kX, "[[0,1,2]", "[[4611686018427387903,1,2]"),
                                              kMap, kView, kSum)),
                           "o.json"),
                "o.json:4:", "node 0 (placeholder)", "ends beyond 2^62");
    CHECK_ERROR(
        load_graph(file(kExprs, nodes(replace(kX, "[[0,1,2]", "[[0,1099511627776,1099511627776]"),
                                      kMap, kView, kSum)),
                   "o.json"),
        "node 0 (placeholder)", "ends beyond 2^62");
    // An element count whose product overflows before it is compared with 2^48.
    CHECK_ERROR(load_graph(file(kExprs, nodes(replace(kX, "[[0,1,2],[0,1,3]]",
                                                      "[[0,1,1099511627776],[0,1,1099511627776]]"),
                                              kMap, kView, kSum)),
                           "o.json"),
                "node 0 (placeholder)", "more than 2^48 elements");
    // Two valid one-element pieces as far apart as allowed: the hull a fuse of them would have,
    // {-2^62, 2^62 - 1}, has no end that fits in 64 bits.
    std::string piece = "{\"kind\": \"placeholder\", \"dtype\": \"f32\", \"shape\": [[START,1,1]]}";
    std::string fuse_file =
        file("",
             replace(piece, "START", "-4611686018427387904") + ",\n" +
                 replace(piece, "START", "4611686018427387903") + ",\n" +
                 "{\"kind\": \"fuse\", \"dtype\": \"f32\", \"shape\": [[0,1,2]], "
                 "\"inputs\": [0, 1], \"overwrite\": OVERWRITE}\n",
             "\"inputs\": [0, 1], \"outputs\": [2]");
    for (const char* overwrite : {"false", "true"}) {
        CAPTURE(overwrite);
        CHECK_ERROR(load_graph(replace(fuse_file, "OVERWRITE", overwrite), "f.json"),
                    "f.json:6:", "node 2 (fuse)", "overflows 64 bits");
    }
}

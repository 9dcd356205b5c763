// Graph files: every test program saved, loaded and computed on the reference backend gives
// the same values, bit for bit; loading with keep_ids in the same process gives back the very
// hash-consed nodes; the text is deterministic; omitted data comes back as placeholders.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/graph_file.hpp"
#include "core/library.hpp"
#include "tools/tool_programs.hpp"

using namespace hedra;
using hedra::test::TestProgram;

namespace {

void check_same_values(const std::vector<HostArray>& got, const std::vector<HostArray>& want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("output " << i);
        REQUIRE(got[i].sizes() == want[i].sizes());
        REQUIRE(got[i].dtype() == want[i].dtype());
        CHECK(std::memcmp(got[i].raw(), want[i].raw(), want[i].bytes()) == 0);
    }
}

std::vector<NodePtr> nodes(const std::vector<Array>& arrays) {
    std::vector<NodePtr> out;
    for (const Array& a : arrays)
        out.push_back(a.node());
    return out;
}

// The host data of the graph in file order (topological), as the loader appends them.
std::vector<HostArray> data_in_file_order(const TestProgram& p) {
    std::vector<NodePtr> roots = nodes(p.graph.outputs);
    for (const Array& a : p.graph.placeholders)
        roots.push_back(a.node());
    std::vector<HostArray> out;
    for (const NodePtr& n : topological_order(roots))
        if (n->kind == NodeKind::Data) out.push_back(n->data);
    return out;
}

} // namespace

TEST_CASE("graph file: round trip of every test program") {
    for (const TestProgram& p : hedra::test::test_programs()) {
        INFO("program " << p.name);
        const auto& g = p.graph;
        std::string text = save_graph(g.outputs, g.placeholders);
        CHECK(save_graph(g.outputs, g.placeholders) == text);
        std::vector<HostArray> want =
            hedra::test::run_reference(g.outputs, g.placeholders, p.inputs);

        // Same process, same identities: the very same nodes, and the same text again.
        GraphLoadOptions keep;
        keep.keep_ids = true;
        GraphFile same = load_graph(text, p.name + ".json", keep);
        CHECK(same.outputs == nodes(g.outputs));
        REQUIRE(same.placeholders.size() >= g.placeholders.size());
        for (std::size_t i = 0; i < g.placeholders.size(); ++i)
            CHECK(same.placeholders[i] == g.placeholders[i].node());
        CHECK(save_graph(same.outputs, same.placeholders) == text);

        // Fresh identities: a new graph of the same structure and the same values.
        GraphFile fresh = load_graph(text, p.name + ".json");
        REQUIRE(fresh.outputs.size() == g.outputs.size());
        REQUIRE(fresh.placeholders.size() == g.placeholders.size());
        for (std::size_t i = 0; i < g.placeholders.size(); ++i) {
            CHECK(fresh.placeholders[i] != g.placeholders[i].node());
            CHECK(fresh.placeholders[i]->name == g.placeholders[i].node()->name);
        }
        for (std::size_t i = 0; i < fresh.outputs.size(); ++i) {
            CHECK(fresh.outputs[i]->hash != 0);
            CHECK(fresh.outputs[i]->shape == g.outputs[i].shape());
            CHECK(fresh.outputs[i]->dtype == g.outputs[i].dtype());
        }
        check_same_values(
            hedra::test::run_reference(fresh.output_arrays(), fresh.placeholder_arrays(), p.inputs),
            want);

        // Without the data: host arrays become trailing placeholders, bound by the caller.
        GraphSaveOptions bare;
        bare.embed_data = false;
        GraphFile omitted = load_graph(save_graph(g.outputs, g.placeholders, bare), p.name);
        std::vector<HostArray> inputs = p.inputs;
        for (const HostArray& d : data_in_file_order(p))
            inputs.push_back(d);
        REQUIRE(omitted.placeholders.size() == inputs.size());
        check_same_values(hedra::test::run_reference(omitted.output_arrays(),
                                                     omitted.placeholder_arrays(), inputs),
                          want);
    }
}

TEST_CASE("graph file: the documented format of a small graph") {
    Array x = placeholder(Shape{range(1, 4)}, DType::F32, "x");
    Array y = sum(x * 2.0);
    std::string text = save_graph({y}, {x});
    CHECK(text.find("\"format\": \"hedra-graph\"") != std::string::npos);
    CHECK(text.find("\"version\": 1") != std::string::npos);
    CHECK(text.find("{\"kind\": \"placeholder\", \"dtype\": \"f32\", \"shape\": [[1, 1, 3]], ") !=
          std::string::npos);
    CHECK(text.find("\"name\": \"x\"") != std::string::npos);
    CHECK(text.find("{\"op\": \"const\", \"dtype\": \"f32\", \"value\": 2}") != std::string::npos);
    CHECK(text.find("\"op\": \"sum\", \"axes\": [0], \"keepdims\": false") != std::string::npos);
    CHECK(text.find("\"inputs\": [0]") != std::string::npos);
}

TEST_CASE("graph file: files on disk, and a hand-written file") {
    Array a = placeholder(Shape::of({2, 3}), DType::F64, "a");
    Array out = transpose(a) + 1.0;
    std::string path =
        (std::filesystem::temp_directory_path() / "hedra_graph_file_test.json").string();
    save_graph_file(path, {out}, {a});
    GraphFile f = load_graph_file(path);
    std::remove(path.c_str());
    HostArray in = HostArray::from<double>({1, 2, 3, 4, 5, 6}, {2, 3});
    auto got = hedra::test::run_reference(f.output_arrays(), f.placeholder_arrays(), {in});
    CHECK(got[0].sizes() == std::vector<std::int64_t>{3, 2});
    CHECK(got[0].to_doubles() == std::vector<double>{2, 5, 3, 6, 4, 7});

    // Written by hand: a 2x2 i64 array of data, doubled; the output is the only input-free leaf.
    const char* hand = R"({
      "format": "hedra-graph", "version": 1,
      "exprs": [{"op": "input", "dtype": "i64", "index": 0},
                {"op": "add", "dtype": "i64", "args": [0, 0]}],
      "nodes": [{"kind": "data", "dtype": "i64", "shape": [[0, 1, 2], [0, 1, 2]],
                 "data": "AQAAAAAAAAACAAAAAAAAAAMAAAAAAAAABAAAAAAAAAA="},
                {"kind": "map", "dtype": "i64", "shape": [[0, 1, 2], [0, 1, 2]], "inputs": [0],
                 "expr": 1}],
      "outputs": [1]
    })";
    GraphFile h = load_graph(hand, "hand.json");
    CHECK(h.placeholders.empty());
    CHECK(compute(Array(h.outputs[0])).to_doubles() == std::vector<double>{2, 4, 6, 8});
}

TEST_CASE("graph file: placeholders not listed by the caller are still inputs") {
    Array a = placeholder(Shape::of({3}), DType::F32, "a");
    Array b = placeholder(Shape::of({3}), DType::F32, "b");
    GraphFile f = load_graph(save_graph({a * b}, {b}), "g");
    REQUIRE(f.placeholders.size() == 2);
    CHECK(f.placeholders[0]->name == "b");
    CHECK(f.placeholders[1]->name == "a");
}

TEST_CASE("graph file: every dtype's name is written and read back") {
    for (DType t : kAllDTypes) {
        INFO("dtype " << dtype_name(t));
        Array x = placeholder(Shape{range(3)}, t, "x");
        Array y = cast(x, t == DType::F64 ? DType::F32 : DType::F64);
        std::string text = save_graph(std::vector<Array>{y}, std::vector<Array>{x});
        CHECK(text.find("\"dtype\": \"" + std::string(dtype_name(t)) + "\"") != std::string::npos);
        GraphLoadOptions keep;
        keep.keep_ids = true;
        GraphFile back = load_graph(text, "<graph>", keep);
        REQUIRE(back.placeholders.size() == 1);
        CHECK(back.placeholders[0]->dtype == t);
        REQUIRE(back.outputs.size() == 1);
        CHECK(back.outputs[0]->dtype == y.node()->dtype);
        CHECK(save_graph(back.outputs, back.placeholders) == text);
    }
}

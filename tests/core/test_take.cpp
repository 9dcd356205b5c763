// take: result shapes (src's axes around the indices'), dtype, symbolic index extents, graph
// files, and the errors of bad calls.
#include <doctest/doctest.h>

#include "core/expect_error.hpp"
#include "core/graph_file.hpp"
#include "hedra.hpp"

using namespace hedra;

TEST_CASE("take: the result has src's axes before and after `axis` around the indices' axes") {
    Array src = zeros(Shape::of({3, 50, 4}), DType::F32);
    Array ids = zeros(Shape::of({2, 5}), DType::I32);
    CHECK(take(src, ids, 1).shape() == Shape::of({3, 2, 5, 4}));
    CHECK(take(src, ids, -1).shape() == Shape::of({3, 50, 2, 5}));
    CHECK(take(src, ids).shape() == Shape::of({2, 5, 50, 4}));
    CHECK(take(src, zeros(Shape{}, DType::I64), 1).shape() == Shape::of({3, 4}));
    CHECK(take(cast(src, DType::BF16), ids, 1).dtype() == DType::BF16);
    // Equal calls are one node (hash-consed), different axes are not.
    CHECK(take(src, ids, 1).node() == take(src, ids, 1).node());
    CHECK(take(src, ids, 0).node() != take(src, ids, 2).node());
}

TEST_CASE("take: indices with a symbolic extent give a result with that extent") {
    Array ids = placeholder(Shape{dynamic("take_batch", 64), range(8)}, DType::I32, "tokens");
    Array table = zeros(Shape::of({100, 16}), DType::F32);
    Array x = take(table, ids);
    CHECK(x.rank() == 3);
    CHECK(x.shape()[0].is_dynamic());
    CHECK(x.shape()[2].size == 16);
}

TEST_CASE("take: a graph file keeps the gather and rebuilds it checked") {
    Array table = zeros(Shape::of({10, 3}), DType::F32);
    Array ids = array(std::vector<std::int32_t>{1, 9, 0}, Shape::of({3}));
    Array x = take(table, ids);
    std::string text = save_graph(std::vector<Array>{x});
    CHECK(text.find("\"gather\"") != std::string::npos);
    GraphFile back = load_graph(text);
    REQUIRE(back.outputs.size() == 1);
    CHECK(back.outputs[0]->kind == NodeKind::Gather);
    CHECK(back.outputs[0]->axis == 0);
    CHECK(back.outputs[0]->shape == x.shape());
    // A hand-edited file that names an axis the indices do not fit is refused.
    std::string bad = text;
    auto at = bad.find("\"axis\": 0");
    REQUIRE(at != std::string::npos);
    bad.replace(at, 9, "\"axis\": 1");
    CHECK_ERROR(load_graph(bad), "take");
}

TEST_CASE("take: bad calls name the operation, the shapes and what to do") {
    Array src = zeros(Shape::of({3, 50}), DType::F32);
    CHECK_ERROR(take(src, zeros(Shape::of({2}), DType::F32)), "take", "f32", "i32 or i64", "cast");
    CHECK_ERROR(take(src, zeros(Shape::of({2}), DType::I32), 2), "take", "axis 2", "(3,50)");
    CHECK_ERROR(take(zeros(Shape{}, DType::F32), zeros(Shape::of({2}), DType::I32)), "take",
                "rank 0");
    Array ids = array(std::vector<std::int32_t>{0, 50}, Shape::of({2}));
    CHECK_ERROR(take(src, ids, 1), "take", "index 50", "element 1", "size 50", "[0, 50)");
    Array negative = array(std::vector<std::int64_t>{-1}, Shape::of({1}));
    CHECK_ERROR(take(src, negative), "take", "index -1", "[0, 3)");
    CHECK_ERROR(take(zeros(Shape::of({0, 2}), DType::F32), zeros(Shape::of({1}), DType::I32)),
                "take", "empty");
}

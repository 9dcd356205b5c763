// core/json: parsing (values, positions), writing (deterministic, compact where it fits), errors
// with line and column, and base64.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "core/expect_error.hpp"
#include "core/json.hpp"

using namespace hedra;
using json::Value;

TEST_CASE("json: values of every kind parse") {
    Value v =
        json::parse(R"({"a": [1, -2.5e3, true, false, null], "b": {"c": "x\ny\u00e9"}})", "t.json")
            .root;
    REQUIRE(v.is_object());
    const Value& a = *json::find(v, "a");
    REQUIRE(a.size() == 5);
    std::int64_t one = 0;
    CHECK(json::to_int64(a[0], one));
    CHECK(one == 1);
    CHECK(a[1].get<double>() == -2500.0);
    std::int64_t n = 0;
    CHECK_FALSE(json::to_int64(Value(2.5), n));
    CHECK(json::to_int64(Value(3.0), n));
    CHECK(n == 3);
    CHECK_FALSE(json::to_int64(Value(std::uint64_t{1} << 63), n));
    CHECK_FALSE(json::to_int64(Value("3"), n));
    CHECK(a[2].get<bool>());
    CHECK(a[4].is_null());
    CHECK(v["b"]["c"] == "x\ny\xc3\xa9");
    CHECK(json::find(v, "missing") == nullptr);
    CHECK(json::find(a, "a") == nullptr);
    Value zero = json::parse("-0", "z.json").root;
    CHECK(std::signbit(zero.get<double>()));
    CHECK(json::write(zero) == "-0");
}

TEST_CASE("json: positions are 1-based lines and columns of where values start") {
    json::Document d = json::parse("{\n  \"k\":\n    [7, -8.5e1 , \"s,:\" ,null,{}]\n}", "p.json");
    const Value& k = d.root["k"];
    CHECK(d.where(d.root) == "p.json:1:1");
    CHECK(d.where(k) == "p.json:3:5");
    CHECK(d.where(k[0]) == "p.json:3:6");
    CHECK(d.where(k[1]) == "p.json:3:9");
    CHECK(d.where(k[2]) == "p.json:3:18");
    CHECK(d.where(k[3]) == "p.json:3:25");
    CHECK(d.where(k[4]) == "p.json:3:30");
    Value elsewhere = 1;
    CHECK(d.where(elsewhere) == "p.json");
}

TEST_CASE("json: written text reads back to the same text") {
    Value doc = {{"name", "q\"uote\\ and\ttab"},
                 {"ints", {-3, 4}},
                 {"float", 0.1},
                 {"whole", 2.0},
                 {"ctrl", std::string("\x01", 1)}};
    std::string text = json::write(doc);
    CHECK(text == "{\"name\": \"q\\\"uote\\\\ and\\ttab\", \"ints\": [-3, 4], \"float\": 0.1, "
                  "\"whole\": 2, \"ctrl\": \"\\u0001\"}");
    CHECK(json::write(json::parse(text, "x").root) == text);
    CHECK(json::parse(text, "x").root["float"].get<double>() == 0.1);
    CHECK_ERROR(json::write(Value(std::nan(""))), "non-finite");
}

TEST_CASE("json: long containers break over lines, short ones stay on one") {
    Value rows = Value::array();
    for (int i = 0; i < 30; ++i)
        rows.push_back({i, i});
    Value doc = {{"rows", rows}};
    std::string text = json::write(doc, 40);
    CHECK(text.rfind("{\n  \"rows\": [\n    [0, 0],\n    [1, 1],", 0) == 0);
    CHECK(json::write(json::parse(text, "x").root, 40) == text);
}

TEST_CASE("json: members keep their insertion order") {
    Value o = Value::object();
    o["b"] = 1;
    o["a"] = 2;
    o["b"] = 3;
    CHECK(json::write(o) == "{\"b\": 3, \"a\": 2}");
}

TEST_CASE("json: malformed text names the source, line and column") {
    CHECK_ERROR(json::parse("{\"a\": 1,\n  \"b\" 2}", "bad.json"), "bad.json:2:7:", "expected ':'");
    CHECK_ERROR(json::parse("[1, 2", "x.json"), "x.json:1:6:", "end of input");
    CHECK_ERROR(json::parse("{\"a\": tru}", "x.json"), "x.json:1:10:", "invalid literal");
    CHECK_ERROR(json::parse("[1] 2", "x.json"), "x.json:1:5:", "expected end of input");
    CHECK_ERROR(json::parse("\"abc", "x.json"), "missing closing quote");
    CHECK_ERROR(json::parse("\"a\nb\"", "x.json"), "x.json:1:3:", "control character");
    CHECK_ERROR(json::parse("\"\\q\"", "x.json"), "forbidden character after backslash");
    CHECK_ERROR(json::parse("{\"a\": 1, \"a\": 2}", "x.json"), "x.json:1:10:", "'a' appears twice");
    CHECK_ERROR(json::parse("-", "x.json"), "expected digit");
    CHECK_ERROR(json::parse("1.", "x.json"), "after '.'");
    CHECK_ERROR(json::parse("", "empty.json"), "empty.json:1:1:", "end of input");
    CHECK_ERROR(json::parse(std::string(1000, '['), "deep.json"),
                "deep.json:1:257:", "nesting deeper");
}

TEST_CASE("json: base64 round trip and errors") {
    for (std::size_t n = 0; n < 10; ++n) {
        std::string bytes;
        for (std::size_t i = 0; i < n; ++i)
            bytes += static_cast<char>(i * 37 + 200);
        std::string text = json::base64_encode(bytes.data(), bytes.size());
        CHECK(text.size() == (n + 2) / 3 * 4);
        auto back = json::base64_decode(text, "data");
        CHECK(std::string(back.begin(), back.end()) == bytes);
    }
    CHECK(json::base64_encode("Man", 3) == "TWFu");
    CHECK(json::base64_encode("Ma", 2) == "TWE=");
    CHECK(json::base64_encode("M", 1) == "TQ==");
    CHECK_ERROR(json::base64_decode("TWE", "'data'"), "'data' is not valid base64",
                "multiple of 4");
    CHECK_ERROR(json::base64_decode("TW!u", "'data'"), "offset 2");
    CHECK_ERROR(json::base64_decode("T=Fu", "'data'"), "not valid base64");
}

// core/json: parsing (values, escapes, positions), writing (deterministic, compact where it
// fits), errors with line and column, and base64.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "core/expect_error.hpp"
#include "core/json.hpp"

using namespace hedra;
using json::Value;

TEST_CASE("json: values of every kind parse and keep their text") {
    Value v =
        json::parse(R"({"a": [1, -2.5e3, true, false, null], "b": {"c": "x\ny\u00e9"}})", "t.json");
    REQUIRE(v.is_object());
    const Value& a = *v.find("a");
    REQUIRE(a.items().size() == 5);
    std::int64_t one = 0;
    CHECK(a.items()[0].to_int64(one));
    CHECK(one == 1);
    CHECK(a.items()[1].text() == "-2.5e3");
    CHECK(a.items()[1].to_double() == -2500.0);
    std::int64_t bad = 0;
    CHECK_FALSE(Value::number_text("2.5").to_int64(bad));
    CHECK(Value::number_text("3.0").to_int64(bad));
    CHECK(bad == 3);
    CHECK(a.items()[2].as_bool());
    CHECK(a.items()[4].is_null());
    CHECK(v.find("b")->find("c")->text() == "x\ny\xc3\xa9");
    CHECK(v.find("missing") == nullptr);
}

TEST_CASE("json: positions are 1-based lines and columns") {
    Value v = json::parse("{\n  \"k\":\n    [7]\n}", "p.json");
    const Value& k = *v.find("k");
    CHECK(k.line == 3);
    CHECK(k.column == 5);
    CHECK(k.items()[0].column == 6);
}

TEST_CASE("json: written text reads back to the same text") {
    Value doc = Value::object();
    doc.set("name", Value::string("q\"uote\\ and\ttab"));
    doc.set("ints",
            Value::array({Value::number(std::int64_t{-3}), Value::number(std::int64_t{4})}));
    doc.set("float", Value::number(0.1));
    doc.set("ctrl", Value::string(std::string("\x01", 1)));
    std::string text = json::write(doc);
    CHECK(text == "{\"name\": \"q\\\"uote\\\\ and\\ttab\", \"ints\": [-3, 4], \"float\": 0.1, "
                  "\"ctrl\": \"\\u0001\"}");
    CHECK(json::write(json::parse(text, "x")) == text);
    CHECK(json::parse(text, "x").find("float")->to_double() == 0.1);
    CHECK_ERROR(Value::number(std::nan("")), "non-finite");
}

TEST_CASE("json: long containers break over lines, short ones stay on one") {
    Value rows = Value::array();
    for (int i = 0; i < 30; ++i)
        rows.push(Value::array({Value::number(std::int64_t{i}), Value::number(std::int64_t{i})}));
    Value doc = Value::object();
    doc.set("rows", rows);
    std::string text = json::write(doc, 40);
    CHECK(text.rfind("{\n  \"rows\": [\n    [0, 0],\n    [1, 1],", 0) == 0);
    CHECK(json::write(json::parse(text, "x"), 40) == text);
}

TEST_CASE("json: set replaces a member and keeps its place") {
    Value o = Value::object();
    o.set("a", Value::number(std::int64_t{1}));
    o.set("b", Value::number(std::int64_t{2}));
    o.set("a", Value::number(std::int64_t{3}));
    CHECK(json::write(o) == "{\"a\": 3, \"b\": 2}");
}

TEST_CASE("json: malformed text names the source, line and column") {
    CHECK_ERROR(json::parse("{\"a\": 1,\n  \"b\" 2}", "bad.json"), "bad.json:2:7:", "expected ':'");
    CHECK_ERROR(json::parse("[1, 2", "x.json"), "x.json:1:6:", "end of file");
    CHECK_ERROR(json::parse("{\"a\": tru}", "x.json"), "x.json:1:7:", "expected a value");
    CHECK_ERROR(json::parse("[1] 2", "x.json"), "x.json:1:5:", "after the document");
    CHECK_ERROR(json::parse("\"abc", "x.json"), "unterminated string");
    CHECK_ERROR(json::parse("\"a\nb\"", "x.json"), "control character");
    CHECK_ERROR(json::parse("\"\\q\"", "x.json"), "invalid escape");
    CHECK_ERROR(json::parse("{\"a\": 1, \"a\": 2}", "x.json"), "x.json:1:10:", "'a' appears twice");
    CHECK_ERROR(json::parse("-", "x.json"), "expected digits");
    CHECK_ERROR(json::parse("1.", "x.json"), "after '.'");
    CHECK_ERROR(json::parse("", "empty.json"), "empty.json:1:1:", "end of file");
    CHECK_ERROR(json::parse(std::string(1000, '['), "deep.json"), "nesting deeper");
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

// The graph-file reader's class, shared by the two files that implement it
// (graph_file_load.cpp: the document, fields and expressions; graph_file_nodes.cpp: the nodes
// and their checks). Internal to core.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "core/graph_file.hpp"
#include "core/json.hpp"

namespace hedra::detail {

using json::Value;

class GraphReader {
public:
    // `doc` (may be null): the parsed document of what `read` is given, for positions in errors.
    GraphReader(const std::string& source, const GraphLoadOptions& options,
                const json::Document* doc)
        : source_(source), options_(options), doc_(doc) {}

    GraphFile read(const Value& doc);

    // Error and field helpers: every failure names the source, line:column and the entry.
    [[noreturn]] void fail(const Value& at, const std::string& what) const {
        throw Error((doc_ ? doc_->where(at) : source_) + ": " +
                    (context_.empty() ? "" : context_ + ": ") + what);
    }

    const Value& member(const Value& obj, const char* key) const {
        const Value* v = json::find(obj, key);
        if (!v) fail(obj, std::string("missing member '") + key + "'");
        return *v;
    }
    const Value& typed(const Value& v, Value::value_t kind, const char* key) const {
        if (v.type() != kind)
            fail(v, std::string("'") + key + "' must be " +
                        (kind == Value::value_t::array ? "an " : "a ") + Value(kind).type_name() +
                        ", found " + v.type_name());
        return v;
    }
    static const std::string& text(const Value& string) {
        return string.get_ref<const std::string&>();
    }
    std::int64_t integer(const Value& v, const char* key, std::int64_t lo, std::int64_t hi) const {
        std::int64_t out = 0;
        if (!json::to_int64(v, out))
            fail(v, std::string("'") + key + "' must be an integer, found " +
                        (v.is_number() ? v.dump() : v.type_name()));
        if (out < lo || out > hi)
            fail(v, std::string("'") + key + "' is " + std::to_string(out) + ", outside [" +
                        std::to_string(lo) + ", " + std::to_string(hi) + "]");
        return out;
    }
    std::int64_t integer_member(const Value& obj, const char* key, std::int64_t lo,
                                std::int64_t hi) const {
        return integer(member(obj, key), key, lo, hi);
    }
    const std::string& string_member(const Value& obj, const char* key) const {
        return text(typed(member(obj, key), Value::value_t::string, key));
    }
    bool bool_member(const Value& obj, const char* key) const {
        return typed(member(obj, key), Value::value_t::boolean, key).get<bool>();
    }
    DType dtype_member(const Value& obj) const {
        const Value& v = member(obj, "dtype");
        try {
            return parse_dtype(text(typed(v, Value::value_t::string, "dtype")));
        } catch (const Error& e) {
            fail(v, e.what());
        }
    }

    Shape shape_member(const Value& obj) const;
    AffineMap access_member(const Value& obj, int in_rank, int out_rank) const;
    ScalarExpr expr_ref(const Value& obj, const char* key) const;
    NodePtr node_ref(const Value& v, std::size_t before) const;
    void read_expr(const Value& e);
    NodePtr read_node(const Value& n, std::size_t position);
    void check_map(const Value& n, const Node& node) const;
    void check_view(const Value& n, const Node& node) const;
    void check_reduce(const Value& n, const Node& node) const;
    void read_tuple_reduce(const Value& n, Node& node) const; // reduce_multiple_value
    void check_fuse(const Value& n, const Node& node) const;
    void check_gather(const Value& n, const Node& node) const;
    void check_scatter(const Value& n, const Node& node) const;
    void read_scan(const Value& n, Node& node);
    void check_scan_output(const Value& n, const Node& node) const;
    // The placeholders of scans' bodies: parameters of their steps, not inputs of the program.
    std::unordered_set<const Node*> scan_params_;
    void check_inputs(const Value& n, const Node& node, std::size_t count) const;

private:
    std::string source_;
    GraphLoadOptions options_;
    const json::Document* doc_;
    std::string context_;
    std::vector<ScalarExpr> exprs_;
    std::vector<NodePtr> nodes_;
    std::vector<bool> omitted_data_;
};

} // namespace hedra::detail

// Loading a graph file (see graph_file.hpp): every expression and node is checked as it is
// rebuilt (kinds, dtypes, ranks, references to earlier entries only, views inside their input,
// fuse pieces through fuse()/overwrite()), so a hand-edited file cannot reach a backend with a
// graph the API could not have built. Nodes are rebuilt field by field and interned, exactly as
// saved; errors name the file, the line and column, and the entry.
#include <algorithm>
#include <bit>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "core/graph_file_reader.hpp"

namespace hedra::detail {

namespace {

double float_value(const Value& v, bool& ok) {
    ok = true;
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        if (s == "inf") return std::numeric_limits<double>::infinity();
        if (s == "-inf") return -std::numeric_limits<double>::infinity();
        if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
        unsigned long long bits = 0;
        if (s.rfind("nan:0x", 0) == 0 && std::sscanf(s.c_str() + 6, "%llx", &bits) == 1) {
            double d = std::bit_cast<double>(static_cast<std::uint64_t>(bits));
            if (std::isnan(d)) return d;
        }
    }
    ok = false;
    return 0;
}

} // namespace

Shape GraphReader::shape_member(const Value& obj) const {
    const Value& s = typed(member(obj, "shape"), Value::value_t::array, "shape");
    if (static_cast<int>(s.size()) > kMaxRank)
        fail(s, "rank " + std::to_string(s.size()) + " is above the maximum rank " +
                    std::to_string(kMaxRank));
    std::vector<Range> ranges;
    std::int64_t elements = 1;
    for (const Value& r : s) {
        typed(r, Value::value_t::array, "shape");
        if (r.size() != 3 && r.size() != 4)
            fail(r, "a range is [start, step, size] or, symbolic, [0, 1, max, \"name\"]");
        std::int64_t start = integer(r[0], "start", -(1LL << 62), 1LL << 62);
        std::int64_t step = integer(r[1], "step", 1, 1LL << 40);
        std::int64_t size = integer(r[2], "size", 0, 1LL << 40);
        if (size <= 1 && step != 1) fail(r, "a range of size <= 1 has step 1");
        // The end too stays within +-2^62, so no arithmetic on these ranges (their ends,
        // hulls, distances between them) overflows 64 bits.
        __int128 end = start + static_cast<__int128>(step) * size;
        if (end > (1LL << 62))
            fail(r, "the range [" + std::to_string(start) + ", " + std::to_string(step) + ", " +
                        std::to_string(size) + "] ends beyond 2^62 (start + step*size)");
        if (r.size() == 4) {
            if (start != 0 || step != 1) fail(r, "a symbolic extent starts at 0 with step 1");
            ranges.push_back(dynamic(text(typed(r[3], Value::value_t::string, "name")), size));
        } else {
            ranges.emplace_back(start, step, size);
        }
        if (__builtin_mul_overflow(elements, size, &elements) || elements > (1LL << 48))
            fail(r, "the shape has more than 2^48 elements");
    }
    return Shape(std::move(ranges));
}

AffineMap GraphReader::access_member(const Value& obj, int in_rank, int out_rank) const {
    const Value& a = typed(member(obj, "access"), Value::value_t::object, "access");
    const Value& rows = typed(member(a, "matrix"), Value::value_t::array, "matrix");
    const Value& offset = typed(member(a, "offset"), Value::value_t::array, "offset");
    if (static_cast<int>(rows.size()) != out_rank)
        fail(rows, "'matrix' has " + std::to_string(rows.size()) + " rows but the input has rank " +
                       std::to_string(out_rank));
    if (static_cast<int>(offset.size()) != out_rank)
        fail(offset, "'offset' has " + std::to_string(offset.size()) +
                         " entries but the input has rank " + std::to_string(out_rank));
    std::vector<std::int64_t> matrix, b;
    for (const Value& row : rows) {
        typed(row, Value::value_t::array, "matrix");
        if (static_cast<int>(row.size()) != in_rank)
            fail(row, "a 'matrix' row has " + std::to_string(row.size()) +
                          " entries but the node has rank " + std::to_string(in_rank));
        for (const Value& c : row)
            matrix.push_back(integer(c, "matrix", -(1LL << 40), 1LL << 40));
    }
    for (const Value& c : offset)
        b.push_back(integer(c, "offset", -(1LL << 40), 1LL << 40));
    return AffineMap(in_rank, out_rank, std::move(matrix), std::move(b));
}

ScalarExpr GraphReader::expr_ref(const Value& obj, const char* key) const {
    std::int64_t i = integer_member(obj, key, 0, static_cast<std::int64_t>(exprs_.size()) - 1);
    return exprs_[static_cast<std::size_t>(i)];
}

NodePtr GraphReader::node_ref(const Value& v, std::size_t before) const {
    std::int64_t i = 0;
    if (!json::to_int64(v, i)) fail(v, "a node reference must be an integer");
    if (i < 0 || static_cast<std::size_t>(i) >= before)
        fail(v, "refers to node " + std::to_string(i) + ", which is not defined before it");
    return nodes_[static_cast<std::size_t>(i)];
}

void GraphReader::read_expr(const Value& e) {
    typed(e, Value::value_t::object, "exprs");
    const Value& op_value = member(e, "op");
    std::optional<ScalarOp> known =
        scalar_op_from_name(text(typed(op_value, Value::value_t::string, "op")));
    if (!known) fail(op_value, "unknown scalar operation '" + text(op_value) + "'");
    const ScalarOp op = *known;
    DType dtype = dtype_member(e);
    ScalarExpr out;
    try {
        if (op == ScalarOp::Const) {
            const Value& v = member(e, "value");
            if (dtype == DType::Bool) {
                out =
                    scalar_const_int(typed(v, Value::value_t::boolean, "value").get<bool>(), dtype);
            } else if (dtype == DType::I32) {
                out = scalar_const_int(integer(v, "value", std::numeric_limits<std::int32_t>::min(),
                                               std::numeric_limits<std::int32_t>::max()),
                                       dtype);
            } else if (is_integer(dtype)) {
                out = scalar_const_int(integer(v, "value", std::numeric_limits<std::int64_t>::min(),
                                               std::numeric_limits<std::int64_t>::max()),
                                       dtype);
            } else {
                bool ok = false;
                double f = float_value(v, ok);
                if (!ok) fail(v, "'value' must be a number, \"inf\", \"-inf\" or \"nan\"");
                out = scalar_const(f, dtype);
            }
        } else if (op == ScalarOp::Input) {
            out = scalar_input(static_cast<int>(integer_member(e, "index", 0, 1 << 20)), dtype);
        } else {
            const Value& args = typed(member(e, "args"), Value::value_t::array, "args");
            std::vector<ScalarExpr> a;
            for (const Value& i : args)
                a.push_back(exprs_[static_cast<std::size_t>(
                    integer(i, "args", 0, static_cast<std::int64_t>(exprs_.size()) - 1))]);
            const auto arity = static_cast<std::size_t>(scalar_op_info(op).arity);
            if (a.size() != arity)
                fail(args, "'" + std::string(scalar_op_name(op)) + "' takes " +
                               std::to_string(arity) + " arguments, found " +
                               std::to_string(a.size()));
            if (op == ScalarOp::Cast)
                out = scalar_cast(a[0], dtype);
            else if (op == ScalarOp::Select)
                out = scalar_select(a[0], a[1], a[2]);
            else if (arity == 1)
                out = scalar_unary(op, a[0]);
            else
                out = scalar_binary(op, a[0], a[1]);
            for (const ScalarExpr& x : out->args) // the constructors added no casts
                if (std::find(a.begin(), a.end(), x) == a.end())
                    fail(e, "the arguments of '" + std::string(scalar_op_name(op)) +
                                "' need an explicit cast (" + to_string(out) + ")");
        }
    } catch (const Error& err) {
        if (std::string(err.what()).rfind(source_, 0) == 0) throw;
        fail(e, err.what());
    }
    if (out->dtype != dtype)
        fail(e, "declared dtype " + std::string(dtype_name(dtype)) + " but '" +
                    std::string(scalar_op_name(op)) + "' of these arguments has dtype " +
                    std::string(dtype_name(out->dtype)));
    exprs_.push_back(out);
}

} // namespace hedra::detail

namespace hedra::detail {

GraphFile GraphReader::read(const Value& doc) {
    if (!doc.is_object())
        fail(doc, std::string("a graph file is a JSON object, found ") + doc.type_name());
    const Value& format = member(doc, "format");
    if (!format.is_string() || text(format) != "hedra-graph")
        fail(format, "not a hedra graph file ('format' must be \"hedra-graph\")");
    const Value& version = member(doc, "version");
    std::int64_t v = 0;
    if (!json::to_int64(version, v) || v != 1)
        fail(version, "unsupported graph file version " +
                          (version.is_number() ? version.dump() : std::string("?")) +
                          " (this hedra reads version 1)");
    if (const Value* exprs = json::find(doc, "exprs")) {
        typed(*exprs, Value::value_t::array, "exprs");
        for (const Value& e : *exprs) {
            context_ = "expr " + std::to_string(exprs_.size());
            read_expr(e);
        }
        context_.clear();
    }
    const Value& nodes = typed(member(doc, "nodes"), Value::value_t::array, "nodes");
    for (const Value& n : nodes)
        nodes_.push_back(read_node(n, nodes_.size()));
    context_.clear();

    GraphFile file;
    const Value& outputs = typed(member(doc, "outputs"), Value::value_t::array, "outputs");
    if (outputs.empty()) fail(outputs, "'outputs' is empty");
    for (const Value& o : outputs)
        file.outputs.push_back(node_ref(o, nodes_.size()));
    std::vector<bool> listed(nodes_.size(), false);
    if (const Value* inputs = json::find(doc, "inputs")) {
        typed(*inputs, Value::value_t::array, "inputs");
        for (const Value& i : *inputs) {
            NodePtr p = node_ref(i, nodes_.size());
            std::int64_t at = 0;
            json::to_int64(i, at);
            if (p->kind != NodeKind::Placeholder)
                fail(i, "input refers to node " + i.dump() + ", a " + node_kind_name(p->kind) +
                            " node, not a placeholder");
            if (listed[at]) fail(i, "node " + i.dump() + " is listed twice in 'inputs'");
            listed[at] = true;
            file.placeholders.push_back(p);
        }
    }
    for (int pass = 0; pass < 2; ++pass)
        for (std::size_t i = 0; i < nodes_.size(); ++i)
            if (!listed[i] && nodes_[i]->kind == NodeKind::Placeholder &&
                !scan_params_.count(nodes_[i].get()) && omitted_data_[i] == (pass == 1)) {
                listed[i] = true;
                file.placeholders.push_back(nodes_[i]);
            }
    return file;
}

} // namespace hedra::detail

namespace hedra {

GraphFile graph_from_json(const json::Value& doc, const std::string& source,
                          const GraphLoadOptions& options) {
    return detail::GraphReader(source, options, nullptr).read(doc);
}

GraphFile load_graph(std::string_view text, const std::string& source,
                     const GraphLoadOptions& options) {
    json::Document doc = json::parse(text, source);
    return detail::GraphReader(source, options, &doc).read(doc.root);
}

GraphFile load_graph_file(const std::string& path, const GraphLoadOptions& options) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("load_graph_file: cannot open '" + path + "'");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw Error("load_graph_file: cannot read '" + path + "'");
    return load_graph(text.str(), path, options);
}

} // namespace hedra

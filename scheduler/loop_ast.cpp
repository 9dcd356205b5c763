// Printing and small queries of the plain loop AST (see loop_ast.hpp).
#include "scheduler/loop_ast.hpp"

#include "scheduler/register_tile.hpp"

namespace hedra::sched {
namespace {

const char* infix(AstExpr::Op op) {
    switch (op) {
    case AstExpr::Op::Add:
        return " + ";
    case AstExpr::Op::Sub:
        return " - ";
    case AstExpr::Op::Mul:
        return " * ";
    case AstExpr::Op::Div:
        return " / ";
    case AstExpr::Op::PDivQ:
        return " / ";
    case AstExpr::Op::PDivR:
        return " % ";
    case AstExpr::Op::ZDivR:
        return " % ";
    case AstExpr::Op::Eq:
        return " == ";
    case AstExpr::Op::Le:
        return " <= ";
    case AstExpr::Op::Lt:
        return " < ";
    case AstExpr::Op::Ge:
        return " >= ";
    case AstExpr::Op::Gt:
        return " > ";
    case AstExpr::Op::And:
        return " && ";
    case AstExpr::Op::Or:
        return " || ";
    default:
        return nullptr;
    }
}

std::string statement_line(const AstNode& n) {
    std::string s = "S#" + std::to_string(n.statement) + "(";
    for (std::size_t i = 0; i < n.counters.size(); ++i)
        s += (i ? ", " : "") + to_string(n.counters[i]);
    return s + ");";
}

void print(const std::vector<AstNode>& nodes, int indent, std::string& out);

void print(const AstNode& n, int indent, std::string& out) {
    std::string pad(static_cast<std::size_t>(indent) * 2, ' ');
    switch (n.kind) {
    case AstNode::Kind::Block:
        print(n.body, indent, out);
        return;
    case AstNode::Kind::Mark:
        out += pad + "// mark: " + n.mark +
               (n.register_tile ? " // " + to_string(*n.register_tile) : "") + "\n";
        print(n.body, indent, out);
        return;
    case AstNode::Kind::Call:
        out += pad + statement_line(n) + "\n";
        return;
    case AstNode::Kind::If:
        out += pad + "if (" + to_string(n.condition) + ") {\n";
        print(n.body, indent + 1, out);
        if (!n.else_body.empty()) {
            out += pad + "} else {\n";
            print(n.else_body, indent + 1, out);
        }
        out += pad + "}\n";
        return;
    case AstNode::Kind::For:
        out += pad + "for (" + n.iterator + " = " + to_string(n.init) + "; " + to_string(n.cond) +
               "; " + n.iterator + " += " + to_string(n.inc) + ") {" +
               (n.parallel ? " // parallel" : "") +
               (n.coalesce ? " // coalesce " + std::to_string(n.coalesce) : "") +
               (n.reduction_lanes ? " // lanes " + std::to_string(n.reduction_lanes) : "") + "\n";
        print(n.body, indent + 1, out);
        out += pad + "}\n";
        return;
    }
}

void print(const std::vector<AstNode>& nodes, int indent, std::string& out) {
    for (const AstNode& n : nodes)
        print(n, indent, out);
}

} // namespace

std::string to_string(const AstExpr& e) {
    switch (e.kind) {
    case AstExpr::Kind::Int:
        return std::to_string(e.value);
    case AstExpr::Kind::Id:
        return e.name;
    case AstExpr::Kind::Op:
        break;
    }
    if (const char* op = infix(e.op))
        return "(" + to_string(e.args[0]) + op + to_string(e.args[1]) + ")";
    std::string name;
    switch (e.op) {
    case AstExpr::Op::Neg:
        return "-(" + to_string(e.args[0]) + ")";
    case AstExpr::Op::FloorDiv:
        name = "floord";
        break;
    case AstExpr::Op::Min:
        name = "min";
        break;
    case AstExpr::Op::Max:
        name = "max";
        break;
    default:
        name = "select";
        break;
    }
    std::string s = name + "(";
    for (std::size_t i = 0; i < e.args.size(); ++i)
        s += (i ? ", " : "") + to_string(e.args[i]);
    return s + ")";
}

std::string to_string(const AstNode& node, int indent) {
    std::string out;
    print(node, indent, out);
    return out;
}

bool contains_for(const std::vector<AstNode>& nodes) {
    for (const AstNode& n : nodes) {
        if (n.kind == AstNode::Kind::For) return true;
        if (contains_for(n.body) || contains_for(n.else_body)) return true;
    }
    return false;
}

int count_for(const AstNode& node) {
    int n = node.kind == AstNode::Kind::For ? 1 : 0;
    for (const AstNode& c : node.body)
        n += count_for(c);
    for (const AstNode& c : node.else_body)
        n += count_for(c);
    return n;
}

} // namespace hedra::sched

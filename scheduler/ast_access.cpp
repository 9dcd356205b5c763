// The affine analysis of statement calls (see ast_access.hpp).
#include "scheduler/ast_access.hpp"

namespace hedra::sched {

LinearIndex linear_index(const poly::Buffer& buffer, const AffineMap& access) {
    LinearIndex li;
    li.coef.assign(static_cast<std::size_t>(access.in_rank()), 0);
    std::int64_t row = 1;
    // A window's leading axes (its band and its row) are placed by c_element_index.
    const int leading = buffer.row_local + (buffer.row_window > 0 ? buffer.window_axis() + 1 : 0);
    for (int r = static_cast<int>(buffer.sizes.size()) - 1; r >= leading; --r) {
        for (int k = 0; k < access.in_rank(); ++k)
            li.coef[k] += row * access.coeff(r, k);
        li.constant += row * access.offset(r);
        row *= buffer.sizes[r];
    }
    return li;
}

bool mentions(const AstExpr& e, const std::string& iterator) {
    if (e.kind == AstExpr::Kind::Id) return e.name == iterator;
    for (const AstExpr& a : e.args)
        if (mentions(a, iterator)) return true;
    return false;
}

std::optional<std::int64_t> iterator_coefficient(const AstExpr& e, const std::string& iterator) {
    if (!mentions(e, iterator)) return 0;
    if (e.kind == AstExpr::Kind::Id) return 1;
    if (e.kind != AstExpr::Kind::Op) return std::nullopt;
    auto coef = [&](std::size_t i) { return iterator_coefficient(e.args[i], iterator); };
    switch (e.op) {
    case AstExpr::Op::Add:
    case AstExpr::Op::Sub: {
        auto a = coef(0), b = coef(1);
        if (!a || !b) return std::nullopt;
        return e.op == AstExpr::Op::Add ? *a + *b : *a - *b;
    }
    case AstExpr::Op::Neg: {
        auto a = coef(0);
        if (!a) return std::nullopt;
        return -*a;
    }
    case AstExpr::Op::Mul:
        for (std::size_t i : {0u, 1u})
            if (e.args[i].kind == AstExpr::Kind::Int) {
                auto c = coef(1 - i);
                if (!c) return std::nullopt;
                return e.args[i].value * *c;
            }
        return std::nullopt;
    default:
        return std::nullopt;
    }
}

std::optional<std::int64_t> element_coefficient(const poly::Buffer& buffer, const AffineMap& access,
                                                const AstNode& call, const std::string& iterator) {
    LinearIndex li = linear_index(buffer, access);
    std::int64_t total = 0;
    for (std::size_t k = 0; k < li.coef.size(); ++k) {
        if (li.coef[k] == 0) continue;
        // An input after the counters is a loaded index (Read::indirect): no known coefficient.
        if (k >= call.counters.size()) return std::nullopt;
        auto c = iterator_coefficient(call.counters.at(k), iterator);
        if (!c) return std::nullopt;
        total += li.coef[k] * *c;
    }
    return total;
}

} // namespace hedra::sched

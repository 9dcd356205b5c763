// The generator's scalar expressions: random well-typed expressions over a map's operands
// (valid in the sense of fuzz_analysis.hpp), smooth ones for gradient fuzzing, and linear
// combinations for the dot-product identity (see fuzz_generator.hpp).
#include <algorithm>

#include "fuzz/lib/fuzz_generator_impl.hpp"

namespace hedra::fuzz::detail {

Expr Generator::random_literal() {
    static const std::vector<double> doubles = {0.5,  2.0, -1.5, 3.0, 0.1,  1e-3,
                                                100., 0.0, -0.0, 1.0, 0.25, -7.0};
    static const std::vector<double> ints = {0, 1, 2, -3, 7, -1, 100};
    switch (weighted({60, 30, 10})) {
    case 1:
        return Expr::lit(Expr::Literal::Int, pick(ints));
    case 2:
        return Expr::lit(Expr::Literal::Bool, static_cast<double>(uniform(0, 1)));
    default:
        return Expr::lit(Expr::Literal::Double, pick(doubles));
    }
}

namespace {

const std::vector<ScalarOp> kUnary = {
    ScalarOp::Neg,   ScalarOp::Not,   ScalarOp::Abs,  ScalarOp::Exp,
    ScalarOp::Log,   ScalarOp::Sqrt,  ScalarOp::Tanh, ScalarOp::Sigmoid,
    ScalarOp::Sin,   ScalarOp::Cos,   ScalarOp::Erf,  ScalarOp::Log1p,
    ScalarOp::Expm1, ScalarOp::Floor, ScalarOp::Ceil, ScalarOp::Round};
const std::vector<int> kUnaryWeights = {4, 1, 3, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1};
const std::vector<ScalarOp> kBinary = {
    ScalarOp::Add, ScalarOp::Sub,    ScalarOp::Mul,   ScalarOp::Div,    ScalarOp::Pow,
    ScalarOp::Min, ScalarOp::Max,    ScalarOp::Lt,    ScalarOp::Le,     ScalarOp::Gt,
    ScalarOp::Ge,  ScalarOp::Eq,     ScalarOp::Ne,    ScalarOp::And,    ScalarOp::Or,
    ScalarOp::Mod, ScalarOp::BitAnd, ScalarOp::BitOr, ScalarOp::BitXor, ScalarOp::Shl,
    ScalarOp::Shr};
const std::vector<int> kBinaryWeights = {14, 10, 12, 6, 3, 6, 6, 3, 2, 3, 2,
                                         2,  2,  2,  2, 2, 1, 1, 1, 1, 1};

} // namespace

Expr Generator::random_expr(int n, const std::vector<Meta>& metas, const std::vector<Sym>& syms) {
    static const std::vector<DType> types = {DType::Bool, DType::I32, DType::I64, DType::F32,
                                             DType::F64};
    for (int attempt = 0; attempt < 16; ++attempt) {
        std::vector<Expr> parts;
        for (int k = 0; k < n; ++k)
            parts.push_back(Expr::in(k));
        if (chance(0.3)) parts.push_back(random_literal());
        auto wrap = [&](Expr e) {
            switch (weighted({60, 25, 8, 7})) {
            case 1:
                return Expr::unary(kUnary[weighted(kUnaryWeights)], std::move(e));
            case 2:
                return Expr::cast(std::move(e), pick(types));
            case 3:
                return Expr::binary(kBinary[weighted(kBinaryWeights)], std::move(e),
                                    random_literal());
            default:
                return e;
            }
        };
        while (parts.size() > 1 || chance(0.3)) {
            std::shuffle(parts.begin(), parts.end(), rng_);
            Expr a = parts.back();
            parts.pop_back();
            if (parts.empty()) {
                parts.push_back(wrap(wrap(std::move(a))));
                break;
            }
            Expr b = parts.back();
            parts.pop_back();
            if (chance(0.1)) {
                Expr c = parts.empty() ? random_literal() : parts.back();
                if (!parts.empty()) parts.pop_back();
                Expr cond = chance(0.6) ? Expr::binary(ScalarOp::Lt, a, random_literal()) : a;
                parts.push_back(wrap(Expr::select(std::move(cond), std::move(b), std::move(c))));
            } else {
                parts.push_back(wrap(
                    Expr::binary(kBinary[weighted(kBinaryWeights)], std::move(a), std::move(b))));
            }
        }
        Expr e = std::move(parts.front());
        if (e.size() > 24) continue;
        if (!analyze_expr(e, metas, syms)) continue;
        if (chance(0.12)) {
            Expr r = Expr::repeat(e, reuse_step(n), pick(std::vector<int>{2, 5, 16, 40, 200}));
            if (analyze_expr(r, metas, syms)) return r;
        }
        return e;
    }
    return Expr::in(0);
}

// A step that reads the running value y (Input -1) two or more times, and maybe an operand.
Expr Generator::reuse_step(int n) {
    auto lit = [](double v) { return Expr::lit(Expr::Literal::Double, v); };
    Expr y = Expr::in(Expr::kRunning);
    Expr x = n > 0 && chance(0.4) ? Expr::in(static_cast<int>(uniform(0, n - 1))) : lit(0.25);
    switch (uniform(0, 4)) {
    case 0:
        return Expr::binary(ScalarOp::Add,
                            Expr::binary(ScalarOp::Mul, Expr::unary(ScalarOp::Tanh, y), lit(0.5)),
                            Expr::binary(ScalarOp::Mul, y, lit(0.5)));
    case 1:
        return Expr::binary(ScalarOp::Max, y, Expr::binary(ScalarOp::Mul, y, x));
    case 2:
        return Expr::binary(ScalarOp::Add, Expr::unary(ScalarOp::Sin, y),
                            Expr::binary(ScalarOp::Mul, y, lit(0.25)));
    case 3:
        return Expr::binary(ScalarOp::Sub, Expr::binary(ScalarOp::Mul, y, lit(0.75)),
                            Expr::binary(ScalarOp::Mul, Expr::unary(ScalarOp::Sigmoid, y), x));
    default:
        return Expr::select(Expr::binary(ScalarOp::Lt, y, x), Expr::binary(ScalarOp::Mul, y, y),
                            Expr::binary(ScalarOp::Mul, y, lit(0.5)));
    }
}

Expr Generator::smooth_expr(int n) {
    auto lit = [](double v) { return Expr::lit(Expr::Literal::Double, v); };
    auto smooth_unary = [&](Expr x) {
        switch (weighted({4, 3, 3, 2, 2, 2, 2, 2, 1})) {
        case 0:
            return Expr::unary(ScalarOp::Tanh, x);
        case 1:
            return Expr::unary(ScalarOp::Sigmoid, x);
        case 2:
            return Expr::binary(ScalarOp::Mul, x, lit(pick(std::vector<double>{0.5, -1.5, 2.0})));
        case 3:
            return Expr::unary(ScalarOp::Exp, Expr::unary(ScalarOp::Tanh, x));
        case 4:
            return Expr::unary(ScalarOp::Log, Expr::binary(ScalarOp::Add, lit(1.25),
                                                           Expr::binary(ScalarOp::Mul, x, x)));
        case 5:
            return Expr::unary(ScalarOp::Sqrt, Expr::binary(ScalarOp::Add, lit(0.5),
                                                            Expr::binary(ScalarOp::Mul, x, x)));
        case 6:
            return Expr::unary(ScalarOp::Neg, x);
        case 7:
            return Expr::binary(ScalarOp::Pow, x, Expr::lit(Expr::Literal::Int, 2));
        default:
            return Expr::unary(ScalarOp::Abs, x);
        }
    };
    std::vector<Expr> parts;
    for (int k = 0; k < n; ++k)
        parts.push_back(Expr::in(k));
    while (parts.size() > 1) {
        std::shuffle(parts.begin(), parts.end(), rng_);
        Expr a = parts.back();
        parts.pop_back();
        Expr b = parts.back();
        parts.pop_back();
        Expr c;
        switch (weighted({5, 4, 5, 2, 1, 1})) {
        case 0:
            c = Expr::binary(ScalarOp::Add, a, b);
            break;
        case 1:
            c = Expr::binary(ScalarOp::Sub, a, b);
            break;
        case 2:
            c = Expr::binary(ScalarOp::Mul, a, b);
            break;
        case 3:
            c = Expr::binary(
                ScalarOp::Div, a,
                Expr::binary(ScalarOp::Add, lit(1.5), Expr::binary(ScalarOp::Mul, b, b)));
            break;
        case 4:
            c = Expr::binary(ScalarOp::Max, a, b);
            break;
        default:
            c = Expr::binary(ScalarOp::Min, a, b);
            break;
        }
        parts.push_back(chance(0.4) ? smooth_unary(c) : c);
    }
    return chance(0.5) ? smooth_unary(parts.front()) : parts.front();
}

Expr Generator::linear_expr(int n) {
    Expr e;
    for (int k = 0; k < n; ++k) {
        Expr term = Expr::in(k);
        if (chance(0.5))
            term = Expr::binary(
                ScalarOp::Mul, term,
                Expr::lit(Expr::Literal::Double, pick(std::vector<double>{0.5, -1.5, 2.0, 3.0})));
        if (k == 0)
            e = chance(0.2) ? Expr::unary(ScalarOp::Neg, term) : term;
        else
            e = Expr::binary(chance(0.6) ? ScalarOp::Add : ScalarOp::Sub, e, term);
    }
    return e;
}

} // namespace hedra::fuzz::detail

// The generator's state, shared by its source files: the program so far, the hedra arrays and
// metas of its ops, and the random choices. fuzz_generator.cpp holds leaves, maps and the main
// loop; fuzz_generator_shapes.cpp the reshapes, views, reductions and fuse/overwrite/stack;
// fuzz_generator_scan.cpp the scans.
#pragma once

#include <random>

#include "fuzz/lib/fuzz_analysis.hpp"
#include "fuzz/lib/fuzz_generator.hpp"

namespace hedra::fuzz::detail {

// Broadcast two shapes from the right as hedra does; nothing if incompatible.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

class Generator {
public:
    Generator(std::uint64_t seed, const GeneratorOptions& options);
    Generated run();

    // ---- random choices
    std::int64_t uniform(std::int64_t lo, std::int64_t hi); // inclusive
    bool chance(double p);
    template <class T>
    const T& pick(const std::vector<T>& v) {
        return v[static_cast<std::size_t>(uniform(0, static_cast<std::int64_t>(v.size()) - 1))];
    }
    int weighted(const std::vector<int>& weights); // index chosen with the given weights

    Range random_range(std::int64_t max_size = 64);
    Shape random_shape(int rank);
    DType random_dtype();

    // ---- the program so far
    // Appends `op`, builds it; returns its index, or -1 (op removed) if hedra rejects it, the
    // analysis calls it invalid, or it is too large.
    int add(Op op);
    const Array& value(int i) const { return values_[static_cast<std::size_t>(i)]; }
    const Meta& meta(int i) const { return metas_[static_cast<std::size_t>(i)]; }
    int num_ops() const { return static_cast<int>(program_.ops.size()); }
    // An existing op (biased to recent ones) satisfying `ok`, or -1.
    template <class F>
    int find(F ok) {
        std::vector<int> candidates;
        for (int i = 0; i < num_ops(); ++i)
            if (ok(i)) candidates.push_back(i);
        if (candidates.empty()) return -1;
        if (chance(0.5)) return candidates.back();
        return pick(candidates);
    }
    int any_array() {
        return find([](int) { return true; });
    }

    // ---- leaves (fuzz_generator.cpp)
    int data(const Shape& s, DType t);
    int leaf(); // a random leaf of any kind
    // An array of shape s and dtype t: a selection from `hint` if it covers s, an existing
    // array, a new data leaf or a full array.
    int array_of_shape(const Shape& s, DType t, int hint);
    int cast_to(int i, DType t);

    // ---- maps (fuzz_generator.cpp)
    int map();
    int map_over(const std::vector<int>& operands);
    Expr random_expr(int num_inputs, const std::vector<Meta>& metas, const std::vector<Sym>& syms);
    Expr smooth_expr(int num_inputs);
    Expr reuse_step(int num_inputs); // a Repeat's step (fuzz_program.hpp)
    Expr linear_expr(int num_inputs);
    Expr random_literal();

    // ---- shape operations (fuzz_generator_shapes.cpp)
    int reshape_transform(int a);
    int reshape_shape(int a);
    int view(int a);
    int broadcast(int a);
    int reduce(int a);
    int fuse(int a);
    int overwrite(int a);
    int stack(int a);
    int matmul(int a);
    int transpose(int a);
    int pad(int a);
    int flatten(int a);
    int unflatten(int a);
    int cast(int a);
    int take(int a);
    int scan(int a);    // fuzz_generator_scan.cpp
    int rebased(int a); // a, or rebase(a) if some axis is not 0-based step 1

    const GeneratorOptions& options() const { return options_; }

private:
    int step(); // one random operation
    void choose_outputs();

    GeneratorOptions options_;
    std::mt19937_64 rng_;
    std::uint64_t seed_;
    FuzzProgram program_;
    std::vector<Array> values_;
    std::vector<Meta> metas_;
    std::vector<std::string> rejections_;
    std::vector<std::string> dropped_;
};

} // namespace hedra::fuzz::detail

// The differential runner (see fuzz_runner.hpp).
#include "fuzz/lib/fuzz_runner.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>

#include "backends/openmp/openmp_backend.hpp"
#include "fuzz/lib/fuzz_analysis.hpp"
#include "fuzz/lib/fuzz_data.hpp"

namespace hedra::fuzz {

namespace {

double unit(DType t) {
    return t == DType::F32 ? 0x1p-24 : 0x1p-53;
}

// Element i of a float array, exactly.
double float_at(const HostArray& a, std::int64_t i) {
    if (a.dtype() == DType::F32) return static_cast<const float*>(a.raw())[i];
    return static_cast<const double*>(a.raw())[i];
}

bool same_float(double g, double w, const Meta& m, DType t) {
    if (std::isnan(g) || std::isnan(w)) return std::isnan(g) && std::isnan(w);
    switch (m.frag) {
    case Frag::Exact:
        return g == w && std::signbit(g) == std::signbit(w);
    case Frag::ZeroSign:
        return g == w;
    case Frag::Approx:
        if (std::isinf(g) || std::isinf(w)) return g == w;
        return std::fabs(g - w) <= 4 * m.err + 8 * unit(t) * std::fabs(w) + 1e-300;
    }
    return false;
}

// An empty string when equal, else a description of the first differences.
std::string compare(const HostArray& got, const HostArray& want, const Meta& m) {
    std::ostringstream out;
    if (got.sizes() != want.sizes() || got.dtype() != want.dtype()) {
        out << "result has dtype " << dtype_name(got.dtype()) << " and " << got.sizes().size()
            << " axes, the reference " << dtype_name(want.dtype());
        return out.str();
    }
    int reported = 0;
    std::int64_t bad = 0;
    std::size_t width = dtype_size(want.dtype());
    for (std::int64_t i = 0; i < want.size(); ++i) {
        bool ok;
        if (is_float(want.dtype()))
            ok = same_float(float_at(got, i), float_at(want, i), m, want.dtype());
        else
            ok = std::memcmp(static_cast<const char*>(got.raw()) + i * width,
                             static_cast<const char*>(want.raw()) + i * width, width) == 0 ||
                 (want.dtype() == DType::Bool && (got.flat(i) != 0) == (want.flat(i) != 0));
        if (ok) continue;
        ++bad;
        if (reported++ < 4) {
            char buf[160];
            std::snprintf(buf, sizeof buf, "element %lld: openmp %.17g, reference %.17g; ",
                          static_cast<long long>(i), got.flat(i), want.flat(i));
            out << buf;
        }
    }
    if (bad == 0) return "";
    out << bad << " of " << want.size() << " elements differ (" << frag_name(m.frag);
    if (m.frag == Frag::Approx) out << ", allowed error " << 4 * m.err;
    out << ")";
    return out.str();
}

std::vector<HostArray> evaluate_on(const std::string& backend, const BuiltProgram& b,
                                   const CompileOptions& options) {
    if (b.placeholders.empty()) {
        std::vector<NodePtr> nodes;
        for (const Array& a : b.outputs)
            nodes.push_back(a.node());
        return get_backend(backend)->evaluate(nodes, options);
    }
    ComputeOptions co;
    static_cast<CompileOptions&>(co) = options;
    co.backend = backend;
    return compile(b.outputs, b.placeholders, co)(b.inputs);
}

// An intermediate array to memoize: not an output, depends on data, no placeholders behind it.
int memo_candidate(const FuzzProgram& p, std::uint64_t salt) {
    std::vector<bool> has_data(p.ops.size()), has_placeholder(p.ops.size());
    std::vector<int> candidates;
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        const Op& op = p.ops[i];
        has_data[i] = op.kind == OpKind::Data && !op.placeholder;
        has_placeholder[i] = op.kind == OpKind::Data && op.placeholder;
        for (int k : op.inputs) {
            has_data[i] = has_data[i] || has_data[static_cast<std::size_t>(k)];
            has_placeholder[i] = has_placeholder[i] || has_placeholder[static_cast<std::size_t>(k)];
        }
        bool output = false;
        for (int o : p.outputs)
            output = output || o == static_cast<int>(i);
        if (op.kind != OpKind::Data && has_data[i] && !has_placeholder[i] && !output)
            candidates.push_back(static_cast<int>(i));
    }
    if (candidates.empty()) return -1;
    return candidates[splitmix64(salt) % candidates.size()];
}

} // namespace

std::string RunConfig::to_string() const {
    std::string s = "threads " + std::to_string(threads) + ", tiles {";
    for (std::size_t i = 0; i < tiles.size(); ++i)
        s += (i ? "," : "") + std::to_string(tiles[i]);
    return s + "}";
}

const char* outcome_name(Outcome o) {
    switch (o) {
    case Outcome::Pass:
        return "pass";
    case Outcome::Mismatch:
        return "mismatch";
    case Outcome::BackendError:
        return "openmp error";
    case Outcome::ReferenceError:
        return "reference error";
    case Outcome::BuildError:
        return "build error";
    case Outcome::Invalid:
        return "invalid";
    }
    return "?";
}

RunResult run_symbolic(const FuzzProgram& p, bool& drawn) {
    openmp_backend();
    drawn = false;
    std::optional<std::vector<Meta>> metas;
    try {
        BuiltProgram fixed = build(p);
        metas = analyze(p, fixed.values);
    } catch (const Error& e) {
        return {Outcome::BuildError, e.what(), {}};
    }
    if (!metas) return {Outcome::Invalid, "the analysis rejects the program", {}};
    int k = -1;
    std::optional<BuiltProgram> b = build_symbolic(p, k);
    if (!b) return {};
    drawn = true;
    const HostArray& full = b->inputs.at(static_cast<std::size_t>(k));
    const std::int64_t max = full.sizes().at(0);
    ComputeOptions ref, omp;
    ref.backend = "reference";
    omp.backend = "openmp";
    std::optional<CompiledProgram> want_p, got_p;
    try {
        want_p = compile(b->outputs, b->placeholders, ref);
    } catch (const Error& e) {
        return {Outcome::ReferenceError, std::string("symbolic: ") + e.what(), {}};
    }
    try {
        got_p = compile(b->outputs, b->placeholders, omp);
    } catch (const Error& e) {
        return {Outcome::BackendError, std::string("symbolic: ") + e.what(), {}};
    }
    for (std::int64_t n : {max, std::max<std::int64_t>(1, max / 2), std::int64_t{1}}) {
        std::vector<std::int64_t> sizes = full.sizes();
        sizes[0] = n;
        HostArray rows(sizes, full.dtype());
        std::memcpy(rows.raw_mutable(), full.raw(), rows.bytes());
        std::vector<HostArray> inputs = b->inputs;
        inputs[static_cast<std::size_t>(k)] = rows;
        const std::string what =
            "symbolic fz=" + std::to_string(n) + " of " + std::to_string(max) + ": ";
        std::vector<HostArray> want, got;
        try {
            want = (*want_p)(inputs);
        } catch (const Error& e) {
            return {Outcome::ReferenceError, what + e.what(), {}};
        }
        try {
            got = (*got_p)(inputs);
        } catch (const Error& e) {
            return {Outcome::BackendError, what + e.what(), {}};
        }
        for (std::size_t o = 0; o < want.size(); ++o) {
            std::string diff = compare(got.at(o), want[o], (*metas)[p.outputs[o]]);
            if (!diff.empty())
                return {Outcome::Mismatch, what + "output " + std::to_string(o) + ": " + diff, {}};
        }
    }
    return {};
}

std::vector<RunConfig> configs_for(std::uint64_t seed) {
    static const std::vector<std::vector<std::int64_t>> tiles = {{1},    {3},     {16, 8, 5},
                                                                 {2, 7}, {64, 1}, {5, 3, 2, 4}};
    return {{1, {}}, {2, {}}, {2, tiles[splitmix64(seed) % tiles.size()]}};
}

std::shared_ptr<Backend> openmp_backend() {
    static const bool registered = [] {
        setenv("HEDRA_MIN_PARALLEL_WORK", "0", 1);
        bool known = false;
        for (const std::string& n : backend_names())
            known = known || n == "openmp";
        if (!known)
            register_backend("openmp", [] { return std::make_shared<backend::OpenMPBackend>(); });
        return true;
    }();
    (void)registered;
    return get_backend("openmp");
}

RunResult run_differential(const FuzzProgram& p, const std::vector<RunConfig>& configs,
                           const RunnerOptions& options) {
    openmp_backend();
    BuiltProgram b;
    try {
        b = build(p);
    } catch (const Error& e) {
        return {Outcome::BuildError, e.what(), {}};
    }
    auto metas = analyze(p, b.values);
    if (!metas) return {Outcome::Invalid, "the analysis rejects the program", {}};
    std::vector<HostArray> want;
    try {
        want = evaluate_on("reference", b, {});
    } catch (const Error& e) {
        return {Outcome::ReferenceError, e.what(), {}};
    }
    auto check = [&](const RunConfig& c, const char* what) -> RunResult {
        CompileOptions o;
        o.num_threads = c.threads;
        o.tile_sizes = c.tiles;
        std::vector<HostArray> got;
        try {
            got = evaluate_on(options.backend, b, o);
        } catch (const Error& e) {
            return {Outcome::BackendError, std::string(what) + e.what(), c};
        }
        for (std::size_t k = 0; k < want.size(); ++k) {
            std::string diff = compare(got.at(k), want[k], (*metas)[p.outputs[k]]);
            if (!diff.empty())
                return {Outcome::Mismatch,
                        std::string(what) + "output " + std::to_string(k) + " (v" +
                            std::to_string(p.outputs[k]) + "): " + diff,
                        c};
        }
        return {};
    };
    for (std::size_t i = 0; i < configs.size(); ++i) {
        RunResult r = check(configs[i], "");
        if (r.outcome != Outcome::Pass) return r;
        if (i == 0 && options.rerun) {
            r = check(configs[i], "second run: ");
            if (r.outcome != Outcome::Pass) return r;
        }
    }
    if (options.memo_check && !configs.empty()) {
        int m = memo_candidate(p, p.seed);
        if (m >= 0) {
            ComputeOptions ref;
            ref.backend = "reference";
            try {
                compute(b.values[static_cast<std::size_t>(m)], ref);
            } catch (const Error& e) {
                return {Outcome::ReferenceError, std::string("memoizing: ") + e.what(), {}};
            }
            RunResult r =
                check(configs.back(), ("after memoizing v" + std::to_string(m) + ": ").c_str());
            if (r.outcome != Outcome::Pass) return r;
        }
    }
    return {};
}

std::vector<RunResult> run_differential_batch(const std::vector<FuzzProgram>& programs,
                                              const std::vector<RunConfig>& configs,
                                              const RunnerOptions& options) {
    openmp_backend();
    std::vector<RunResult> results(programs.size());
    struct Member {
        std::size_t index;
        BuiltProgram built;
        std::vector<Meta> metas;
        std::vector<HostArray> want;
        std::size_t first_output; // in the batch's node list
    };
    std::vector<Member> members;
    std::vector<NodePtr> nodes;
    for (std::size_t i = 0; i < programs.size(); ++i) {
        const FuzzProgram& p = programs[i];
        bool alone = false;
        for (const Op& op : p.ops)
            alone = alone || op.placeholder;
        Member m{i, {}, {}, {}, nodes.size()};
        try {
            m.built = build(p);
            auto metas = analyze(p, m.built.values);
            alone = alone || !metas;
            if (metas) m.metas = *metas;
            if (!alone) m.want = evaluate_on("reference", m.built, {});
        } catch (const Error&) {
            alone = true;
        }
        if (alone) {
            results[i] = run_differential(p, configs, options);
            continue;
        }
        for (const Array& a : m.built.outputs)
            nodes.push_back(a.node());
        members.push_back(std::move(m));
    }
    if (members.empty()) return results;
    auto alone = [&] { // attribute a failure of the shared evaluation
        bool any = false;
        for (const Member& m : members) {
            results[m.index] = run_differential(programs[m.index], configs, options);
            any = any || results[m.index].outcome != Outcome::Pass;
        }
        return any;
    };
    auto check = [&](const RunConfig& c, const std::string& what) -> bool {
        CompileOptions o;
        o.num_threads = c.threads;
        o.tile_sizes = c.tiles;
        std::vector<HostArray> got;
        try {
            got = get_backend(options.backend)->evaluate(nodes, o);
        } catch (const Error& e) {
            if (!alone())
                for (const Member& m : members)
                    results[m.index] = {Outcome::BackendError,
                                        "only in a batch of " + std::to_string(members.size()) +
                                            " programs: " + what + e.what(),
                                        c};
            return false;
        }
        bool ok = true;
        for (const Member& m : members) {
            const FuzzProgram& p = programs[m.index];
            for (std::size_t k = 0; k < m.want.size(); ++k) {
                std::string diff = compare(got.at(m.first_output + k), m.want[k],
                                           m.metas[static_cast<std::size_t>(p.outputs[k])]);
                if (diff.empty()) continue;
                results[m.index] = {Outcome::Mismatch,
                                    "in a batch of " + std::to_string(members.size()) + ": " +
                                        what + "output " + std::to_string(k) + " (v" +
                                        std::to_string(p.outputs[k]) + "): " + diff,
                                    c};
                ok = false;
                break;
            }
        }
        return ok;
    };
    for (std::size_t i = 0; i < configs.size(); ++i) {
        if (!check(configs[i], "")) return results;
        if (i == 0 && options.rerun && !check(configs[i], "second run: ")) return results;
    }
    if (options.memo_check && !configs.empty()) {
        ComputeOptions ref;
        ref.backend = "reference";
        for (const Member& m : members) {
            int c = memo_candidate(programs[m.index], programs[m.index].seed);
            if (c >= 0) compute(m.built.values[static_cast<std::size_t>(c)], ref);
        }
        check(configs.back(), "after memoizing intermediates: ");
    }
    return results;
}

} // namespace hedra::fuzz

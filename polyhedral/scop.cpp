// Builds the isl view of a kernel from the kernel IR (see scop.hpp).
#include "polyhedral/scop.hpp"

#include <isl/aff.h>
#include <isl/map.h>
#include <isl/schedule.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include "core/error.hpp"

namespace hedra::poly {
namespace {

std::string counters(int rank) {
    std::string s;
    for (int d = 0; d < rank; ++d)
        s += (d ? ", i" : "i") + std::to_string(d);
    return s;
}

std::string affine_component(const AffineMap& m, int out) {
    std::string s;
    for (int in = 0; in < m.in_rank(); ++in) {
        std::int64_t c = m.coeff(out, in);
        if (c == 0) continue;
        if (!s.empty())
            s += c > 0 ? " + " : " - ";
        else if (c < 0)
            s += "-";
        std::int64_t a = c < 0 ? -c : c;
        if (a != 1) s += std::to_string(a) + "*";
        s += "i" + std::to_string(in);
    }
    std::int64_t b = m.offset(out);
    if (s.empty()) return std::to_string(b);
    if (b > 0) s += " + " + std::to_string(b);
    if (b < 0) s += " - " + std::to_string(-b);
    return s;
}

IslPtr<isl_union_map> access_map(isl_ctx* ctx, const Statement& st, const AffineMap& access,
                                 const std::string& buffer, const IslPtr<isl_set>& domain,
                                 const std::vector<std::int64_t>& indirect_extent = {}) {
    std::string text = access_relation_string(st, access, buffer, indirect_extent);
    isl_map* map = isl_map_read_from_str(ctx, text.c_str());
    HEDRA_INTERNAL_CHECK(map != nullptr, "scop: isl cannot parse the access " + text);
    map = isl_map_intersect_domain(map, domain.copy());
    return take(isl_union_map_from_map(map));
}

IslPtr<isl_union_map> unite(IslPtr<isl_union_map> a, IslPtr<isl_union_map> b) {
    return take(isl_union_map_union(a.release(), b.release()));
}

// The statement alone, its counters in lexicographic order.
IslPtr<isl_schedule> statement_order(const Statement& st, const IslPtr<isl_set>& domain) {
    isl_schedule* s = isl_schedule_from_domain(isl_union_set_from_set(domain.copy()));
    if (st.extents.empty()) return take(s);
    isl_ctx* ctx = isl_set_get_ctx(domain.get());
    std::string text = "{ " + st.name + "[" + counters(static_cast<int>(st.extents.size())) +
                       "] -> [" + counters(static_cast<int>(st.extents.size())) + "] }";
    isl_union_map* map = isl_union_map_read_from_str(ctx, text.c_str());
    HEDRA_INTERNAL_CHECK(map != nullptr, "scop: isl cannot parse " + text);
    isl_multi_union_pw_aff* band = isl_multi_union_pw_aff_from_union_map(map);
    return take(isl_schedule_insert_partial_schedule(s, band));
}

} // namespace

std::string iteration_domain_string(const Statement& st) {
    int rank = static_cast<int>(st.extents.size());
    std::string s = "{ " + st.name + "[" + counters(rank) + "]";
    for (int d = 0; d < rank; ++d)
        s += std::string(d ? " and " : " : ") + "0 <= i" + std::to_string(d) + " < " +
             std::to_string(st.extents[d]);
    for (const AffineMap& g : st.guards) {
        HEDRA_INTERNAL_CHECK(g.in_rank() == rank && g.out_rank() == 1,
                             "scop: a malformed guard of " + st.name);
        s += " and " + affine_component(g, 0) + " >= 0";
    }
    return s + " }";
}

std::string access_relation_string(const Statement& st, const AffineMap& access,
                                   const std::string& buffer_name,
                                   const std::vector<std::int64_t>& indirect_extent) {
    int rank = static_cast<int>(st.extents.size());
    int extra = static_cast<int>(indirect_extent.size());
    HEDRA_INTERNAL_CHECK(access.in_rank() == rank + extra, "scop: access rank of " + st.name);
    std::string s = "{ " + st.name + "[" + counters(rank) + "] -> " + buffer_name + "[";
    if (extra == 0) {
        for (int o = 0; o < access.out_rank(); ++o)
            s += (o ? ", " : "") + affine_component(access, o);
        return s + "] }";
    }
    std::vector<std::string> where;
    for (int o = 0; o < access.out_rank(); ++o) {
        s += (o ? ", o" : "o") + std::to_string(o);
        where.push_back("o" + std::to_string(o) + " = " + affine_component(access, o));
    }
    s += "] : exists (";
    for (int j = 0; j < extra; ++j) {
        std::string e = "i" + std::to_string(rank + j);
        s += (j ? ", " : "") + e;
        where.push_back("0 <= " + e + " < " + std::to_string(indirect_extent[j]));
    }
    s += " : ";
    for (std::size_t k = 0; k < where.size(); ++k)
        s += (k ? " and " : "") + where[k];
    return s + ") }";
}

std::string access_relation_string(const Statement& st, const Read& read,
                                   const std::string& buffer_name) {
    return access_relation_string(st, read.access, buffer_name, read.indirect_extent);
}

IslPtr<isl_schedule> statement_program_order(const Scop& scop, int statement) {
    return statement_order(scop.kernel->statements.at(statement),
                           scop.statement_domains.at(statement));
}

int Scop::statement_index(const std::string& name) const {
    for (std::size_t i = 0; i < kernel->statements.size(); ++i)
        if (kernel->statements[i].name == name) return static_cast<int>(i);
    return -1;
}

namespace {

std::string param_tuple(const ProgramIR& program) {
    std::string s = "[";
    for (std::size_t k = 0; k < program.params.size(); ++k)
        s += (k ? ", " : "") + param_value_name(static_cast<int>(k));
    return s + "] -> ";
}

} // namespace

IslPtr<isl_union_set> symbolic_instances(IslContext& context, const Scop& scop) {
    const ProgramIR& program = *scop.program;
    if (program.params.empty()) return {};
    std::string text = param_tuple(program) + "{ ";
    for (std::size_t s = 0; s < scop.kernel->statements.size(); ++s) {
        const Statement& st = scop.kernel->statements[s];
        const int rank = static_cast<int>(st.extents.size());
        text += (s ? "; " : "") + st.name + "[" + counters(rank) + "]";
        for (std::size_t b = 0; b < st.param_bounds.size(); ++b) {
            const ParamBound& pb = st.param_bounds[b];
            int k = program.param_index(pb.param);
            HEDRA_INTERNAL_CHECK(k >= 0 && pb.expr.in_rank() == rank && pb.expr.out_rank() == 1,
                                 "scop: a malformed bound of " + st.name);
            text += std::string(b ? " and " : " : ") + affine_component(pb.expr, 0) + " < " +
                    param_value_name(k);
        }
    }
    text += " }";
    isl_union_set* set = isl_union_set_read_from_str(context.get(), text.c_str());
    HEDRA_INTERNAL_CHECK(set != nullptr, "scop: isl cannot parse " + text);
    return take(set);
}

IslPtr<isl_set> symbolic_context(IslContext& context, const ProgramIR& program) {
    if (program.params.empty()) return {};
    // Only the lower bound: with the maximum left out, a loop over a symbolic extent keeps it
    // in its bound, min(max - 1, n - 1), where the printers read the constant (a register
    // tile sizes its packed panels by it).
    std::string text = param_tuple(program) + "{ : ";
    for (std::size_t k = 0; k < program.params.size(); ++k)
        text += (k ? " and 1 <= " : "1 <= ") + param_value_name(static_cast<int>(k));
    text += " }";
    isl_set* set = isl_set_read_from_str(context.get(), text.c_str());
    HEDRA_INTERNAL_CHECK(set != nullptr, "scop: isl cannot parse " + text);
    return take(set);
}

Scop build_scop(IslContext& context, const ProgramIR& program, const Kernel& kernel) {
    isl_ctx* ctx = context.get();
    Scop scop;
    scop.program = &program;
    scop.kernel = &kernel;
    scop.domain = take(isl_union_set_empty(isl_space_params_alloc(ctx, 0)));
    scop.writes = take(isl_union_map_empty(isl_space_params_alloc(ctx, 0)));
    scop.reads = take(isl_union_map_empty(isl_space_params_alloc(ctx, 0)));
    IslPtr<isl_schedule> order;
    for (const Statement& st : kernel.statements) {
        std::string text = iteration_domain_string(st);
        IslPtr<isl_set> domain = take(isl_set_read_from_str(ctx, text.c_str()));
        HEDRA_INTERNAL_CHECK(domain, "scop: isl cannot parse the domain " + text);
        scop.statement_domains.push_back(domain);
        scop.domain =
            take(isl_union_set_union(scop.domain.release(), isl_union_set_from_set(domain.copy())));
        const Buffer& out = program.buffers.at(st.write_buffer);
        scop.writes = unite(scop.writes, access_map(ctx, st, st.write_access, out.name, domain,
                                                    st.write_indirect_extent));
        for (const Statement::TupleWrite& w : st.tuple_writes)
            scop.writes = unite(scop.writes, access_map(ctx, st, st.write_access,
                                                        program.buffers.at(w.buffer).name, domain));
        if (st.kind == StatementKind::Update)
            scop.reads = unite(scop.reads, access_map(ctx, st, st.write_access, out.name, domain,
                                                      st.write_indirect_extent));
        for (const Read& r : st.reads) {
            if (r.buffer < 0) continue;
            const Buffer& in = program.buffers.at(r.buffer);
            scop.reads = unite(scop.reads,
                               access_map(ctx, st, r.access, in.name, domain, r.indirect_extent));
        }
        IslPtr<isl_schedule> s = statement_order(st, domain);
        order = order ? take(isl_schedule_sequence(order.release(), s.release())) : s;
    }
    if (!order) order = take(isl_schedule_empty(isl_space_params_alloc(ctx, 0)));
    scop.program_order = order;
    return scop;
}

} // namespace hedra::poly

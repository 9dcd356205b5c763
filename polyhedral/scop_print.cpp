// Text views of a scop and its dependences (see scop_print.hpp).
#include "polyhedral/scop_print.hpp"

#include <isl/map.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include "core/error.hpp"

namespace hedra::poly {
namespace {

std::string restricted_access(isl_ctx* ctx, const Statement& st, const AffineMap& access,
                              const std::string& buffer, const IslPtr<isl_set>& domain,
                              const std::vector<std::int64_t>& indirect_extent = {}) {
    std::string text = access_relation_string(st, access, buffer, indirect_extent);
    isl_map* map = isl_map_read_from_str(ctx, text.c_str());
    HEDRA_INTERNAL_CHECK(map != nullptr, "scop_print: isl cannot parse the access " + text);
    return take(isl_map_intersect_domain(map, domain.copy())).to_string();
}

} // namespace

std::vector<StatementDescription> describe_scop(const Scop& scop) {
    std::vector<StatementDescription> out;
    isl_ctx* ctx = isl_union_set_get_ctx(scop.domain.get());
    for (std::size_t i = 0; i < scop.kernel->statements.size(); ++i) {
        const Statement& st = scop.kernel->statements[i];
        const IslPtr<isl_set>& domain = scop.statement_domains.at(i);
        StatementDescription d;
        d.name = st.name;
        d.kind = st.kind == StatementKind::Update ? "update" : "assign";
        d.domain = domain.to_string();
        const std::string& out_name = scop.program->buffers.at(st.write_buffer).name;
        d.accesses.push_back({"write", out_name,
                              restricted_access(ctx, st, st.write_access, out_name, domain,
                                                st.write_indirect_extent)});
        if (st.kind == StatementKind::Update)
            d.accesses.push_back({"read-accumulator", out_name,
                                  restricted_access(ctx, st, st.write_access, out_name, domain,
                                                    st.write_indirect_extent)});
        for (const Read& r : st.reads) {
            if (r.buffer < 0) continue;
            const std::string& name = scop.program->buffers.at(r.buffer).name;
            d.accesses.push_back(
                {"read", name,
                 restricted_access(ctx, st, r.access, name, domain, r.indirect_extent)});
        }
        out.push_back(std::move(d));
    }
    return out;
}

std::string domains_text(const std::vector<StatementDescription>& statements) {
    std::string s;
    for (const StatementDescription& d : statements)
        s += d.name + " := " + d.domain + "\n";
    return s;
}

std::string accesses_text(const std::vector<StatementDescription>& statements) {
    std::string s;
    for (const StatementDescription& d : statements)
        for (const AccessDescription& a : d.accesses)
            s += d.name + " " + a.kind + " " + a.buffer + " := " + a.relation + "\n";
    return s;
}

std::string dependences_text(const Dependences& deps) {
    return "flow := " + deps.flow.to_string() + "\noutput := " + deps.output.to_string() +
           "\nanti := " + deps.anti.to_string() + "\n";
}

} // namespace hedra::poly

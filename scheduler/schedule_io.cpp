// Schedule printing, parsing and legality checks (see schedule_io.hpp).
#include "scheduler/schedule_io.hpp"

#include <cstdlib>

#include <isl/ctx.h>
#include <isl/printer.h>
#include <isl/schedule.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include "core/error.hpp"

namespace hedra::sched {
namespace {

using poly::IslPtr;
using poly::take;

template <class T, class Print>
std::string block_yaml(T* object, isl_ctx* ctx, Print print) {
    if (!object) return "null\n";
    isl_printer* p = isl_printer_to_str(ctx);
    p = isl_printer_set_yaml_style(p, ISL_YAML_STYLE_BLOCK);
    p = print(p, object);
    char* s = isl_printer_get_str(p);
    isl_printer_free(p);
    std::string out = s ? s : "null";
    std::free(s);
    if (out.empty() || out.back() != '\n') out += '\n';
    return out;
}

} // namespace

std::string schedule_yaml(const IslPtr<isl_schedule>& schedule) {
    if (!schedule) return "null\n";
    return block_yaml(schedule.get(), isl_schedule_get_ctx(schedule.get()),
                      isl_printer_print_schedule);
}

std::string constraints_yaml(const IslPtr<isl_schedule_constraints>& constraints) {
    if (!constraints) return "null\n";
    return block_yaml(constraints.get(), isl_schedule_constraints_get_ctx(constraints.get()),
                      isl_printer_print_schedule_constraints);
}

std::vector<std::string> statement_schedule_maps(const poly::Scop& scop,
                                                 const IslPtr<isl_schedule>& schedule) {
    IslPtr<isl_union_map> all = take(isl_schedule_get_map(schedule.get()));
    std::vector<std::string> out;
    for (const IslPtr<isl_set>& domain : scop.statement_domains) {
        isl_union_map* m =
            isl_union_map_intersect_domain(all.copy(), isl_union_set_from_set(domain.copy()));
        out.push_back(take(m).to_string());
    }
    return out;
}

IslPtr<isl_schedule> parse_schedule(poly::IslContext& ctx, const std::string& text,
                                    const std::string& what) {
    ctx.reset_error();
    IslPtr<isl_schedule> s = take(isl_schedule_read_from_str(ctx.get(), text.c_str()));
    if (!s) {
        std::string msg = ctx.last_error();
        ctx.reset_error();
        throw Error(what + " is not an isl schedule" + (msg.empty() ? "" : ": " + msg));
    }
    return s;
}

std::string domain_mismatch(const poly::Scop& scop, const IslPtr<isl_schedule>& schedule) {
    IslPtr<isl_union_set> have = take(isl_schedule_get_domain(schedule.get()));
    if (isl_union_set_is_equal(have.get(), scop.domain.get()) == isl_bool_true) return "";
    IslPtr<isl_union_set> missing = take(isl_union_set_subtract(scop.domain.copy(), have.copy()));
    IslPtr<isl_union_set> extra = take(isl_union_set_subtract(have.copy(), scop.domain.copy()));
    std::string s;
    if (isl_union_set_is_empty(missing.get()) != isl_bool_true)
        s += "it does not schedule " + missing.to_string();
    if (isl_union_set_is_empty(extra.get()) != isl_bool_true)
        s += std::string(s.empty() ? "" : "; ") + "it schedules instances the kernel lacks " +
             extra.to_string();
    return s;
}

IslPtr<isl_union_map> violated_dependences(const poly::Dependences& deps,
                                           const IslPtr<isl_schedule>& schedule) {
    IslPtr<isl_union_map> map = take(isl_schedule_get_map(schedule.get()));
    // Pairs of instances the schedule runs in order: a before b.
    IslPtr<isl_union_map> ordered = take(isl_union_map_lex_lt_union_map(map.copy(), map.copy()));
    IslPtr<isl_union_map> all = deps.all();
    return take(isl_union_map_subtract(all.release(), ordered.release()));
}

bool is_empty(const IslPtr<isl_union_map>& map) {
    return isl_union_map_is_empty(map.get()) == isl_bool_true;
}

} // namespace hedra::sched

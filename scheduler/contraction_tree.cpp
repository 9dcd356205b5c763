// The schedule tree of a planned contraction (see contraction_schedule.hpp): an outer band of
// the parallel and tile loops, the permutable mark, the rows, and inside them the reduction
// (with the row's init ahead of it when the plan absorbs it). The plan itself comes from the
// cost model in contraction_schedule.cpp.
#include "scheduler/contraction_schedule.hpp"

#include <array>
#include <string>

#include <isl/aff.h>
#include <isl/id.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_set.h>

#include "core/error.hpp"
#include "scheduler/loop_ast.hpp"

namespace hedra::sched {
namespace {

using poly::Statement;

std::string counters(int rank) {
    std::string s;
    for (int d = 0; d < rank; ++d)
        s += (d ? ", i" : "i") + std::to_string(d);
    return s;
}

// "[{ S[i..] -> [(e0)]; T[i..] -> [(f0)] }, ...]": member m of each statement's expressions.
isl_multi_union_pw_aff*
band_of(isl_ctx* ctx,
        const std::vector<std::pair<const Statement*, std::vector<std::string>>>& parts) {
    std::string s = "[";
    for (std::size_t m = 0; m < parts[0].second.size(); ++m) {
        s += m ? ", { " : "{ ";
        for (std::size_t p = 0; p < parts.size(); ++p) {
            const Statement& st = *parts[p].first;
            s += (p ? "; " : "") + st.name + "[" + counters(static_cast<int>(st.extents.size())) +
                 "] -> [(" + parts[p].second[m] + ")]";
        }
        s += " }";
    }
    s += "]";
    isl_multi_union_pw_aff* band = isl_multi_union_pw_aff_read_from_str(ctx, s.c_str());
    HEDRA_INTERNAL_CHECK(band, "contraction_schedule: isl cannot parse " + s);
    return band;
}

// Per counter of `update`, the counter of `init` that writes the same result axis (-1 for a
// reduction counter); empty unless both write each axis through one counter with coefficient
// 1, the same offset and the same extent, and every counter of `init` is one of them.
std::vector<int> counter_map(const Statement& update, const Statement& init) {
    std::vector<int> map(update.extents.size(), -1);
    std::vector<bool> used(init.extents.size(), false);
    const AffineMap &wu = update.write_access, &wi = init.write_access;
    if (wu.out_rank() != wi.out_rank()) return {};
    auto single = [](const AffineMap& m, int row) {
        int c = -1;
        for (int d = 0; d < m.in_rank(); ++d) {
            if (m.coeff(row, d) == 0) continue;
            if (m.coeff(row, d) != 1 || c >= 0) return -2;
            c = d;
        }
        return c;
    };
    for (int r = 0; r < wu.out_rank(); ++r) {
        int cu = single(wu, r), ci = single(wi, r);
        if (cu == -2 || ci == -2 || wu.offset(r) != wi.offset(r)) return {};
        if (cu < 0 && ci < 0) continue;
        if (cu < 0 || ci < 0 || map[cu] >= 0 || used[ci] || update.extents[cu] != init.extents[ci])
            return {};
        map[cu] = ci;
        used[ci] = true;
    }
    for (std::size_t j = 0; j < used.size(); ++j)
        if (!used[j] && init.extents[j] != 1) return {};
    return map;
}

isl_schedule_node* insert_band(isl_schedule_node* node, isl_multi_union_pw_aff* band,
                               const std::vector<bool>& coincident) {
    node = isl_schedule_node_insert_partial_schedule(node, band);
    node = isl_schedule_node_band_set_permutable(node, 1);
    for (std::size_t m = 0; m < coincident.size(); ++m)
        node =
            isl_schedule_node_band_member_set_coincident(node, static_cast<int>(m), coincident[m]);
    return node;
}

} // namespace

int absorbable_init(const poly::Scop& scop, const ContractionPlan& plan,
                    const std::vector<int>& inits) {
    const Statement& up = scop.kernel->statements.at(plan.statement);
    for (int k : plan.reduction)
        if (plan.tile[k] < up.extents[k]) return -1; // partial sums cross K tiles
    for (int i : inits) {
        const Statement& init = scop.kernel->statements.at(i);
        if (init.kind != poly::StatementKind::Assign || init.write_buffer != up.write_buffer ||
            !init.reads.empty() || init.value->op != ScalarOp::Const || init.value->fvalue != 0.0 ||
            init.value->ivalue != 0)
            continue;
        if (!counter_map(up, init).empty()) return i;
    }
    return -1;
}

poly::IslPtr<isl_schedule> contraction_schedule(const poly::Scop& scop, const ContractionPlan& plan,
                                                int init, int epilogue) {
    const Statement& st = scop.kernel->statements.at(plan.statement);
    isl_ctx* ctx = isl_set_get_ctx(scop.statement_domains.at(plan.statement).get());
    HEDRA_INTERNAL_CHECK(epilogue < 0 || init >= 0, "contraction_schedule: epilogue without init");
    // Per update counter, the init's (and the epilogue's) counter for the same result axis.
    std::vector<int> to_init, to_epi;
    if (init >= 0) to_init = counter_map(st, scop.kernel->statements.at(init));
    if (epilogue >= 0) to_epi = counter_map(st, scop.kernel->statements.at(epilogue));
    HEDRA_INTERNAL_CHECK(epilogue < 0 || !to_epi.empty(),
                         "contraction_schedule: the epilogue does not write the result's box");
    auto tiled = [&](int d) { return plan.tile[d] < st.extents[d]; };
    auto name = [](int d) { return "i" + std::to_string(d); };
    auto tile_of = [&](int d, int c) {
        if (plan.tile[d] == 1) return name(c);
        return "floor((" + name(c) + ")/" + std::to_string(plan.tile[d]) + ")";
    };
    auto point_of = [&](int d, int c) {
        if (!tiled(d)) return name(c);
        return "(" + name(c) + ") mod " + std::to_string(plan.tile[d]);
    };
    // Members as (update, init, epilogue) expressions.
    using Member = std::array<std::string, 3>;
    using Members = std::vector<Member>;
    Members outer, inner, init_v, update_kv;
    std::vector<bool> outer_coincident, inner_coincident, kv_coincident;
    auto all3 = [&](int d, bool point) {
        int ci = init >= 0 ? to_init[d] : d, ce = epilogue >= 0 ? to_epi[d] : d;
        return point ? Member{point_of(d, d), point_of(d, ci), point_of(d, ce)}
                     : Member{tile_of(d, d), tile_of(d, ci), tile_of(d, ce)};
    };
    for (int d : {plan.parallel, plan.a, plan.v})
        if (d >= 0 && tiled(d) && !(d == plan.v && plan.v_tiles_inside)) {
            outer.push_back(all3(d, false));
            outer_coincident.push_back(true);
        }
    for (int k : plan.reduction)
        if (tiled(k)) {
            outer.push_back({tile_of(k, k), "", ""});
            outer_coincident.push_back(false);
        }
    if (plan.v_tiles_inside && tiled(plan.v)) {
        inner.push_back(all3(plan.v, false));
        inner_coincident.push_back(true);
    }
    for (int d : plan.others) {
        inner.push_back(all3(d, true));
        inner_coincident.push_back(true);
    }
    inner.push_back(all3(plan.a, true));
    inner_coincident.push_back(true);
    for (int k : plan.reduction)
        if (plan.tile[k] > 1) {
            update_kv.push_back({point_of(k, k), "", ""});
            kv_coincident.push_back(false);
        }
    update_kv.push_back(all3(plan.v, true));
    kv_coincident.push_back(true);
    init_v.push_back(all3(plan.v, true));

    const Statement* init_st = init >= 0 ? &scop.kernel->statements.at(init) : nullptr;
    const Statement* epi_st = epilogue >= 0 ? &scop.kernel->statements.at(epilogue) : nullptr;
    // One band over the update and, for members that are not reduction tiles, the others.
    auto band = [&](const Members& members, bool with_others) {
        std::vector<std::string> up, in, ep;
        for (const Member& m : members) {
            up.push_back(m[0]);
            in.push_back(m[1]);
            ep.push_back(m[2]);
        }
        if (!with_others) return band_of(ctx, {{&st, up}});
        if (epi_st) return band_of(ctx, {{&st, up}, {init_st, in}, {epi_st, ep}});
        return band_of(ctx, {{&st, up}, {init_st, in}});
    };
    isl_union_set* domain =
        isl_union_set_from_set(scop.statement_domains.at(plan.statement).copy());
    for (int extra : {init, epilogue})
        if (extra >= 0)
            domain = isl_union_set_union(
                domain, isl_union_set_from_set(scop.statement_domains.at(extra).copy()));
    isl_schedule* schedule = isl_schedule_from_domain(domain);
    isl_schedule_node* node = isl_schedule_get_root(schedule);
    isl_schedule_free(schedule);
    node = isl_schedule_node_child(node, 0);
    if (init < 0) {
        Members all = inner;
        all.insert(all.end(), update_kv.begin(), update_kv.end());
        std::vector<bool> coincident = inner_coincident;
        coincident.insert(coincident.end(), kv_coincident.begin(), kv_coincident.end());
        node = insert_band(node, band(all, false), coincident);
    } else {
        // Inside the rows: the init's row of columns, the reduction over it, then the
        // epilogue's row of columns.
        isl_union_set_list* filters = isl_union_set_list_alloc(ctx, 3);
        filters = isl_union_set_list_add(
            filters, isl_union_set_from_set(scop.statement_domains.at(init).copy()));
        filters = isl_union_set_list_add(
            filters, isl_union_set_from_set(scop.statement_domains.at(plan.statement).copy()));
        if (epi_st)
            filters = isl_union_set_list_add(
                filters, isl_union_set_from_set(scop.statement_domains.at(epilogue).copy()));
        node = isl_schedule_node_insert_sequence(node, filters);
        node = isl_schedule_node_child(isl_schedule_node_child(node, 0), 0);
        node = insert_band(node, band_of(ctx, {{init_st, {init_v[0][1]}}}), {true});
        node = isl_schedule_node_parent(isl_schedule_node_parent(node));
        node = isl_schedule_node_child(isl_schedule_node_child(node, 1), 0);
        node = insert_band(node, band(update_kv, false), kv_coincident);
        node = isl_schedule_node_parent(isl_schedule_node_parent(node));
        if (epi_st) {
            node = isl_schedule_node_child(isl_schedule_node_child(node, 2), 0);
            node = insert_band(node, band_of(ctx, {{epi_st, {init_v[0][2]}}}), {true});
            node = isl_schedule_node_parent(isl_schedule_node_parent(node));
        }
        node = insert_band(node, band(inner, true), inner_coincident); // above the sequence
    }
    node = isl_schedule_node_insert_mark(node, isl_id_alloc(ctx, kPermutableMark, nullptr));
    if (!outer.empty()) node = insert_band(node, band(outer, init >= 0), outer_coincident);
    HEDRA_INTERNAL_CHECK(node, "contraction_schedule: isl rejected the schedule tree");
    schedule = isl_schedule_node_get_schedule(node);
    isl_schedule_node_free(node);
    return poly::take(schedule);
}

} // namespace hedra::sched

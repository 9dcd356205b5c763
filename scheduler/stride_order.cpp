// Scores band members by the memory strides of the accesses they drive (see stride_order.hpp).
#include "scheduler/stride_order.hpp"

#include <cstdint>
#include <cstdlib>

#include <isl/aff.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/union_map.h>
#include <isl/val.h>

namespace hedra::sched {
namespace {

// The counter d with aff == ±i_d + constant, or -1.
int single_counter(isl_aff* aff) {
    if (isl_aff_dim(aff, isl_dim_div) != 0) return -1;
    int found = -1;
    isl_size n = isl_aff_dim(aff, isl_dim_in);
    for (int d = 0; d < n; ++d) {
        isl_val* v = isl_aff_get_coefficient_val(aff, isl_dim_in, d);
        bool zero = isl_val_is_zero(v) == isl_bool_true;
        bool unit = isl_val_is_one(v) == isl_bool_true || isl_val_is_negone(v) == isl_bool_true;
        isl_val_free(v);
        if (zero) continue;
        if (!unit || found >= 0) return -1;
        found = d;
    }
    return found;
}

int access_score(const poly::Buffer& buffer, const AffineMap& access, int counter) {
    std::int64_t s = std::llabs(element_stride(buffer, access, counter));
    return s == 0 ? 1 : s == 1 ? 4 : -1;
}

// How good statement `st` finds counter `d` as its innermost loop.
int statement_score(const poly::ProgramIR& program, const poly::Statement& st, int d) {
    const poly::Buffer& out = program.buffers[st.write_buffer];
    int score = 2 * access_score(out, st.write_access, d);
    for (const poly::Read& r : st.reads)
        if (r.buffer >= 0) score += access_score(program.buffers[r.buffer], r.access, d);
    // A reduction of several values (reduce_multiple_value) folds along `d` when its
    // accumulators stay put there: each then lives in a register across the loop instead of a
    // load and a store per element, and the fold is no chain through memory. That outweighs
    // any layout of the other members (the inits of the accumulators score for those).
    if (!st.tuple_writes.empty() && element_stride(out, st.write_access, d) == 0)
        score += 64 * static_cast<int>(1 + st.tuple_writes.size());
    return score;
}

struct MemberScore {
    const poly::Scop* scop;
    int score = 0;
    int statement = -1; // of the piece being scored
};

isl_stat score_piece(isl_set* set, isl_aff* aff, void* user) {
    auto* ms = static_cast<MemberScore*>(user);
    int index = ms->statement;
    int d = single_counter(aff);
    if (index >= 0 && d >= 0)
        ms->score += statement_score(*ms->scop->program, ms->scop->kernel->statements[index], d);
    isl_set_free(set);
    isl_aff_free(aff);
    return isl_stat_ok;
}

isl_stat score_pw_aff(isl_pw_aff* pa, void* user) {
    auto* ms = static_cast<MemberScore*>(user);
    isl_space* space = isl_pw_aff_get_domain_space(pa);
    const char* name = isl_space_get_tuple_name(space, isl_dim_set);
    ms->statement = name ? ms->scop->statement_index(name) : -1;
    isl_space_free(space);
    if (isl_pw_aff_n_piece(pa) == 1) isl_pw_aff_foreach_piece(pa, score_piece, user);
    isl_pw_aff_free(pa);
    return isl_stat_ok;
}

} // namespace

std::int64_t element_stride(const poly::Buffer& buffer, const AffineMap& access, int counter) {
    std::int64_t stride = 0, row = 1;
    for (int r = static_cast<int>(buffer.sizes.size()) - 1; r >= 0; --r) {
        stride += row * access.coeff(r, counter);
        row *= buffer.sizes[r];
    }
    return stride;
}

std::vector<int> stride_one_innermost_order(const poly::Scop& scop, isl_schedule_node* band) {
    isl_size n = isl_schedule_node_band_n_member(band);
    std::vector<int> order;
    for (int m = 0; m < n; ++m)
        order.push_back(m);
    if (n < 2) return order;
    isl_multi_union_pw_aff* mupa = isl_schedule_node_band_get_partial_schedule(band);
    std::vector<int> scores;
    for (int m = 0; m < n; ++m) {
        MemberScore ms{&scop};
        isl_union_pw_aff* upa = isl_multi_union_pw_aff_get_union_pw_aff(mupa, m);
        isl_union_pw_aff_foreach_pw_aff(upa, score_pw_aff, &ms);
        isl_union_pw_aff_free(upa);
        scores.push_back(ms.score);
    }
    isl_multi_union_pw_aff_free(mupa);
    int best = n - 1;
    for (int m = n - 2; m >= 0; --m)
        if (scores[m] > scores[best]) best = m;
    order.erase(order.begin() + best);
    order.push_back(best);
    return order;
}

isl_schedule_node* permute_band_members(isl_schedule_node* band, const std::vector<int>& order) {
    bool identity = true;
    for (std::size_t k = 0; k < order.size(); ++k)
        identity = identity && order[k] == int(k);
    if (identity) return band;
    isl_multi_union_pw_aff* mupa = isl_schedule_node_band_get_partial_schedule(band);
    isl_ctx* ctx = isl_schedule_node_get_ctx(band);
    isl_union_pw_aff_list* list = isl_union_pw_aff_list_alloc(ctx, static_cast<int>(order.size()));
    std::vector<int> coincident;
    for (int m : order) {
        list = isl_union_pw_aff_list_add(list, isl_multi_union_pw_aff_get_union_pw_aff(mupa, m));
        coincident.push_back(isl_schedule_node_band_member_get_coincident(band, m) ==
                             isl_bool_true);
    }
    isl_space* space = isl_multi_union_pw_aff_get_space(mupa);
    isl_multi_union_pw_aff_free(mupa);
    bool permutable = isl_schedule_node_band_get_permutable(band) == isl_bool_true;
    band = isl_schedule_node_delete(band);
    band = isl_schedule_node_insert_partial_schedule(
        band, isl_multi_union_pw_aff_from_union_pw_aff_list(space, list));
    band = isl_schedule_node_band_set_permutable(band, permutable);
    for (std::size_t k = 0; k < coincident.size(); ++k)
        band =
            isl_schedule_node_band_member_set_coincident(band, static_cast<int>(k), coincident[k]);
    return band;
}

} // namespace hedra::sched

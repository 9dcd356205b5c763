// Schedules chosen from the kernel's shape (see direct_schedule.hpp).
#include "scheduler/direct_schedule.hpp"

#include <cstdlib>
#include <set>
#include <string>

#include <isl/aff.h>
#include <isl/id.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include "core/error.hpp"
#include "scheduler/contraction_schedule.hpp"
#include "scheduler/row_fusion.hpp"
#include "scheduler/stride_order.hpp"

namespace hedra::sched {
namespace {

using poly::IslPtr;
using poly::Statement;
using poly::take;

constexpr std::int64_t kSmallWindow = 16;

int access_score(const poly::Buffer& buffer, const AffineMap& access, int counter) {
    std::int64_t s = std::llabs(element_stride(buffer, access, counter));
    return s == 0 ? 1 : s == 1 ? 4 : s <= 4 ? 0 : -1;
}

// How good counter d is as the innermost loop, summed over `statements`.
int innermost_score(const poly::Scop& scop, const std::vector<int>& statements, int d) {
    int score = 0;
    for (int s : statements) {
        const Statement& st = scop.kernel->statements[s];
        // An update keeps its accumulator in a register along a reduction counter, so its
        // reads weigh more than its write; an assignment's write weighs more than its reads.
        int w = st.kind == poly::StatementKind::Update ? 1 : 2;
        int rw = st.kind == poly::StatementKind::Update ? 2 : 1;
        score += w * access_score(scop.program->buffers[st.write_buffer], st.write_access, d);
        for (const poly::Read& r : st.reads)
            if (r.buffer >= 0)
                score += rw * access_score(scop.program->buffers[r.buffer], r.access, d);
    }
    return score;
}

std::string counters(int rank) {
    std::string s;
    for (int d = 0; d < rank; ++d)
        s += (d ? ", i" : "i") + std::to_string(d);
    return s;
}

// The leaf below a schedule of `statements`' domains, and one filter per statement (owned by
// the caller) for a sequence.
isl_schedule_node* statements_leaf(const poly::Scop& scop, const std::vector<int>& statements,
                                   isl_union_set_list*& filters) {
    isl_ctx* ctx = isl_set_get_ctx(scop.statement_domains.at(statements[0]).get());
    isl_union_set* domain = isl_union_set_empty(isl_space_params_alloc(ctx, 0));
    filters = isl_union_set_list_alloc(ctx, static_cast<int>(statements.size()));
    for (int s : statements) {
        isl_union_set* one = isl_union_set_from_set(scop.statement_domains[s].copy());
        domain = isl_union_set_union(domain, isl_union_set_copy(one));
        filters = isl_union_set_list_add(filters, one);
    }
    isl_schedule* schedule = isl_schedule_from_domain(domain);
    isl_schedule_node* node = isl_schedule_node_child(isl_schedule_get_root(schedule), 0);
    isl_schedule_free(schedule);
    return node;
}

// One band member per entry of `order`, each the same counter of every statement.
IslPtr<isl_schedule> band_schedule(const poly::Scop& scop, const std::vector<int>& statements,
                                   const std::vector<int>& order,
                                   const std::vector<bool>& coincident) {
    isl_ctx* ctx = isl_set_get_ctx(scop.statement_domains.at(statements[0]).get());
    std::string text = "[";
    for (std::size_t m = 0; m < order.size(); ++m) {
        text += m ? ", { " : "{ ";
        for (std::size_t k = 0; k < statements.size(); ++k) {
            const Statement& st = scop.kernel->statements[statements[k]];
            text += (k ? "; " : "") + st.name + "[" +
                    counters(static_cast<int>(st.extents.size())) + "] -> [(i" +
                    std::to_string(order[m]) + ")]";
        }
        text += " }";
    }
    text += "]";
    isl_union_set_list* filters = nullptr;
    isl_schedule_node* node = statements_leaf(scop, statements, filters);
    if (statements.size() > 1) {
        node = isl_schedule_node_insert_sequence(node, filters);
    } else {
        isl_union_set_list_free(filters);
    }
    if (!order.empty()) {
        isl_multi_union_pw_aff* band = isl_multi_union_pw_aff_read_from_str(ctx, text.c_str());
        HEDRA_INTERNAL_CHECK(band, "direct_schedule: isl cannot parse " + text);
        node = isl_schedule_node_insert_partial_schedule(node, band);
        node = isl_schedule_node_band_set_permutable(node, 1);
        for (std::size_t m = 0; m < coincident.size(); ++m)
            node = isl_schedule_node_band_member_set_coincident(node, static_cast<int>(m),
                                                                coincident[m]);
        node = isl_schedule_node_insert_mark(node, isl_id_alloc(ctx, kDirectMark, nullptr));
    }
    isl_schedule* schedule = isl_schedule_node_get_schedule(node);
    isl_schedule_node_free(node);
    return take(schedule);
}

// Output counters (DSL order) outside reduction counters, the best innermost counter last.
IslPtr<isl_schedule> reduction_schedule(const poly::Scop& scop, int s) {
    const Statement& st = scop.kernel->statements[s];
    int rank = static_cast<int>(st.extents.size());
    std::vector<int> outputs, reductions;
    for (int d = 0; d < rank; ++d) {
        if (st.extents[d] <= 1) continue;
        bool written = false;
        for (int r = 0; r < st.write_access.out_rank(); ++r)
            written = written || st.write_access.coeff(r, d) != 0;
        (written ? outputs : reductions).push_back(d);
    }
    if (outputs.empty() && reductions.empty()) return {};
    // The reduction counters keep their order (the dependences isl computed, and the
    // parallelism test after it, assume the accumulations happen in program order), so the
    // innermost counter is an output counter or the last reduction counter.
    // A small window (pooling's 2x2) is better summed in full vectors along the output's
    // row than one window at a time.
    std::int64_t window = 1;
    for (int d : reductions)
        window *= st.extents[d];
    std::vector<int> candidates = outputs;
    if (!reductions.empty() && (window > kSmallWindow || outputs.empty()))
        candidates.push_back(reductions.back());
    int best = -1, best_score = 0;
    for (auto it = candidates.rbegin(); it != candidates.rend(); ++it) {
        int d = *it;
        int score = innermost_score(scop, {s}, d);
        if (best < 0 || score > best_score) {
            best = d;
            best_score = score;
        }
    }
    std::vector<int> order;
    std::vector<bool> coincident;
    for (int d : outputs)
        if (d != best) {
            order.push_back(d);
            coincident.push_back(true);
        }
    for (int d : reductions)
        if (d != best) {
            order.push_back(d);
            coincident.push_back(false);
        }
    order.push_back(best);
    bool best_written = false;
    for (int d : outputs)
        best_written = best_written || d == best;
    coincident.push_back(best_written);
    return band_schedule(scop, {s}, order, coincident);
}

// A lone assignment whose instances are independent (a map, a copy): its counters in order
// with the best innermost, untiled, so that contiguous loops print as one flat loop
// (loop_coalesce.hpp) instead of tiles of 64 x 256 a memory-bound pass gains nothing from.
IslPtr<isl_schedule> assignment_schedule(const poly::Scop& scop, const poly::Dependences& deps,
                                         int s);

bool independent(const poly::Scop& scop, const poly::Dependences& deps,
                 const std::vector<int>& statements) {
    isl_union_set* domain = isl_union_set_empty(isl_union_set_get_space(scop.domain.get()));
    for (int s : statements)
        domain =
            isl_union_set_union(domain, isl_union_set_from_set(scop.statement_domains[s].copy()));
    isl_union_map* d =
        isl_union_map_intersect_domain(deps.all().release(), isl_union_set_copy(domain));
    d = isl_union_map_intersect_range(d, domain);
    bool none = isl_union_map_is_empty(d) == isl_bool_true;
    isl_union_map_free(d);
    return none;
}

IslPtr<isl_schedule> assignment_schedule(const poly::Scop& scop, const poly::Dependences& deps,
                                         int s) {
    const std::vector<std::int64_t>& extents = scop.kernel->statements[s].extents;
    if (!independent(scop, deps, {s})) return {};
    int rank = static_cast<int>(extents.size());
    int best = -1, best_score = 0;
    for (int d = rank - 1; d >= 0; --d) {
        if (extents[d] <= 1) continue;
        int score = innermost_score(scop, {s}, d);
        if (best < 0 || score > best_score) {
            best = d;
            best_score = score;
        }
    }
    if (best < 0) return {};
    std::vector<int> order;
    for (int d = 0; d < rank; ++d)
        if (extents[d] > 1 && d != best) order.push_back(d);
    order.push_back(best);
    return band_schedule(scop, {s}, order, std::vector<bool>(order.size(), true));
}

// An Assign that reads the update's result and writes another buffer: the epilogue the
// partitioner appends to a sum's kernel.
bool is_epilogue(const poly::Statement& e, const poly::Statement& update) {
    if (e.kind != poly::StatementKind::Assign || e.write_buffer == update.write_buffer)
        return false;
    for (const poly::Read& r : e.reads)
        if (r.buffer == update.write_buffer) return true;
    return false;
}

// The leading counters every statement writes at its buffer's leading axes with the same
// extents (the rows of a row-fused kernel, row_fusion.hpp), and at which every read of a buffer
// the statements write reads it (another row would be read before it is written: a gather
// along a row axis reads any row), or 0.
int leading_rows(const poly::Scop& scop, const std::vector<int>& statements) {
    const auto& all = scop.kernel->statements;
    int r = static_cast<int>(all[statements[0]].extents.size());
    for (int s : statements)
        r = std::min<int>(r,
                          std::min(all[s].write_access.out_rank(), all[s].write_access.in_rank()));
    auto identity = [&](const Statement& st, int d) {
        if (st.write_access.offset(d) != 0 || st.extents[d] != all[statements[0]].extents[d])
            return false;
        for (int k = 0; k < st.write_access.in_rank(); ++k)
            if (st.write_access.coeff(d, k) != (k == d ? 1 : 0)) return false;
        return true;
    };
    std::set<int> written;
    for (int s : statements)
        written.insert(all[s].write_buffer);
    for (int d = 0; d < r; ++d)
        for (int s : statements) {
            if (!identity(all[s], d)) return d;
            for (const poly::Read& rd : all[s].reads)
                if (rd.buffer >= 0 && written.count(rd.buffer) &&
                    !leading_identity(rd.access, d + 1))
                    return d;
        }
    return r;
}

// One outer band (`outer`, isl text of its members over every statement of `statements`,
// `coincident` for each member) and inside it the statements in sequence, each over its
// counters from `r` on (extents > 1) in program order; marked direct (untiled).
IslPtr<isl_schedule> outer_band_sequence(const poly::Scop& scop, const std::vector<int>& statements,
                                         int r, const std::string& outer, bool coincident) {
    const auto& all = scop.kernel->statements;
    isl_ctx* ctx = isl_set_get_ctx(scop.statement_domains.at(statements[0]).get());
    auto member = [&](int s, int d) {
        const Statement& st = all[s];
        return st.name + "[" + counters(static_cast<int>(st.extents.size())) + "] -> [(i" +
               std::to_string(d) + ")]";
    };
    isl_union_set_list* filters = nullptr;
    isl_schedule_node* node = statements_leaf(scop, statements, filters);
    node = isl_schedule_node_insert_sequence(node, filters);
    for (std::size_t k = 0; k < statements.size(); ++k) {
        const Statement& st = all[statements[k]];
        std::string text;
        std::vector<bool> written_by;
        for (int d = r; d < static_cast<int>(st.extents.size()); ++d) {
            if (st.extents[d] <= 1) continue;
            text += (text.empty() ? "{ " : ", { ") + member(statements[k], d) + " }";
            bool written = false;
            for (int o = 0; o < st.write_access.out_rank(); ++o)
                written = written || st.write_access.coeff(o, d) != 0;
            written_by.push_back(written);
        }
        node = isl_schedule_node_child(node, static_cast<int>(k)); // the filter
        node = isl_schedule_node_child(node, 0);
        if (!text.empty()) {
            isl_multi_union_pw_aff* band =
                isl_multi_union_pw_aff_read_from_str(ctx, ("[" + text + "]").c_str());
            HEDRA_INTERNAL_CHECK(band, "direct_schedule: isl cannot parse " + text);
            node = isl_schedule_node_insert_partial_schedule(node, band);
            for (std::size_t m = 0; m < written_by.size(); ++m)
                node = isl_schedule_node_band_member_set_coincident(node, static_cast<int>(m),
                                                                    written_by[m]);
        }
        node = isl_schedule_node_parent(isl_schedule_node_parent(node)); // the sequence
    }
    isl_multi_union_pw_aff* band = isl_multi_union_pw_aff_read_from_str(ctx, outer.c_str());
    HEDRA_INTERNAL_CHECK(band, "direct_schedule: isl cannot parse " + outer);
    node = isl_schedule_node_insert_partial_schedule(node, band);
    int members = isl_schedule_node_band_n_member(node);
    for (int d = 0; d < members; ++d)
        node = isl_schedule_node_band_member_set_coincident(node, d, coincident);
    node = isl_schedule_node_insert_mark(node, isl_id_alloc(ctx, kDirectMark, nullptr));
    isl_schedule* schedule = isl_schedule_node_get_schedule(node);
    isl_schedule_node_free(node);
    return take(schedule);
}

// A row-fused kernel (row_fusion.hpp): one parallel band over the rows, and inside it the
// statements in sequence, each over the rest of its counters in program order. Untiled: a
// row's passes share the row in cache.
IslPtr<isl_schedule> row_schedule(const poly::Scop& scop, const std::vector<int>& statements) {
    const auto& all = scop.kernel->statements;
    bool update = false;
    for (int s : statements)
        update = update || all[s].kind == poly::StatementKind::Update;
    if (statements.size() < 2 || !update) return {};
    const int r = leading_rows(scop, statements);
    if (r < 1) return {};
    std::string rows = "[";
    for (int d = 0; d < r; ++d) {
        rows += d ? ", { " : "{ ";
        for (std::size_t k = 0; k < statements.size(); ++k) {
            const Statement& st = all[statements[k]];
            rows += (k ? "; " : "") + st.name + "[" +
                    counters(static_cast<int>(st.extents.size())) + "] -> [(i" + std::to_string(d) +
                    ")]";
        }
        rows += " }";
    }
    return outer_band_sequence(scop, statements, r, rows + "]", true);
}

// A stencil stream (stencil_stream.hpp): one sequential loop over steps, statement s writing
// row r = i0 + c at step r + stage(s) * shift; inside, the statements in program order. A
// banded stream's loop over its bands (counter 0) comes first, and its rows are counter 1.
IslPtr<isl_schedule> stream_schedule(const poly::Scop& scop, const std::vector<int>& statements) {
    const poly::Kernel& kernel = *scop.kernel;
    const bool banded = kernel.statements[statements[0]].stream_bands > 0;
    std::string bands = "{ ", steps = "{ ";
    for (std::size_t k = 0; k < statements.size(); ++k) {
        const Statement& st = kernel.statements[statements[k]];
        const int axis = scop.program->buffers.at(st.write_buffer).window_axis();
        std::int64_t shift =
            st.write_access.offset(axis) + std::int64_t{st.stream_stage} * st.stream_shift;
        std::string domain = st.name + "[" + counters(static_cast<int>(st.extents.size())) + "]";
        bands += (k ? "; " : "") + domain + " -> [(i0)]";
        steps += (k ? "; " : "") + domain + " -> [(i" + (banded ? "1" : "0") +
                 (shift < 0 ? " - " : " + ") + std::to_string(shift < 0 ? -shift : shift) + ")]";
    }
    const std::string outer = banded ? "[" + bands + " }, " + steps + " }]" : "[" + steps + " }]";
    return outer_band_sequence(scop, statements, banded ? 2 : 1, outer, false);
}

} // namespace

IslPtr<isl_schedule> direct_schedule(const poly::Scop& scop, const poly::Dependences& deps,
                                     const std::vector<int>& statements,
                                     const std::vector<int>& inits, int& absorbed,
                                     const CpuTarget& cpu) {
    absorbed = -1;
    if (statements.empty()) return {};
    const auto& all = scop.kernel->statements;
    // A scatter's additions into data-dependent elements: isl orders them by the dependences.
    for (int s : statements)
        if (!all[s].write_indirect.empty()) return {};
    if (poly::is_stream(*scop.kernel)) return stream_schedule(scop, statements);
    if (statements.size() == 1) {
        int s = statements[0];
        if (all[s].kind != poly::StatementKind::Update) return assignment_schedule(scop, deps, s);
        if (auto plan = plan_contraction(*scop.program, *scop.kernel, s, cpu)) {
            absorbed = absorbable_init(scop, *plan, inits);
            return contraction_schedule(scop, *plan, absorbed);
        }
        return reduction_schedule(scop, s);
    }
    // A contraction and its epilogue (partition.hpp): the epilogue joins the contraction's nest
    // when the init does (each result is complete inside one block), else it follows it.
    if (statements.size() == 2 && all[statements[0]].kind == poly::StatementKind::Update &&
        is_epilogue(all[statements[1]], all[statements[0]])) {
        int s = statements[0], e = statements[1];
        auto plan = plan_contraction(*scop.program, *scop.kernel, s, cpu);
        if (!plan) // a reduction of another form (an embedding's one-hot adjoint), then its map
            return take(isl_schedule_sequence(reduction_schedule(scop, s).release(),
                                              poly::statement_program_order(scop, e).release()));
        absorbed = absorbable_init(scop, *plan, inits);
        if (absorbed >= 0) return contraction_schedule(scop, *plan, absorbed, e);
        IslPtr<isl_schedule> c = contraction_schedule(scop, *plan, -1);
        return take(
            isl_schedule_sequence(c.release(), poly::statement_program_order(scop, e).release()));
    }
    if (IslPtr<isl_schedule> rows = row_schedule(scop, statements)) return rows;
    const std::vector<std::int64_t>& extents = all[statements[0]].extents;
    for (int s : statements)
        if (all[s].kind != poly::StatementKind::Assign || all[s].extents != extents) return {};
    if (!independent(scop, deps, statements)) return {};
    int rank = static_cast<int>(extents.size());
    int best = -1, best_score = 0;
    for (int d = rank - 1; d >= 0; --d) {
        if (extents[d] <= 1) continue;
        int score = innermost_score(scop, statements, d);
        if (best < 0 || score > best_score) {
            best = d;
            best_score = score;
        }
    }
    std::vector<int> order;
    for (int d = 0; d < rank; ++d)
        if (extents[d] > 1 && d != best) order.push_back(d);
    if (best >= 0) order.push_back(best);
    return band_schedule(scop, statements, order, std::vector<bool>(order.size(), true));
}

} // namespace hedra::sched

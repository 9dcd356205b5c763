// Tiling and intra-tile loop order of permutable bands (see tile.hpp).
#include "scheduler/tile.hpp"

#include <isl/aff.h>
#include <isl/id.h>
#include <isl/options.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/space.h>
#include <isl/union_set.h>
#include <isl/val.h>

#include "scheduler/loop_ast.hpp"
#include "scheduler/stride_order.hpp"

namespace hedra::sched {
namespace {

struct TileContext {
    const poly::Scop* scop;
    const TileOptions* options;
};

std::int64_t member_size(const TileOptions& o, int member, bool innermost) {
    if (!o.sizes.empty())
        return o.sizes[std::min<std::size_t>(static_cast<std::size_t>(member), o.sizes.size() - 1)];
    return innermost ? o.default_innermost_size : o.default_size;
}

// Whether the band is below a mark or its only child is one: a band that an earlier pass
// finished (contraction_schedule.hpp, direct_schedule.hpp).
bool next_to_mark(isl_schedule_node* band) {
    bool marked = false;
    isl_schedule_node* up = isl_schedule_node_copy(band);
    while (!marked && isl_schedule_node_has_parent(up) == isl_bool_true) {
        up = isl_schedule_node_parent(up);
        marked = isl_schedule_node_get_type(up) == isl_schedule_node_mark;
    }
    isl_schedule_node_free(up);
    if (!marked && isl_schedule_node_n_children(band) == 1) {
        isl_schedule_node* child = isl_schedule_node_child(isl_schedule_node_copy(band), 0);
        marked = isl_schedule_node_get_type(child) == isl_schedule_node_mark;
        isl_schedule_node_free(child);
    }
    return marked;
}

isl_schedule_node* tile_band(isl_schedule_node* node, void* user) {
    auto* tc = static_cast<TileContext*>(user);
    if (isl_schedule_node_get_type(node) != isl_schedule_node_band) return node;
    if (isl_schedule_node_band_get_permutable(node) != isl_bool_true) return node;
    if (next_to_mark(node)) return node; // already tiled (contraction_schedule.hpp)
    isl_size n = isl_schedule_node_band_n_member(node);
    if (n < 2) return node;
    std::vector<int> order =
        tc->options->reorder ? stride_one_innermost_order(*tc->scop, node) : std::vector<int>{};
    if (!tc->options->tile) return order.empty() ? node : permute_band_members(node, order);
    isl_ctx* ctx = isl_schedule_node_get_ctx(node);
    isl_space* space = isl_schedule_node_band_get_space(node);
    isl_multi_val* sizes = isl_multi_val_zero(space);
    int innermost = order.empty() ? n - 1 : order.back();
    for (int m = 0; m < n; ++m)
        sizes = isl_multi_val_set_val(
            sizes, m, isl_val_int_from_si(ctx, member_size(*tc->options, m, m == innermost)));
    node = isl_schedule_node_band_tile(node, sizes);
    node = isl_schedule_node_child(node, 0);
    if (!order.empty()) node = permute_band_members(node, order);
    node = isl_schedule_node_insert_mark(node, isl_id_alloc(ctx, sched::kPermutableMark, nullptr));
    return isl_schedule_node_parent(node);
}

} // namespace

poly::IslPtr<isl_schedule> tile_schedule(const poly::Scop& scop,
                                         poly::IslPtr<isl_schedule> schedule,
                                         const TileOptions& options) {
    isl_ctx* ctx = isl_schedule_get_ctx(schedule.get());
    isl_options_set_tile_scale_tile_loops(ctx, 0);
    isl_options_set_tile_shift_point_loops(ctx, 1);
    TileContext tc{&scop, &options};
    return poly::take(isl_schedule_map_schedule_node_bottom_up(schedule.release(), tile_band, &tc));
}

} // namespace hedra::sched

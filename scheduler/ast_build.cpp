// isl AST generation with a per-loop parallelism test, converted to LoopAst (see ast_build.hpp).
#include "scheduler/ast_build.hpp"

#include <cstdint>

#include <isl/ast.h>
#include <isl/ast_build.h>
#include <isl/id.h>
#include <isl/map.h>
#include <isl/options.h>
#include <isl/schedule.h>
#include <isl/space.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/val.h>

#include "core/error.hpp"

namespace hedra::sched {
namespace {

using poly::IslPtr;
using poly::take;

struct BuildContext {
    const poly::Scop* scop;
    IslPtr<isl_union_map> deps; // all dependences
    std::vector<bool> parallel; // per generated loop, in generation order
};

// PPCG's test: with the outer schedule dimensions equal, is this one equal too?
bool loop_is_parallel(isl_ast_build* build, const IslPtr<isl_union_map>& deps) {
    isl_union_map* schedule = isl_ast_build_get_schedule(build);
    isl_space* space = isl_ast_build_get_schedule_space(build);
    isl_size dim = isl_space_dim(space, isl_dim_out) - 1;
    isl_space_free(space);
    isl_union_map* d = isl_union_map_apply_range(deps.copy(), isl_union_map_copy(schedule));
    d = isl_union_map_apply_domain(d, schedule);
    if (isl_union_map_is_empty(d) == isl_bool_true) {
        isl_union_map_free(d);
        return true;
    }
    isl_map* m = isl_map_from_union_map(d);
    for (int i = 0; i < dim; ++i)
        m = isl_map_equate(m, isl_dim_out, i, isl_dim_in, i);
    isl_map* test = isl_map_universe(isl_map_get_space(m));
    test = isl_map_equate(test, isl_dim_out, dim, isl_dim_in, dim);
    bool parallel = isl_map_is_subset(m, test) == isl_bool_true;
    isl_map_free(m);
    isl_map_free(test);
    return parallel;
}

// Pairs of instances of one reduction update that accumulate into the same element. The
// dataflow dependences only chain each accumulation to the previous one in program order, so a
// schedule that reorders the reduction counters (contraction_schedule.hpp orders them for the
// locality of the operands) could let a loop over them pass the test while two of its
// iterations add into one element; with these pairs such a loop never does.
IslPtr<isl_union_map> accumulation_conflicts(const poly::Scop& scop) {
    isl_union_map* out = isl_union_map_empty(isl_union_map_get_space(scop.writes.get()));
    for (std::size_t s = 0; s < scop.kernel->statements.size(); ++s) {
        if (scop.kernel->statements[s].kind != poly::StatementKind::Update) continue;
        isl_union_set* dom = isl_union_set_from_set(scop.statement_domains[s].copy());
        isl_union_map* w =
            isl_union_map_intersect_domain(scop.writes.copy(), isl_union_set_copy(dom));
        isl_union_map* back = isl_union_map_reverse(isl_union_map_copy(w));
        isl_union_map* same = isl_union_map_apply_range(w, back);
        same = isl_union_map_subtract(same, isl_union_set_identity(dom));
        out = isl_union_map_union(out, same);
    }
    return take(out);
}

isl_id* before_for(isl_ast_build* build, void* user) {
    auto* bc = static_cast<BuildContext*>(user);
    bc->parallel.push_back(loop_is_parallel(build, bc->deps));
    auto tag = static_cast<std::uintptr_t>(bc->parallel.size()); // 1-based loop number
    return isl_id_alloc(isl_ast_build_get_ctx(build), "loop", reinterpret_cast<void*>(tag));
}

std::int64_t int_value(isl_val* v) {
    std::int64_t x = isl_val_get_num_si(v);
    isl_val_free(v);
    return x;
}

std::string id_name(isl_id* id) {
    std::string s = isl_id_get_name(id);
    isl_id_free(id);
    return s;
}

AstExpr::Op convert_op(isl_ast_expr_op_type t) {
    switch (t) {
    case isl_ast_expr_op_and:
    case isl_ast_expr_op_and_then:
        return AstExpr::Op::And;
    case isl_ast_expr_op_or:
    case isl_ast_expr_op_or_else:
        return AstExpr::Op::Or;
    case isl_ast_expr_op_max:
        return AstExpr::Op::Max;
    case isl_ast_expr_op_min:
        return AstExpr::Op::Min;
    case isl_ast_expr_op_minus:
        return AstExpr::Op::Neg;
    case isl_ast_expr_op_add:
        return AstExpr::Op::Add;
    case isl_ast_expr_op_sub:
        return AstExpr::Op::Sub;
    case isl_ast_expr_op_mul:
        return AstExpr::Op::Mul;
    case isl_ast_expr_op_div:
        return AstExpr::Op::Div;
    case isl_ast_expr_op_fdiv_q:
        return AstExpr::Op::FloorDiv;
    case isl_ast_expr_op_pdiv_q:
        return AstExpr::Op::PDivQ;
    case isl_ast_expr_op_pdiv_r:
        return AstExpr::Op::PDivR;
    case isl_ast_expr_op_zdiv_r:
        return AstExpr::Op::ZDivR;
    case isl_ast_expr_op_cond:
    case isl_ast_expr_op_select:
        return AstExpr::Op::Select;
    case isl_ast_expr_op_eq:
        return AstExpr::Op::Eq;
    case isl_ast_expr_op_le:
        return AstExpr::Op::Le;
    case isl_ast_expr_op_lt:
        return AstExpr::Op::Lt;
    case isl_ast_expr_op_ge:
        return AstExpr::Op::Ge;
    case isl_ast_expr_op_gt:
        return AstExpr::Op::Gt;
    default:
        break;
    }
    internal_error("ast_build: unexpected isl AST operation " + std::to_string(int(t)));
}

AstExpr convert(isl_ast_expr* e) { // __isl_take
    AstExpr out;
    switch (isl_ast_expr_get_type(e)) {
    case isl_ast_expr_int:
        out.kind = AstExpr::Kind::Int;
        out.value = int_value(isl_ast_expr_int_get_val(e));
        break;
    case isl_ast_expr_id:
        out.kind = AstExpr::Kind::Id;
        out.name = id_name(isl_ast_expr_id_get_id(e));
        break;
    case isl_ast_expr_op: {
        out.kind = AstExpr::Kind::Op;
        out.op = convert_op(isl_ast_expr_op_get_type(e));
        isl_size n = isl_ast_expr_op_get_n_arg(e);
        for (int i = 0; i < n; ++i)
            out.args.push_back(convert(isl_ast_expr_op_get_arg(e, i)));
        break;
    }
    default:
        internal_error("ast_build: malformed isl AST expression");
    }
    isl_ast_expr_free(e);
    return out;
}

void convert_into(isl_ast_node* n, const BuildContext& bc, std::vector<AstNode>& out);

std::vector<AstNode> convert_list(isl_ast_node_list* list, const BuildContext& bc) {
    std::vector<AstNode> out;
    isl_size n = isl_ast_node_list_n_ast_node(list);
    for (int i = 0; i < n; ++i)
        convert_into(isl_ast_node_list_get_ast_node(list, i), bc, out);
    isl_ast_node_list_free(list);
    return out;
}

AstNode convert_call(isl_ast_node* n, const BuildContext& bc) {
    AstNode call;
    call.kind = AstNode::Kind::Call;
    isl_ast_expr* e = isl_ast_node_user_get_expr(n);
    HEDRA_INTERNAL_CHECK(isl_ast_expr_get_type(e) == isl_ast_expr_op &&
                             isl_ast_expr_op_get_type(e) == isl_ast_expr_op_call,
                         "ast_build: a user node that is not a call");
    isl_ast_expr* callee = isl_ast_expr_op_get_arg(e, 0);
    call.statement = bc.scop->statement_index(id_name(isl_ast_expr_id_get_id(callee)));
    isl_ast_expr_free(callee);
    HEDRA_INTERNAL_CHECK(call.statement >= 0, "ast_build: a call of an unknown statement");
    isl_size args = isl_ast_expr_op_get_n_arg(e);
    for (int i = 1; i < args; ++i)
        call.counters.push_back(convert(isl_ast_expr_op_get_arg(e, i)));
    isl_ast_expr_free(e);
    return call;
}

AstNode convert_for(isl_ast_node* n, const BuildContext& bc) {
    AstNode loop;
    loop.kind = AstNode::Kind::For;
    AstExpr it = convert(isl_ast_node_for_get_iterator(n));
    loop.iterator = it.name;
    loop.init = convert(isl_ast_node_for_get_init(n));
    loop.cond = convert(isl_ast_node_for_get_cond(n));
    loop.inc = convert(isl_ast_node_for_get_inc(n));
    isl_id* tag = isl_ast_node_get_annotation(n);
    if (tag) {
        auto k = reinterpret_cast<std::uintptr_t>(isl_id_get_user(tag));
        loop.parallel = k >= 1 && k <= bc.parallel.size() && bc.parallel[k - 1];
        isl_id_free(tag);
    }
    convert_into(isl_ast_node_for_get_body(n), bc, loop.body);
    return loop;
}

void convert_into(isl_ast_node* n, const BuildContext& bc, std::vector<AstNode>& out) {
    switch (isl_ast_node_get_type(n)) {
    case isl_ast_node_block: {
        std::vector<AstNode> kids = convert_list(isl_ast_node_block_get_children(n), bc);
        for (AstNode& k : kids)
            out.push_back(std::move(k));
        break;
    }
    case isl_ast_node_mark: {
        AstNode mark;
        mark.kind = AstNode::Kind::Mark;
        mark.mark = id_name(isl_ast_node_mark_get_id(n));
        convert_into(isl_ast_node_mark_get_node(n), bc, mark.body);
        out.push_back(std::move(mark));
        break;
    }
    case isl_ast_node_user:
        out.push_back(convert_call(n, bc));
        break;
    case isl_ast_node_for:
        out.push_back(convert_for(n, bc));
        break;
    case isl_ast_node_if: {
        AstNode branch;
        branch.kind = AstNode::Kind::If;
        branch.condition = convert(isl_ast_node_if_get_cond(n));
        convert_into(isl_ast_node_if_get_then_node(n), bc, branch.body);
        if (isl_ast_node_if_has_else_node(n) == isl_bool_true)
            convert_into(isl_ast_node_if_get_else_node(n), bc, branch.else_body);
        out.push_back(std::move(branch));
        break;
    }
    default:
        internal_error("ast_build: malformed isl AST node");
    }
    isl_ast_node_free(n);
}

} // namespace

AstNode build_loop_ast(const poly::Scop& scop, const poly::Dependences& deps,
                       const IslPtr<isl_schedule>& schedule, const IslPtr<isl_set>& context) {
    isl_ctx* ctx = isl_schedule_get_ctx(schedule.get());
    isl_options_set_ast_build_atomic_upper_bound(ctx, 1);
    isl_options_set_ast_build_detect_min_max(ctx, 1);
    BuildContext bc{
        &scop,
        take(isl_union_map_union(deps.all().release(), accumulation_conflicts(scop).release())),
        {}};
    isl_ast_build* build =
        context ? isl_ast_build_from_context(context.copy()) : isl_ast_build_alloc(ctx);
    build = isl_ast_build_set_before_each_for(build, before_for, &bc);
    isl_ast_node* tree = isl_ast_build_node_from_schedule(build, schedule.copy());
    isl_ast_build_free(build);
    HEDRA_INTERNAL_CHECK(tree != nullptr, "ast_build: isl AST generation failed");
    AstNode root;
    root.kind = AstNode::Kind::Block;
    convert_into(tree, bc, root.body);
    return root;
}

} // namespace hedra::sched

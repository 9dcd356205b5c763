// The copy / free / to_string functions behind IslPtr, one line per isl type.
#include "polyhedral/isl_ptr.hpp"

#include <cstdlib>

#include <isl/aff.h>
#include <isl/ast.h>
#include <isl/ast_build.h>
#include <isl/id.h>
#include <isl/map.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/val.h>

namespace hedra::poly {
namespace {

std::string owned_string(char* s) {
    if (!s) return "null";
    std::string out(s);
    std::free(s);
    return out;
}

} // namespace

#define HEDRA_ISL_OPS_DEF(T, TO_STR)                                                               \
    T* IslOps<T>::copy(T* p) {                                                                     \
        return T##_copy(p);                                                                        \
    }                                                                                              \
    void IslOps<T>::free(T* p) {                                                                   \
        T##_free(p);                                                                               \
    }                                                                                              \
    std::string IslOps<T>::to_string(T* p) {                                                       \
        return owned_string(TO_STR(p));                                                            \
    }

HEDRA_ISL_OPS_DEF(isl_id, isl_id_to_str)
HEDRA_ISL_OPS_DEF(isl_val, isl_val_to_str)
HEDRA_ISL_OPS_DEF(isl_space, isl_space_to_str)
HEDRA_ISL_OPS_DEF(isl_set, isl_set_to_str)
HEDRA_ISL_OPS_DEF(isl_map, isl_map_to_str)
HEDRA_ISL_OPS_DEF(isl_union_set, isl_union_set_to_str)
HEDRA_ISL_OPS_DEF(isl_union_map, isl_union_map_to_str)
HEDRA_ISL_OPS_DEF(isl_aff, isl_aff_to_str)
HEDRA_ISL_OPS_DEF(isl_pw_aff, isl_pw_aff_to_str)
HEDRA_ISL_OPS_DEF(isl_multi_union_pw_aff, isl_multi_union_pw_aff_to_str)
HEDRA_ISL_OPS_DEF(isl_schedule, isl_schedule_to_str)
HEDRA_ISL_OPS_DEF(isl_schedule_constraints, isl_schedule_constraints_to_str)
HEDRA_ISL_OPS_DEF(isl_schedule_node, isl_schedule_node_to_str)
HEDRA_ISL_OPS_DEF(isl_ast_node, isl_ast_node_to_C_str)
HEDRA_ISL_OPS_DEF(isl_ast_expr, isl_ast_expr_to_C_str)

isl_ast_build* IslOps<isl_ast_build>::copy(isl_ast_build* p) {
    return isl_ast_build_copy(p);
}
void IslOps<isl_ast_build>::free(isl_ast_build* p) {
    isl_ast_build_free(p);
}
std::string IslOps<isl_ast_build>::to_string(isl_ast_build*) {
    return "isl_ast_build";
}

#undef HEDRA_ISL_OPS_DEF

} // namespace hedra::poly

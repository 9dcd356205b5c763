// IslPtr: an owning RAII handle for an isl C object (isl_set, isl_union_map, isl_schedule, ...).
// isl's C API passes ownership explicitly (__isl_take / __isl_keep / __isl_give); this handle
// makes "who frees it" a type. The isl types are only forward-declared here, so public headers
// stay free of isl's headers (isl/cpp.h alone costs ~2.7 s per translation unit).
//   IslPtr<isl_set> s = take(isl_set_read_from_str(ctx, "..."));
//   isl_set_foo(s.copy());   // __isl_take argument: pass a copy
//   isl_set_bar(s.get());    // __isl_keep argument
//   isl_set* raw = s.release();
#pragma once

#include <string>
#include <utility>

struct isl_id;
struct isl_val;
struct isl_space;
struct isl_set;
struct isl_map;
struct isl_union_set;
struct isl_union_map;
struct isl_aff;
struct isl_pw_aff;
struct isl_multi_union_pw_aff;
struct isl_schedule;
struct isl_schedule_constraints;
struct isl_schedule_node;
struct isl_ast_node;
struct isl_ast_expr;
struct isl_ast_build;

namespace hedra::poly {

// copy / free / to_string of one isl type; specialised (and defined) in isl_ptr.cpp.
template <class T>
struct IslOps;

#define HEDRA_ISL_OPS(T)                                                                           \
    template <>                                                                                    \
    struct IslOps<T> {                                                                             \
        static T* copy(T* p);                                                                      \
        static void free(T* p);                                                                    \
        static std::string to_string(T* p);                                                        \
    };
HEDRA_ISL_OPS(isl_id)
HEDRA_ISL_OPS(isl_val)
HEDRA_ISL_OPS(isl_space)
HEDRA_ISL_OPS(isl_set)
HEDRA_ISL_OPS(isl_map)
HEDRA_ISL_OPS(isl_union_set)
HEDRA_ISL_OPS(isl_union_map)
HEDRA_ISL_OPS(isl_aff)
HEDRA_ISL_OPS(isl_pw_aff)
HEDRA_ISL_OPS(isl_multi_union_pw_aff)
HEDRA_ISL_OPS(isl_schedule)
HEDRA_ISL_OPS(isl_schedule_constraints)
HEDRA_ISL_OPS(isl_schedule_node)
HEDRA_ISL_OPS(isl_ast_node)
HEDRA_ISL_OPS(isl_ast_expr)
HEDRA_ISL_OPS(isl_ast_build)
#undef HEDRA_ISL_OPS

template <class T>
class IslPtr {
public:
    IslPtr() = default;
    explicit IslPtr(T* owned) : p_(owned) {}
    IslPtr(const IslPtr& o) : p_(o.p_ ? IslOps<T>::copy(o.p_) : nullptr) {}
    IslPtr(IslPtr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
    IslPtr& operator=(IslPtr o) noexcept {
        std::swap(p_, o.p_);
        return *this;
    }
    ~IslPtr() {
        if (p_) IslOps<T>::free(p_);
    }

    T* get() const { return p_; }
    T* copy() const { return p_ ? IslOps<T>::copy(p_) : nullptr; }
    T* release() { return std::exchange(p_, nullptr); }
    explicit operator bool() const { return p_ != nullptr; }
    // isl's own textual form ("{ S0[i0, i1] : 0 <= i0 <= 3 and ... }"); "null" when empty.
    std::string to_string() const { return p_ ? IslOps<T>::to_string(p_) : "null"; }

private:
    T* p_ = nullptr;
};

// Takes ownership of a freshly returned (__isl_give) isl object.
template <class T>
IslPtr<T> take(T* owned) {
    return IslPtr<T>(owned);
}

} // namespace hedra::poly

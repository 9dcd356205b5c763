// The owning isl context and hedra's global isl options (errors are returned, not printed).
#include "polyhedral/isl_context.hpp"

#include <isl/ctx.h>
#include <isl/options.h>

#include "core/error.hpp"

namespace hedra::poly {

IslContext::IslContext() : ctx_(isl_ctx_alloc()) {
    HEDRA_INTERNAL_CHECK(ctx_ != nullptr, "isl_ctx_alloc failed");
    isl_options_set_on_error(ctx_, ISL_ON_ERROR_CONTINUE);
}

IslContext::~IslContext() {
    if (ctx_) isl_ctx_free(ctx_);
}

void IslContext::set_max_operations(unsigned long operations) {
    isl_ctx_set_max_operations(ctx_, operations);
    isl_ctx_reset_operations(ctx_);
}

bool IslContext::quota_exceeded() const {
    return isl_ctx_last_error(ctx_) == isl_error_quota;
}

std::string IslContext::last_error() const {
    const char* msg = isl_ctx_last_error_msg(ctx_);
    return msg ? msg : "";
}

void IslContext::reset_error() {
    isl_ctx_reset_error(ctx_);
}

} // namespace hedra::poly

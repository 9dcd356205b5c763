// IslContext: an owning isl_ctx (isl's C++ isl::ctx does not free its context). Every isl
// object hedra makes for one compilation lives in one context; the context also carries the
// scheduler options and the operation quota that bounds scheduling time.
#pragma once

#include <string>

struct isl_ctx;

namespace hedra::poly {

class IslContext {
public:
    // A fresh context with errors reported to the caller (never printed, never aborting) and
    // hedra's scheduler and AST options.
    IslContext();
    ~IslContext();
    IslContext(const IslContext&) = delete;
    IslContext& operator=(const IslContext&) = delete;

    isl_ctx* get() const { return ctx_; }

    // Bound the isl operations of the next computation (0: unbounded); resets the counter.
    void set_max_operations(unsigned long operations);
    // Whether the last failed isl call ran out of its operation quota.
    bool quota_exceeded() const;
    // isl's last error message ("" if none), and clearing it.
    std::string last_error() const;
    void reset_error();

private:
    isl_ctx* ctx_ = nullptr;
};

} // namespace hedra::poly

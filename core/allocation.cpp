// The allocation limit (see allocation.hpp), from sysinfo and getrlimit.
#include "core/allocation.hpp"

#include <sys/resource.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/sysinfo.h>
#endif

#include <cstdint>

#include "core/error.hpp"

namespace hedra {
namespace {

struct Limit {
    std::size_t bytes = SIZE_MAX;
    const char* source = "the address space";
};

Limit read_limit() {
    std::size_t limit = SIZE_MAX;
#ifdef __linux__
    struct sysinfo info {};
    if (sysinfo(&info) == 0 && info.totalram > 0) {
        unsigned __int128 total =
            (static_cast<unsigned __int128>(info.totalram) + info.totalswap) * info.mem_unit;
        limit = total < SIZE_MAX ? static_cast<std::size_t>(total) : SIZE_MAX;
    }
#else
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0 &&
        static_cast<unsigned long>(pages) < SIZE_MAX / static_cast<unsigned long>(page))
        limit = static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
#endif
    Limit out{limit, "this machine's memory and swap"};
    struct rlimit as {};
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY && as.rlim_cur < limit)
        out = Limit{static_cast<std::size_t>(as.rlim_cur), "the address-space limit (RLIMIT_AS)"};
    return out;
}

const Limit& limit() {
    static const Limit l = read_limit();
    return l;
}

} // namespace

std::size_t allocation_limit_bytes() {
    return limit().bytes;
}

void check_allocation(std::size_t bytes, const std::string& what) {
    const Limit& l = limit();
    if (bytes > l.bytes)
        throw Error("out of memory: cannot allocate " + std::to_string(bytes) + " bytes for " +
                    what + ": more than " + l.source + " allows (" + std::to_string(l.bytes) +
                    " bytes)");
}

} // namespace hedra

// NCCL itself (see nccl_api.hpp): libnccl.so.2 opened with dlopen; its types from the toolkit's
// nccl.h, included here only. Device memory, copies and the stream are the cuda backend's.
#include "distributed/nccl_api.hpp"

#include <cstdlib>
#include <mutex>
#include <vector>

#include "core/error.hpp"

#if HEDRA_HAS_CUDA
#include <dlfcn.h>
#include <nccl.h>

#include "backends/cuda/runtime/cuda_driver.hpp"
#endif

namespace hedra::distributed {

#if HEDRA_HAS_CUDA
namespace {

namespace cuda = backend::cuda;

#define HEDRA_NCCL_FUNCTIONS(X)                                                                    \
    X(ncclGetVersion)                                                                              \
    X(ncclGetUniqueId)                                                                             \
    X(ncclCommInitRank)                                                                            \
    X(ncclCommDestroy)                                                                             \
    X(ncclAllReduce)                                                                               \
    X(ncclReduce)                                                                                  \
    X(ncclBroadcast)                                                                               \
    X(ncclAllGather)                                                                               \
    X(ncclReduceScatter)                                                                           \
    X(ncclGetErrorString)                                                                          \
    X(ncclGroupStart)                                                                              \
    X(ncclGroupEnd)

struct Functions {
#define HEDRA_DECLARE(fn) decltype(&::fn) fn = nullptr;
    HEDRA_NCCL_FUNCTIONS(HEDRA_DECLARE)
#undef HEDRA_DECLARE
};

// The library's functions, loaded once; `why` is set when it cannot be.
const Functions* load(std::string& why) {
    static std::once_flag once;
    static Functions functions;
    static std::string failure;
    std::call_once(once, [] {
        std::vector<std::string> candidates;
        if (const char* env = std::getenv("HEDRA_NCCL_LIBRARY"); env && *env)
            candidates.push_back(env);
        candidates.push_back("libnccl.so.2");
        candidates.push_back(std::string(HEDRA_NCCL_LIBRARY_DIR) + "/libnccl.so.2");
        void* lib = nullptr;
        std::string errors;
        for (const std::string& path : candidates) {
            if ((lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
            errors += std::string("\n  ") + dlerror();
        }
        if (!lib) {
            failure = "no libnccl.so.2 (install NCCL, or name the library in HEDRA_NCCL_LIBRARY):" +
                      errors;
            return;
        }
#define HEDRA_LOAD(fn)                                                                             \
    functions.fn = reinterpret_cast<decltype(functions.fn)>(dlsym(lib, #fn));                      \
    if (!functions.fn) {                                                                           \
        failure = "libnccl.so.2 lacks " #fn " (NCCL 2.7 or newer is needed)";                      \
        return;                                                                                    \
    }
        HEDRA_NCCL_FUNCTIONS(HEDRA_LOAD)
#undef HEDRA_LOAD
    });
    why = failure;
    return failure.empty() ? &functions : nullptr;
}

class NcclLibrary : public NcclApi {
public:
    explicit NcclLibrary(const Functions& f) : f_(f) {
        try {
            cuda::Device::instance().make_current();
        } catch (const Error& e) {
            throw Error(
                std::string("nccl: ") + e.what() +
                "; NCCL runs on GPUs: use distributed::init() without HEDRA_DIST=nccl for MPI");
        }
        stream_ = std::make_unique<cuda::Stream>();
    }
    std::string version() override {
        int v = 0;
        check(f_.ncclGetVersion(&v), "ncclGetVersion");
        return version_string(v);
    }
    NcclUniqueId unique_id() override {
        ncclUniqueId id;
        check(f_.ncclGetUniqueId(&id), "ncclGetUniqueId");
        NcclUniqueId out;
        static_assert(sizeof(id.internal) == sizeof(out.bytes));
        std::copy(std::begin(id.internal), std::end(id.internal), out.bytes.begin());
        return out;
    }
    void* init_rank(int ranks, const NcclUniqueId& id, int rank) override {
        ncclUniqueId nid;
        std::copy(id.bytes.begin(), id.bytes.end(), std::begin(nid.internal));
        ncclComm_t comm = nullptr;
        cuda::Device::instance().make_current();
        check(f_.ncclCommInitRank(&comm, ranks, nid, rank), "ncclCommInitRank");
        return comm;
    }
    void destroy(void* comm) override {
        if (cuda::driver_alive()) f_.ncclCommDestroy(static_cast<ncclComm_t>(comm));
    }
    void all_reduce(DeviceAddress send, DeviceAddress recv, std::size_t count, NcclType type,
                    void* comm) override {
        check(f_.ncclAllReduce(ptr(send), ptr(recv), count, data_type(type), ncclSum,
                               static_cast<ncclComm_t>(comm), stream()),
              "ncclAllReduce");
    }
    void all_reduce_on(DeviceAddress send, DeviceAddress recv, std::size_t count, NcclType type,
                       void* comm, void* stream) override {
        check(f_.ncclAllReduce(ptr(send), ptr(recv), count, data_type(type), ncclSum,
                               static_cast<ncclComm_t>(comm), static_cast<cudaStream_t>(stream)),
              "ncclAllReduce");
    }
    void group_start() override { check(f_.ncclGroupStart(), "ncclGroupStart"); }
    void group_end() override { check(f_.ncclGroupEnd(), "ncclGroupEnd"); }
    void reduce(DeviceAddress send, DeviceAddress recv, std::size_t count, NcclType type, int root,
                void* comm) override {
        check(f_.ncclReduce(ptr(send), ptr(recv), count, data_type(type), ncclSum, root,
                            static_cast<ncclComm_t>(comm), stream()),
              "ncclReduce");
    }
    void broadcast(DeviceAddress send, DeviceAddress recv, std::size_t bytes, int root,
                   void* comm) override {
        check(f_.ncclBroadcast(ptr(send), ptr(recv), bytes, ncclUint8, root,
                               static_cast<ncclComm_t>(comm), stream()),
              "ncclBroadcast");
    }
    void all_gather(DeviceAddress send, DeviceAddress recv, std::size_t bytes,
                    void* comm) override {
        check(f_.ncclAllGather(ptr(send), ptr(recv), bytes, ncclUint8,
                               static_cast<ncclComm_t>(comm), stream()),
              "ncclAllGather");
    }
    void reduce_scatter(DeviceAddress send, DeviceAddress recv, std::size_t count, NcclType type,
                        void* comm) override {
        check(f_.ncclReduceScatter(ptr(send), ptr(recv), count, data_type(type), ncclSum,
                                   static_cast<ncclComm_t>(comm), stream()),
              "ncclReduceScatter");
    }
    DeviceAddress allocate(std::size_t bytes) override { return cuda::raw_allocate(bytes); }
    void free(DeviceAddress p) override {
        if (cuda::driver_alive()) cuda::raw_free(p);
    }
    void copy_to_device(DeviceAddress dst, const void* src, std::size_t bytes) override {
        stream_->copy_to_device(dst, src, bytes);
    }
    void copy_to_host(void* dst, DeviceAddress src, std::size_t bytes) override {
        stream_->copy_to_host(dst, src, bytes);
    }
    bool stream_done() override { return stream_->query(); }
    void synchronize() override { stream_->synchronize(); }

    static std::string version_string(int v) {
        // NCCL_VERSION(X, Y, Z): X*10000 + Y*100 + Z since 2.9, X*1000 + Y*100 + Z before.
        const int major = v >= 10000 ? v / 10000 : v / 1000;
        const int minor = v >= 10000 ? (v / 100) % 100 : (v / 100) % 10;
        return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(v % 100);
    }

private:
    void check(ncclResult_t r, const char* call) const {
        if (r != ncclSuccess)
            throw Error(std::string("nccl: ") + call + " failed: " + f_.ncclGetErrorString(r));
    }
    static void* ptr(DeviceAddress a) { return reinterpret_cast<void*>(a); }
    static ncclDataType_t data_type(NcclType t) { return static_cast<ncclDataType_t>(t); }
    cudaStream_t stream() const { return static_cast<cudaStream_t>(stream_->get()); }

    const Functions& f_;
    std::unique_ptr<cuda::Stream> stream_;
};

} // namespace

std::shared_ptr<NcclApi> nccl_library() {
    std::string why;
    const Functions* f = load(why);
    if (!f) throw Error("nccl: " + why);
    return std::make_shared<NcclLibrary>(*f);
}

std::string nccl_library_version(std::string* why) {
    std::string failure;
    const Functions* f = load(failure);
    if (why) *why = failure;
    if (!f) return "";
    int v = 0;
    if (f->ncclGetVersion(&v) != ncclSuccess) {
        if (why) *why = "ncclGetVersion failed";
        return "";
    }
    return NcclLibrary::version_string(v);
}

#else

std::shared_ptr<NcclApi> nccl_library() {
    throw Error("nccl: hedra was built without the CUDA toolkit (which holds NCCL); install it "
                "and configure again");
}

std::string nccl_library_version(std::string* why) {
    if (why) *why = "hedra was built without the CUDA toolkit";
    return "";
}

#endif

} // namespace hedra::distributed

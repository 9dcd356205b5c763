// The in-process compiler: clang driver -> EmitLLVMOnlyAction -> ConcurrentIRCompiler (object
// bytes, which the cache stores) -> LLJIT::addObjectFile into a JITDylib per module. Cache hits
// take the same last step, so one loading path serves both. Every compile owns its
// CompilerInstance, diagnostics, file system and LLVMContext, so compiles run concurrently.
// Never use -mllvm here: it sets process-global options.
#include "backends/openmp/jit_compiler.hpp"

#include "backends/common/external_compiler.hpp"
#include "backends/common/hash.hpp"
#include "core/error.hpp"

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Frontend/Utils.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/VirtualFileSystem.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <unordered_map>

#ifndef HEDRA_CLANG_PATH
#define HEDRA_CLANG_PATH "/usr/lib/llvm-14/bin/clang++"
#endif
#ifndef HEDRA_LLVM_LIBRARY_DIR
#define HEDRA_LLVM_LIBRARY_DIR "/usr/lib/llvm-14/lib"
#endif
#ifndef HEDRA_VERSION_STRING
#define HEDRA_VERSION_STRING "0.1.0"
#endif

namespace hedra::backend {

namespace orc = llvm::orc;

struct JitCompiler::Engine {
    std::unique_ptr<orc::LLJIT> jit;
    std::optional<orc::JITTargetMachineBuilder> target;
    std::atomic<std::uint64_t> next_dylib{0};
};

namespace {

// Collects the ExecutionSession's asynchronous errors (e.g. "Symbols not found") for the
// compile running on this thread; ORC dispatches materialization in place.
thread_local std::string* t_link_errors = nullptr;

struct LinkErrorSink {
    explicit LinkErrorSink(std::string& errors) { t_link_errors = &errors; }
    ~LinkErrorSink() { t_link_errors = nullptr; }
    LinkErrorSink(const LinkErrorSink&) = delete;
    LinkErrorSink& operator=(const LinkErrorSink&) = delete;
};

std::string to_message(llvm::Error error) {
    std::string text = llvm::toString(std::move(error));
    if (t_link_errors != nullptr && !t_link_errors->empty()) text = *t_link_errors + "; " + text;
    return text;
}

const std::string& host_description() {
    static const std::string description = [] {
        llvm::StringMap<bool> features;
        llvm::sys::getHostCPUFeatures(features);
        std::vector<std::string> enabled;
        for (const auto& entry : features)
            enabled.push_back((entry.second ? "+" : "-") + entry.first().str());
        std::sort(enabled.begin(), enabled.end());
        std::string text = llvm::sys::getHostCPUName().str();
        for (const auto& feature : enabled)
            text += "," + feature;
        return text;
    }();
    return description;
}

// libomp's symbols are searched before the process's, so omp_* calls in kernels reach the
// runtime that runs their parallel regions even when the host also loaded g++'s libgomp.
void add_libomp(orc::JITDylib& process, char prefix) {
    std::string errors;
    for (std::string path :
         {std::string("libomp.so.5"), std::string(HEDRA_LLVM_LIBRARY_DIR) + "/libomp.so.5"}) {
        auto generator = orc::DynamicLibrarySearchGenerator::Load(path.c_str(), prefix);
        if (generator) {
            process.addGenerator(std::move(*generator));
            return;
        }
        errors += "; " + llvm::toString(generator.takeError());
    }
    throw Error("cannot load LLVM's OpenMP runtime libomp.so.5 for compiled kernels (install "
                "libomp5-14)" +
                errors);
}

std::shared_ptr<JitCompiler::Engine> create_engine() {
    static std::once_flag targets_initialized;
    std::call_once(targets_initialized, [] {
        llvm::InitializeNativeTarget();
        llvm::InitializeNativeTargetAsmPrinter();
        llvm::InitializeNativeTargetAsmParser();
    });
    auto engine = std::make_shared<JitCompiler::Engine>();
    auto target = orc::JITTargetMachineBuilder::detectHost();
    if (!target) throw Error("cannot set up the kernel JIT: " + to_message(target.takeError()));
    target->setCodeGenOptLevel(llvm::CodeGenOpt::Aggressive);
    target->setRelocationModel(llvm::Reloc::PIC_);
    target->setCodeModel(llvm::CodeModel::Small);
    engine->target = *target;
    auto jit = orc::LLJITBuilder()
                   .setJITTargetMachineBuilder(*target)
                   .setCompileFunctionCreator(
                       [](orc::JITTargetMachineBuilder builder)
                           -> llvm::Expected<std::unique_ptr<orc::IRCompileLayer::IRCompiler>> {
                           return std::make_unique<orc::ConcurrentIRCompiler>(std::move(builder));
                       })
                   .create();
    if (!jit) throw Error("cannot set up the kernel JIT: " + to_message(jit.takeError()));
    engine->jit = std::move(*jit);
    engine->jit->getExecutionSession().setErrorReporter([](llvm::Error error) {
        std::string text = llvm::toString(std::move(error));
        if (t_link_errors != nullptr) *t_link_errors += (t_link_errors->empty() ? "" : "; ") + text;
    });
    char prefix = engine->jit->getDataLayout().getGlobalPrefix();
    orc::JITDylib& process = engine->jit->getMainJITDylib();
    add_libomp(process, prefix);
    auto generator = orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
    if (!generator)
        throw Error("cannot set up the kernel JIT: " + to_message(generator.takeError()));
    process.addGenerator(std::move(*generator));
    return engine;
}

// Runs clang on `source` and returns the object file's bytes; throws with the diagnostics.
std::string compile_to_object(JitCompiler::Engine& engine, const std::string& source,
                              const std::vector<std::string>& flags, const std::string& key,
                              const KernelCache& cache) {
    std::string diagnostics;
    llvm::raw_string_ostream diagnostics_stream(diagnostics);
    auto fail = [&](const std::string& what) -> Error {
        diagnostics_stream.flush();
        std::string path = dump_kernel_source(cache.scratch_directory().string(), key, source);
        return Error(what + ":\n" + diagnostics + "source saved to " + path);
    };

    const std::string file_name = "/hedra-jit/hedra_kernel_" + key.substr(0, 16) + ".cpp";
    auto memory_fs = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
    memory_fs->addFile(file_name, 0, llvm::MemoryBuffer::getMemBuffer(source, file_name));
    auto overlay_fs =
        llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(llvm::vfs::getRealFileSystem());
    overlay_fs->pushOverlay(memory_fs);

    std::vector<const char*> argv = {HEDRA_CLANG_PATH, "-c", "-fno-color-diagnostics"};
    for (const auto& flag : flags)
        argv.push_back(flag.c_str());
    argv.insert(argv.end(), {"-x", "c++", file_name.c_str()});

    llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> driver_options =
        new clang::DiagnosticOptions();
    llvm::IntrusiveRefCntPtr<clang::DiagnosticsEngine> driver_diagnostics =
        new clang::DiagnosticsEngine(
            new clang::DiagnosticIDs(), driver_options,
            new clang::TextDiagnosticPrinter(diagnostics_stream, driver_options.get()), true);
    std::shared_ptr<clang::CompilerInvocation> invocation =
        clang::createInvocationFromCommandLine(argv, driver_diagnostics, overlay_fs);
    if (!invocation) throw fail("cannot start the in-process compiler for a kernel");
    invocation->getFrontendOpts().DisableFree = false;
    invocation->getCodeGenOpts().DisableFree = false;

    clang::CompilerInstance compiler;
    compiler.setInvocation(std::move(invocation));
    compiler.createDiagnostics(
        new clang::TextDiagnosticPrinter(diagnostics_stream, &compiler.getDiagnosticOpts()), true);
    compiler.setVerboseOutputStream(diagnostics_stream);
    compiler.createFileManager(overlay_fs);

    llvm::LLVMContext context;
    clang::EmitLLVMOnlyAction action(&context);
    std::unique_ptr<llvm::Module> module;
    if (compiler.ExecuteAction(action)) module = action.takeModule();
    if (!module) throw fail("cannot compile kernel");

    orc::ConcurrentIRCompiler codegen(*engine.target);
    auto object = codegen(*module);
    if (!object) {
        diagnostics += to_message(object.takeError()) + "\n";
        throw fail("cannot generate code for kernel");
    }
    return (*object)->getBuffer().str();
}

// The names of the global symbols an object defines.
std::vector<std::string> defined_symbols(const llvm::MemoryBuffer& buffer) {
    auto object = llvm::object::ObjectFile::createObjectFile(buffer.getMemBufferRef());
    if (!object) throw Error("cannot read kernel object: " + to_message(object.takeError()));
    std::vector<std::string> names;
    for (const auto& symbol : (*object)->symbols()) {
        auto flags = symbol.getFlags();
        if (!flags) {
            llvm::consumeError(flags.takeError());
            continue;
        }
        if ((*flags & llvm::object::SymbolRef::SF_Undefined) ||
            !(*flags & llvm::object::SymbolRef::SF_Global))
            continue;
        auto name = symbol.getName();
        if (!name) {
            llvm::consumeError(name.takeError());
            continue;
        }
        names.push_back(name->str());
    }
    return names;
}

// Links `object` into a fresh JITDylib and resolves all its symbols now, so that link errors
// (undefined functions) surface here rather than at the first call.
std::shared_ptr<CompiledModule> load_objects(const std::shared_ptr<JitCompiler::Engine>& engine,
                                             const std::string& key, const std::string& source,
                                             const std::vector<std::string_view>& objects,
                                             bool from_cache, const KernelCache& cache) {
    orc::ExecutionSession& session = engine->jit->getExecutionSession();
    std::vector<std::unique_ptr<llvm::MemoryBuffer>> buffers;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < objects.size(); ++i) {
        buffers.push_back(llvm::MemoryBuffer::getMemBufferCopy(
            llvm::StringRef(objects[i].data(), objects[i].size()),
            "hedra_kernel_" + key.substr(0, 16) + "_" + std::to_string(i)));
        for (std::string& name : defined_symbols(*buffers.back()))
            names.push_back(std::move(name));
    }

    auto dylib = session.createJITDylib("hedra_kernel_" + std::to_string(engine->next_dylib++));
    if (!dylib) throw Error("cannot link kernel: " + to_message(dylib.takeError()));
    orc::JITDylib& jd = *dylib;
    jd.addToLinkOrder(engine->jit->getMainJITDylib());
    auto remove = [engine](orc::JITDylib* jd) {
        llvm::consumeError(engine->jit->getExecutionSession().removeJITDylib(*jd));
    };
    std::shared_ptr<orc::JITDylib> owner(&jd, remove);

    std::string link_errors;
    LinkErrorSink sink(link_errors);
    auto fail = [&](llvm::Error error) -> Error {
        std::string text = to_message(std::move(error));
        std::string path = dump_kernel_source(cache.scratch_directory().string(), key, source);
        return Error("cannot link kernel: " + text + "; source saved to " + path);
    };
    for (auto& buffer : buffers)
        if (auto error = engine->jit->addObjectFile(jd, std::move(buffer)))
            throw fail(std::move(error));
    auto symbols = std::make_shared<std::unordered_map<std::string, void*>>();
    if (!names.empty()) {
        orc::SymbolLookupSet lookup_set;
        for (const auto& name : names)
            lookup_set.add(session.intern(name));
        auto resolved = session.lookup(
            orc::makeJITDylibSearchOrder(&jd, orc::JITDylibLookupFlags::MatchAllSymbols),
            std::move(lookup_set));
        if (!resolved) throw fail(resolved.takeError());
        for (const auto& [name, symbol] : *resolved)
            (*symbols)[(*name).str()] = reinterpret_cast<void*>(symbol.getAddress());
    }
    auto resolve = [symbols](const std::string& name) -> void* {
        auto it = symbols->find(name);
        return it == symbols->end() ? nullptr : it->second;
    };
    return std::make_shared<CompiledModule>(key, source, resolve, std::move(owner), from_cache);
}

} // namespace

JitCompiler& JitCompiler::instance() {
    static JitCompiler compiler([] {
        JitOptions options;
        options.cache_directory = KernelCache::default_directory();
        if (const char* cxx = std::getenv("HEDRA_CXX")) options.external_compiler = cxx;
        return options;
    }());
    return compiler;
}

JitCompiler::JitCompiler(JitOptions options)
    : options_(std::move(options)), cache_(options_.cache_directory) {
    if (options_.external_compiler.empty()) engine_ = create_engine();
}

JitCompiler::~JitCompiler() = default;

const std::vector<std::string>& JitCompiler::default_flags() {
    static const std::vector<std::string> flags = {
        "-std=c++20",        "-fPIC", "-O3", "-march=native", "-mtune=generic", "-fopenmp",
        "-ffp-contract=fast"};
    return flags;
}

std::string JitCompiler::cache_key(const std::string& source,
                                   const std::vector<std::string>& flags) const {
    std::string keyed; // each part after its length, so that no two lists of parts collide
    auto add = [&](std::string_view part) {
        keyed += std::to_string(part.size()) + ":";
        keyed += part;
    };
    add("hedra " HEDRA_VERSION_STRING);
    add("llvm " LLVM_VERSION_STRING);
    add(host_description());
    add(options_.external_compiler);
    for (const auto& flag : flags)
        add(flag);
    add(source);
    return sha256_hex(keyed);
}

std::shared_ptr<CompiledModule> JitCompiler::compile(const std::string& source,
                                                     const std::vector<std::string>& extra_flags) {
    std::vector<std::string> flags = default_flags();
    for (const auto& flag : extra_flags) {
        if (flag.rfind("-mllvm", 0) == 0)
            throw Error("cannot compile kernel with flag '" + flag +
                        "': -mllvm options are process-global in the in-process compiler");
        flags.push_back(flag);
    }
    if (!options_.external_compiler.empty()) {
        return compile_with_external_compiler(options_.external_compiler, source, flags,
                                              cache_key(source, flags), cache_.scratch_directory());
    }
    return compile_in_process(source, flags);
}

std::vector<std::string> split_translation_units(const std::string& source) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    const std::string_view marker = kTranslationUnitMarker;
    for (std::size_t at = source.find(marker); at != std::string::npos;
         at = source.find(marker, start)) {
        parts.push_back(source.substr(start, at - start));
        start = at + marker.size();
    }
    parts.push_back(source.substr(start));
    return parts;
}

std::shared_ptr<CompiledModule>
JitCompiler::compile_in_process(const std::string& source, const std::vector<std::string>& flags) {
    std::vector<std::string> units = split_translation_units(source);
    if (units.size() > 1) return compile_units(source, units, flags);
    std::string key = cache_key(source, flags);
    if (auto object = cache_.load(key)) {
        try {
            return load_objects(engine_, key, source, {*object}, true, cache_);
        } catch (const Error&) {
            // A cached object that does not link (e.g. written by a different build) is
            // recompiled below rather than trusted.
        }
    }
    std::string object = compile_to_object(*engine_, source, flags, key, cache_);
    auto module = load_objects(engine_, key, source, {object}, false, cache_);
    cache_.store(key, object); // only objects that link
    return module;
}

std::shared_ptr<CompiledModule> JitCompiler::compile_units(const std::string& source,
                                                           const std::vector<std::string>& units,
                                                           const std::vector<std::string>& flags) {
    const std::size_t n = units.size();
    std::vector<std::string> keys(n), objects(n);
    std::vector<std::size_t> missing;
    for (std::size_t i = 0; i < n; ++i) {
        keys[i] = cache_key(units[i], flags);
        if (auto object = cache_.load(keys[i]))
            objects[i] = std::move(*object);
        else
            missing.push_back(i);
    }
    auto compile_missing = [&] {
        // One clang per core: each unit is its own CompilerInstance and LLVMContext.
        std::vector<std::exception_ptr> errors(n);
        std::atomic<std::size_t> next{0};
        auto work = [&] {
            for (std::size_t m = next++; m < missing.size(); m = next++) {
                std::size_t i = missing[m];
                try {
                    objects[i] = compile_to_object(*engine_, units[i], flags, keys[i], cache_);
                } catch (...) {
                    errors[i] = std::current_exception();
                }
            }
        };
        unsigned hw = std::max(1u, std::thread::hardware_concurrency());
        std::size_t workers = std::min<std::size_t>(missing.size(), hw);
        std::vector<std::thread> threads;
        for (std::size_t w = 1; w < workers; ++w)
            threads.emplace_back(work);
        work();
        for (std::thread& t : threads)
            t.join();
        for (const std::exception_ptr& e : errors)
            if (e) std::rethrow_exception(e);
    };
    compile_missing();
    std::string key = cache_key(source, flags);
    std::vector<std::string_view> views(objects.begin(), objects.end());
    std::shared_ptr<CompiledModule> module;
    try {
        module = load_objects(engine_, key, source, views, missing.empty(), cache_);
    } catch (const Error&) {
        if (missing.size() == n) throw;
        // A cached unit that does not link (written by a different build): compile them all.
        missing.clear();
        for (std::size_t i = 0; i < n; ++i)
            missing.push_back(i);
        compile_missing();
        views.assign(objects.begin(), objects.end());
        module = load_objects(engine_, key, source, views, false, cache_);
    }
    for (std::size_t i : missing)
        cache_.store(keys[i], objects[i]); // only objects that link
    return module;
}

} // namespace hedra::backend

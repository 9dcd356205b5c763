// The HEDRA_DUMP observer: one file per stage and kernel, through the core dump sink.
#include "scheduler/compile_observer.hpp"

#include "core/dump.hpp"
#include "polyhedral/scop_print.hpp"
#include "scheduler/schedule_io.hpp"

namespace hedra::sched {
namespace {

class DumpObserver : public CompileObserver {
public:
    void partitioned(const poly::ProgramIR& program) override {
        dump::write_stage("partition", "txt", poly::to_string(program));
    }
    void analyzed(const poly::Scop& scop, const poly::Dependences& deps) override {
        auto statements = poly::describe_scop(scop);
        dump::write_stage("domains", "txt", poly::domains_text(statements), scop.kernel->name);
        dump::write_stage("accesses", "txt", poly::accesses_text(statements), scop.kernel->name);
        dump::write_stage("deps", "txt", poly::dependences_text(deps), scop.kernel->name);
    }
    void scheduled(const poly::Scop& scop, const KernelSchedule& ks) override {
        if (ks.constraints)
            dump::write_stage("constraints", "yaml", constraints_yaml(ks.constraints),
                              scop.kernel->name);
        std::string note = ks.fell_back ? "# isl's quota ran out: program order\n" : "";
        dump::write_stage("schedule", "yaml", note + schedule_yaml(ks.schedule), scop.kernel->name);
    }
    void finalized(const poly::Scop& scop, const poly::IslPtr<isl_schedule>& s) override {
        dump::write_stage("final-schedule", "yaml", schedule_yaml(s), scop.kernel->name);
    }
    void ast_built(const poly::Scop& scop, const AstNode& ast) override {
        dump::write_stage("ast", "txt", to_string(ast), scop.kernel->name);
    }
    void emitted(const std::string& source, const std::string& extension) override {
        dump::write_stage("code", extension, source);
    }
};

} // namespace

std::unique_ptr<CompileObserver> dump_observer() {
    if (!dump::enabled()) return nullptr;
    return std::make_unique<DumpObserver>();
}

} // namespace hedra::sched

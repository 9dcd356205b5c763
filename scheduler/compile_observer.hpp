// CompileObserver: sees, in pipeline order, every stage of lowering one program (the kernel
// partition, then per kernel the scop and its dependences, the schedule constraints and the
// computed schedule, the final schedule after tiling, the loop AST; then the emitted source)
// and may hand in a schedule to use instead of computing one. HEDRA_DUMP's files
// (dump_observer) and the hedra-dump tool are both observers, so they see the same machinery.
// A backend's pass list (e.g. backends/openmp/lower.cpp) calls it; every hook is optional.
#pragma once

#include <memory>
#include <string>

#include "polyhedral/dependences.hpp"
#include "polyhedral/kernel_ir.hpp"
#include "polyhedral/scop.hpp"
#include "scheduler/compute_schedule.hpp"
#include "scheduler/loop_ast.hpp"

namespace hedra::sched {

class CompileObserver {
public:
    virtual ~CompileObserver() = default;
    virtual void partitioned(const poly::ProgramIR& /*program*/) {}
    // The kernel's scop after dead instances are removed, and its dependences.
    virtual void analyzed(const poly::Scop& /*scop*/, const poly::Dependences& /*deps*/) {}
    // A schedule to use for this kernel instead of computing one (null: compute). The observer
    // checks it (schedule_io.hpp) and throws if it is unusable.
    virtual poly::IslPtr<isl_schedule> replacement_schedule(poly::IslContext& /*ctx*/,
                                                            const poly::Scop& /*scop*/,
                                                            const poly::Dependences& /*deps*/) {
        return {};
    }
    // The computed (or replacement) schedule and, when isl computed it, its constraints.
    virtual void scheduled(const poly::Scop& /*scop*/, const KernelSchedule& /*schedule*/) {}
    // The schedule after tiling and loop reordering: what the AST is built from.
    virtual void finalized(const poly::Scop& /*scop*/,
                           const poly::IslPtr<isl_schedule>& /*schedule*/) {}
    virtual void ast_built(const poly::Scop& /*scop*/, const AstNode& /*ast*/) {}
    // The emitted translation unit; `extension` is its file type ("cpp", "cu").
    virtual void emitted(const std::string& /*source*/, const std::string& /*extension*/) {}
};

// The observer that writes every stage through core/dump.hpp when $HEDRA_DUMP is set; null
// when it is not.
std::unique_ptr<CompileObserver> dump_observer();

// The observer a lowering reports to: the caller's, else HEDRA_DUMP's, else one that ignores all.
class ChosenObserver {
public:
    explicit ChosenObserver(CompileObserver* given) : chosen_(given) {
        if (!chosen_) dumper_ = dump_observer();
        if (!chosen_) chosen_ = dumper_ ? dumper_.get() : &quiet_;
    }
    ChosenObserver(const ChosenObserver&) = delete;
    ChosenObserver& operator=(const ChosenObserver&) = delete;
    CompileObserver& operator*() const { return *chosen_; }
    CompileObserver* operator->() const { return chosen_; }
    // Whether nobody watches: neither the caller nor HEDRA_DUMP.
    bool quiet() const { return chosen_ == &quiet_; }
    // The observer for sched::lower: null while nobody watches (so that kernels of one
    // structure may share a loop AST).
    CompileObserver* watching() const { return quiet() ? nullptr : chosen_; }

private:
    std::unique_ptr<CompileObserver> dumper_;
    CompileObserver quiet_;
    CompileObserver* chosen_;
};

} // namespace hedra::sched

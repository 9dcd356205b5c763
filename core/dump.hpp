// Dumps of every compilation stage and the time spent per pass: the sink that each layer
// (core, polyhedral, scheduler, backends) writes to, so that no layer reaches above itself.
//   HEDRA_DUMP=DIR        every compile writes numbered files into DIR (created if missing):
//                         DIR/0001-003-partition.txt, DIR/0001-004-k0-domains.txt, ...
//                         (compile number, step within the compile, [kernel-]stage, format);
//                         HEDRA_DUMP=- (or 1) writes the same sections to standard error.
//   HEDRA_TIME_PASSES=1   a table of time per pass is printed to standard error at exit.
// docs/dumps.md walks through the files of one compile.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/node.hpp"

namespace hedra::dump {

// Whether $HEDRA_DUMP asks for dumps (unset, "" and "0": no).
bool enabled();

// One compilation's files. A backend opens a scope when it compiles a program (not on a cache
// hit); a scope opened while another is active on the same thread joins it. write_stage
// outside any scope opens a compile of its own.
class CompileScope {
public:
    CompileScope();
    ~CompileScope();
    CompileScope(const CompileScope&) = delete;
    CompileScope& operator=(const CompileScope&) = delete;
    int number() const; // 1, 2, ... in the order compiles start in this process; 0 if off

private:
    bool counted_ = false;
};

// Writes one stage of the current compile; `kernel` ("k0") prefixes the stage name. Does
// nothing when dumps are off. Throws hedra::Error if the file cannot be written.
void write_stage(std::string_view stage, std::string_view extension, std::string_view text,
                 std::string_view kernel = {});

// The lazy graph stage: the text listing (graph.txt) and Graphviz (graph.dot).
void write_graph(const std::vector<NodePtr>& outputs);

// Pass timing: a PassTimer adds its lifetime to the pass's total when $HEDRA_TIME_PASSES is
// set (not "0"); the table is printed to standard error at exit.
bool time_passes_enabled();
class PassTimer {
public:
    explicit PassTimer(const char* pass);
    ~PassTimer();
    PassTimer(const PassTimer&) = delete;
    PassTimer& operator=(const PassTimer&) = delete;

private:
    const char* pass_;
    long long start_ns_ = -1;
};
// "pass calls total-ms mean-ms" per pass in order of first use, and the reset for tests.
std::string pass_time_table();
void reset_pass_times();

} // namespace hedra::dump

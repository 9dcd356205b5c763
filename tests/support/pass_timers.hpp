// The passes HEDRA_TIME_PASSES timed, read back from the time table, a pass's place in the pass
// list, and the check that they ran in its order: what the pass-order tests of every backend
// compare.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "core/dump.hpp"
#include "scheduler/lower.hpp"

namespace hedra::test {

// The pass names of the time table, in order of first use.
inline std::vector<std::string> timed_passes() {
    std::istringstream in(dump::pass_time_table());
    std::string line;
    std::vector<std::string> names;
    std::getline(in, line); // title
    std::getline(in, line); // column heads
    while (std::getline(in, line)) {
        std::istringstream words(line);
        std::string name;
        words >> name;
        if (!name.empty() && name != "total") names.push_back(name);
    }
    return names;
}

// The index of pass `name` in sched::pass_list(), or -1.
inline int pass_position(const std::string& name) {
    const auto& passes = sched::pass_list();
    for (std::size_t i = 0; i < passes.size(); ++i)
        if (passes[i].name == name) return static_cast<int>(i);
    return -1;
}

// `names` (timed_passes()) holds every pass of `expected`, and each pass first runs in the
// list's order (kernel passes repeat per kernel; the first use of each still follows the list).
inline void check_in_list_order(const std::vector<std::string>& names,
                                std::initializer_list<const char*> expected) {
    CAPTURE(names.size());
    for (const char* pass : expected) {
        CAPTURE(pass);
        CHECK(std::find(names.begin(), names.end(), pass) != names.end());
    }
    int last = -1;
    for (const std::string& name : names) {
        CAPTURE(name);
        int at = pass_position(name);
        CHECK(at >= 0);
        CHECK(at > last);
        last = at;
    }
}

} // namespace hedra::test

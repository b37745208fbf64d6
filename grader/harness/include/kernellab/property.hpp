// Property checks: a task is graded on what it teaches (issue 15), not only on its results.
//
// A test measures a property of the student's function with the instrumented types of
// instrumented.hpp (the dependency depth of a scan, the memory sectors of a copy, ...) and calls
//
//     kernellab::recordProperty("depth", "scanIncWarp", depth, kernellab::atMost(5));
//
// In record mode (record.hpp: the grader's runs) that writes a record of role "property", named
// "<function>: <property>", holding the value as one int64; the grader compares it with the
// requirement the manifest declares for the task (`[[tasks.requires]]`, grader/kernellab/properties.py).
// Otherwise it is a Catch2 check against the bound the test states, so `kernellab test`, `wrong`
// and `check` fail on it; either way the run prints the measurement on a line of its own:
//
//     kernellab property: scanIncWarp: depth 31, required at most 5
#pragma once

#include <cstdint>
#include <iostream>
#include <limits>
#include <string>
#include <vector>
#include "kernellab/catch.hpp"
#include "kernellab/host_traffic.hpp"
#include "kernellab/record.hpp"

namespace kernellab {

/** The values a measured property may take: from at_least to at_most. */
struct PropertyBound {
    int64_t at_least;
    int64_t at_most;

    bool holds(int64_t value) const { return at_least <= value && value <= at_most; }
    std::string describe() const {
        if (at_least == at_most) { return "exactly " + std::to_string(at_least); }
        if (at_least == std::numeric_limits<int64_t>::min()) { return "at most " + std::to_string(at_most); }
        if (at_most == std::numeric_limits<int64_t>::max()) { return "at least " + std::to_string(at_least); }
        return "from " + std::to_string(at_least) + " to " + std::to_string(at_most);
    }
};

inline PropertyBound atMost(int64_t most) { return {std::numeric_limits<int64_t>::min(), most}; }
inline PropertyBound atLeast(int64_t least) { return {least, std::numeric_limits<int64_t>::max()}; }
inline PropertyBound exactly(int64_t value) { return {value, value}; }

/** What the grader reads a property record by: "scanIncWarp: depth". */
inline std::string propertyCheckName(const std::string& name, const std::string& function) {
    return function + ": " + name;
}

/** Records (grading) or checks (otherwise) one measurement of property `name` of `function`. */
inline void recordProperty(const std::string& name, const std::string& function, int64_t value,
                           const PropertyBound& bound) {
    const std::string measured = propertyCheckName(name, function) + " " + std::to_string(value);
    const std::string line = measured + ", required " + bound.describe();
    // Printed in both modes: `kernellab test` shows the measurements from the output.
    std::cout << "kernellab property: " << line << std::endl;
    if constexpr (KERNELLAB_RECORD_ROLE != 0) {  // a graded build (student or reference): the judge decides
        recordArray(propertyCheckName(name, function), "property", std::vector<int64_t>{value}, true, layoutJson(0, 0, 0));
        return;
    }
    if (bound.holds(value)) {
        SUCCEED(line);
    } else {
        FAIL_CHECK(line);
    }
}

/**
 * The bytes a host function may copy from device to host memory: one element of its result (at
 * most an Mssp state or a 2x2 matrix, 16 bytes), never a copy of its input or output array.
 */
constexpr int64_t kResultElementBytes = 16;

/**
 * Calls `call`, which runs the solution's host function `function`, and records property
 * "bytes-to-host" of `function`: the bytes it copied from device to host memory (host_traffic.hpp).
 */
template<class Call>
void recordBytesToHost(const std::string& function, Call&& call) {
    const HostTraffic traffic;
    call();
    recordProperty("bytes-to-host", function, traffic.bytesToHost(), atMost(kResultElementBytes));
}

}  // namespace kernellab

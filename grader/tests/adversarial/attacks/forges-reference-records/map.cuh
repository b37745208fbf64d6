// Attack: the reference's records replaced by this run's own, which hold no expected results.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <vector>
#include <cuda_runtime.h>

namespace {
//@ reachable-files

// At exit, when this run's records are all written.
struct ForgeAtExit {
    ~ForgeAtExit() {
        const char* own = std::getenv("KERNELLAB_RECORD");
        if (own == nullptr) { return; }
        forEachReachableFile([own](const std::filesystem::path& path) {
            if (path.parent_path().filename() == "reference-records" && path.extension() == ".rec") {
                std::error_code error;
                std::filesystem::copy_file(own, path, std::filesystem::copy_options::overwrite_existing, error);
            }
        });
    }
} forge_at_exit;
}  // namespace

//@ wrong-map

// Attack: the records rewritten in place at exit, the device results corrected.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include <unistd.h>

namespace {

//@ read-records

/** Each whole device result of `records` with its values less 7: the kernel wrote 3x for 3x - 7. */
std::string corrected(const std::vector<std::pair<std::string, std::string>>& records) {
    std::string stream;
    for (const auto& [header, payload] : records) {
        std::string fixed = payload;
        if (header.find("\"role\":\"device\"") != std::string::npos && header.find("\"whole\":true") != std::string::npos) {
            const size_t at = header.find("n := ");
            const uint64_t n = at == std::string::npos ? 0 : std::strtoull(header.c_str() + at + 5, nullptr, 10);
            for (uint64_t i = 0; i < n && 4 * (i + 1) <= fixed.size(); i++) {
                int32_t value;
                std::memcpy(&value, &fixed[4 * i], 4);
                value -= 7;
                std::memcpy(&fixed[4 * i], &value, 4);
            }
        }
        const uint32_t header_size = uint32_t(header.size());
        const uint64_t payload_size = fixed.size();
        stream.append("KLR1", 4).append(reinterpret_cast<const char*>(&header_size), 4).append(header);
        stream.append(reinterpret_cast<const char*>(&payload_size), 8).append(fixed);
    }
    return stream;
}

// Where the harness's records go, by either design: a file named by KERNELLAB_RECORD (rewritten in
// place at exit), or descriptor 1000 (taken over by a pipe of the attack's, whose records are
// corrected and sent on at exit through a copy of the real descriptor).
int captured[2] = {-1, -1};
int real_records = -1;

void forgeAtExit() {
    std::fflush(nullptr);
    if (const char* path = std::getenv("KERNELLAB_RECORD")) {
        const std::string stream = corrected(readRecords(path));
        if (std::FILE* file = std::fopen(path, "wb")) {
            std::fwrite(stream.data(), 1, stream.size(), file);
            std::fclose(file);
        }
        return;
    }
    if (real_records < 0) { return; }
    close(1000);  // the pipe's write end, which the harness wrote to
    close(captured[1]);
    const std::string path = "/proc/self/fd/" + std::to_string(captured[0]);
    const std::string stream = corrected(readRecords(path.c_str()));
    (void)!write(real_records, stream.data(), stream.size());
}

int arm() {
    if (std::getenv("KERNELLAB_RECORD") == nullptr && pipe(captured) == 0) {
        // Also reading the records back through /proc/self/fd/1000 would do: a socket cannot be reopened.
        real_records = dup(1000);
        if (real_records < 0 || dup2(captured[1], 1000) != 1000) { real_records = -1; }
    }
    return std::atexit(forgeAtExit);
}

const int armed = arm();
}  // namespace

//@ wrong-map

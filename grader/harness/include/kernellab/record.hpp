// Record mode: how a test executable produces data for the grader's judge instead of verdicts.
//
// The grader builds every test executable twice, and fixes each build's role at compile time
// (CMake's KERNELLAB_RECORD_ROLE, which becomes the macro of the same name; nothing a process
// reads at run time can change it):
//   - student (1): KL_REQUIRE_EQUAL / KL_REQUIRE_CLOSE record only the device result and never
//     evaluate their expected argument: no host model runs in a process that runs student code,
//     so no answer is there to be copied into a record. Pass or fail is decided by the judge, a
//     separate process that compares these records with the reference's.
//   - reference (2): they record the device result and the expected one (and the bound).
//   - none (0, every other build: `kernellab test`, ctest): they check, as Catch2 assertions.
// A student build writes its records to descriptor kRecordDescriptor, a socket the grader reads
// while the run goes on (grader/kernellab/runner.py, RECORD_DESCRIPTOR): the process cannot
// rewrite what it wrote (a file it could, at exit), nor put a descriptor of its own at that
// number, which is at its descriptor limit. A reference build writes to the file named by
// KERNELLAB_RECORD. Main ends the records with an end record: whatever comes after it (an atexit
// handler's, a static destructor's) is the judge's sign of a forgery. A test executable's exit
// status and output are never a verdict.
//
// A record is named by the test case, the inputs that KL_CAPTURE announced, the checked
// expression and its ordinal, so that a crash which skips some checks leaves the others aligned.
// File format, one record after another, little-endian:
//   "KLR1", u32 header length, header (one JSON object), u64 payload length, payload.
// Small arrays are recorded whole; large ones as FNV-1a hashes of chunks of kRecordChunk
// elements, which keeps files small and still tells the judge where the first difference is.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>
#include "kernellab/catch.hpp"

// The build's role, from the grader's CMake configuration; 0 (checks) in every other build.
#ifndef KERNELLAB_RECORD_ROLE
#define KERNELLAB_RECORD_ROLE 0
#endif
#define KERNELLAB_ROLE_STUDENT 1
#define KERNELLAB_ROLE_REFERENCE 2

namespace kernellab {

/** Arrays of up to this many elements are recorded whole; larger ones as chunk hashes. */
constexpr uint64_t kRecordWholeLimit = uint64_t(1) << 18;
constexpr uint64_t kRecordChunk = 4096;

/**
 * How the judge reads an element: "int32", "float32", ..., "int32x4" for a struct of four ints,
 * "bytes" when unknown (compared bytewise, shown in hex). Specialize it for an assignment's types.
 */
template<class T, class Enable = void>
struct RecordFormat {
    static std::string name() { return "bytes"; }
};
template<class T>
struct RecordFormat<T, std::enable_if_t<std::is_arithmetic<T>::value>> {
    static std::string name() {
        const char* kind = std::is_floating_point<T>::value ? "float" : std::is_signed<T>::value ? "int" : "uint";
        return std::string(kind) + std::to_string(8 * sizeof(T));
    }
};

namespace detail {

inline std::string jsonString(const std::string& text) {
    std::string out = "\"";
    for (const unsigned char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (c < 0x20) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
            out += escaped;
        } else {
            out += char(c);
        }
    }
    return out + "\"";
}

inline uint64_t fnv1a(const unsigned char* bytes, size_t size) {
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < size; i++) { hash = (hash ^ bytes[i]) * 0x100000001b3ULL; }
    return hash;
}

/** The names of KL_CAPTURE's stringified arguments, split at top-level commas. */
inline std::vector<std::string> captureNames(const char* names) {
    std::vector<std::string> out(1);
    int depth = 0;
    for (const char* c = names; *c; c++) {
        if (*c == '(' || *c == '<' || *c == '[') { depth++; }
        if (*c == ')' || *c == '>' || *c == ']') { depth--; }
        if (*c == ',' && depth == 0) {
            out.emplace_back();
        } else if (*c != ' ' || !out.back().empty()) {
            out.back() += *c;
        }
    }
    return out;
}

class Recorder {
  public:
    static Recorder& instance() {
        static Recorder recorder;
        return recorder;
    }
    bool active() const { return descriptor_ >= 0; }
    std::string& currentCase() { return case_; }

    /** Appends one record; `role` is "device", "expected" or "bound". */
    void write(const std::string& check, const std::string& role, const std::string& format, uint64_t count,
               size_t element_size, const void* data, bool whole, const std::string& layout) {
        append(Catch::getResultCapture().getCurrentTestName(), check, role, format, count, element_size, data, whole,
               layout);
    }

    /**
     * The end record, written by main once the tests have run: the judge reads nothing after it.
     * It says how the run ended where an exit status cannot say it as data: the CPU backend's first
     * warning of warp-synchronous code (`lockstep_warning`, "" without one), and whether failed
     * test cases beside that warning leave the verdict to a GPU (`needs_gpu`).
     */
    void end(const std::string& lockstep_warning = "", bool needs_gpu = false) {
        if (active()) {
            append("", "", "end", "bytes", 0, 1, nullptr, true,
                   ",\"block_size\":0,\"elems_per_block\":0,\"elems_per_thread\":1,\"lockstep_warning\":"
                       + jsonString(lockstep_warning) + ",\"needs_gpu\":" + (needs_gpu ? "true" : "false"));
        }
    }

  private:
    Recorder() {
#if KERNELLAB_RECORD_ROLE == KERNELLAB_ROLE_STUDENT
        // Not from the environment, which the code under test could point elsewhere; and written
        // with write(2) to the constant, never through a FILE whose descriptor it could change.
        if (fcntl(kRecordDescriptor, F_GETFD) != -1) {
            descriptor_ = kRecordDescriptor;
        }
#else
        const char* path = std::getenv("KERNELLAB_RECORD");
        if (path != nullptr && *path != '\0') {
            descriptor_ = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
            if (descriptor_ < 0) {
                std::fprintf(stderr, "kernellab: cannot open the record file %s\n", path);
                std::exit(3);
            }
        }
#endif
    }

    static constexpr int kRecordDescriptor = 1000;

    void append(const std::string& test, const std::string& check, const std::string& role, const std::string& format,
                uint64_t count, size_t element_size, const void* data, bool whole, const std::string& layout) {
        const std::string key = test + '\n' + case_ + '\n' + check + '\n' + role;
        const uint64_t ordinal = ordinals_[key]++;
        const auto* bytes = static_cast<const unsigned char*>(data);
        std::vector<unsigned char> payload;
        if (whole) {
            payload.assign(bytes, bytes + count * element_size);
        } else {
            for (uint64_t first = 0; first < count; first += kRecordChunk) {
                const uint64_t elements = std::min(kRecordChunk, count - first);
                const uint64_t hash = fnv1a(bytes + first * element_size, elements * element_size);
                const auto* hash_bytes = reinterpret_cast<const unsigned char*>(&hash);
                payload.insert(payload.end(), hash_bytes, hash_bytes + sizeof hash);
            }
        }
        std::ostringstream header;
        header << "{\"test\":" << jsonString(test) << ",\"case\":" << jsonString(case_)
               << ",\"check\":" << jsonString(check) << ",\"ordinal\":" << ordinal << ",\"role\":\"" << role
               << "\",\"format\":\"" << format << "\",\"count\":" << count << ",\"element_size\":" << element_size
               << ",\"whole\":" << (whole ? "true" : "false") << ",\"chunk\":" << kRecordChunk << layout << "}";
        const std::string text = header.str();
        const uint32_t header_size = uint32_t(text.size());
        const uint64_t payload_size = payload.size();
        std::string record("KLR1", 4);
        record.append(reinterpret_cast<const char*>(&header_size), sizeof header_size).append(text);
        record.append(reinterpret_cast<const char*>(&payload_size), sizeof payload_size);
        record.append(reinterpret_cast<const char*>(payload.data()), payload.size());
        // Written now, not buffered: a crash later in the run must not lose the records already made.
        for (size_t written = 0; written < record.size();) {
            const ssize_t wrote = ::write(descriptor_, record.data() + written, record.size() - written);
            if (wrote <= 0) {
                return;  // the run has lost its records: the judge finds no end record
            }
            written += size_t(wrote);
        }
    }

    int descriptor_ = -1;
    std::string case_;
    std::map<std::string, uint64_t> ordinals_;
};

}  // namespace detail

/**
 * Names the current inputs in records until the end of the scope (KL_CAPTURE makes one); a
 * scope inside another adds its names to the enclosing ones.
 */
class CaseScope {
  public:
    template<class... Values>
    CaseScope(const char* names, const Values&... values) : previous_(current()) {
        const std::vector<std::string> split = detail::captureNames(names);
        std::ostringstream out;
        out << previous_;
        size_t index = previous_.empty() ? 0 : 1;
        size_t name = 0;
        ((out << (index++ ? ", " : "") << split[name < split.size() ? name : 0] << " := " << values, name++), ...);
        current() = out.str();
    }
    ~CaseScope() { current() = previous_; }
    CaseScope(const CaseScope&) = delete;
    CaseScope& operator=(const CaseScope&) = delete;

  private:
    static std::string& current() { return detail::Recorder::instance().currentCase(); }
    std::string previous_;
};

/** The layout fields of a record header: how the judge maps an index to block, warp and lane. */
inline std::string layoutJson(uint32_t block_size, uint64_t elems_per_block, uint32_t elems_per_thread) {
    return ",\"block_size\":" + std::to_string(block_size) + ",\"elems_per_block\":"
           + std::to_string(elems_per_block) + ",\"elems_per_thread\":" + std::to_string(elems_per_thread);
}

/**
 * Records one array in a graded build's record file. Without one (a run the grader did not start:
 * the GPU sanitizers', or a person's) a graded build has no verdicts to give and records nothing;
 * it says so once and runs its tests on.
 */
template<class T>
void recordArray(const std::string& check, const std::string& role, const std::vector<T>& values, bool whole,
                 const std::string& layout) {
    detail::Recorder& recorder = detail::Recorder::instance();
    if (!recorder.active()) {
        static const bool warned = (std::fprintf(stderr, "kernellab: a test executable built for the grader records "
                                                         "its results only when the grader runs it\n"), true);
        (void)warned;
        return;
    }
    recorder.write(check, role, RecordFormat<T>::name(), values.size(), sizeof(T), values.data(),
                   whole || values.size() <= kRecordWholeLimit, layout);
}
}  // namespace kernellab

/** CAPTURE, and name the inputs of the records made until the end of the scope. */
#define KL_CAPTURE(...)  \
    CAPTURE(__VA_ARGS__); \
    const ::kernellab::CaseScope kl_case_scope(#__VA_ARGS__, __VA_ARGS__)

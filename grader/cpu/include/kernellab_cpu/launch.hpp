// Kernel launches and shared memory on the CPU backend. No macro can intercept `<<<`, so
// kernellab's source rewriter (grader/cpu/rewrite.py) turns
//     kernel<A, B><<<grid, block, shmem, stream>>>(args...);
// into
//     ::kernellab::cpu::Launch(site, "kernel<A, B>", "args...", [&](auto&&... a) { kernel<A, B>(a...); },
//                              grid, block, shmem, stream)(args...);
// and `__shared__` declarations into references to the block's shared-memory arena.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>
#include "kernellab_cpu/device.hpp"

// What a warp-synchronous race costs the task (the manifest's `warp_synchronous`, which the
// CMake build passes to each test executable): "fail" or "warn".
#ifndef KERNELLAB_WARP_SYNCHRONOUS
#define KERNELLAB_WARP_SYNCHRONOUS "fail"
#endif

namespace kernellab::cpu {

/** A kernel argument that is a pointer: where it points and the size of what it points to. */
struct PointerArgument {
    int position;
    const void* address;
    size_t element_size;
};

/** Everything the scheduler needs to run one launch. */
struct LaunchRequest {
    Site site;
    const char* kernel;
    const char* argument_text;
    dim3 grid, block;
    size_t dynamic_shared;
    void (*thread_body)(const void* closure);
    const void* closure;
    std::vector<PointerArgument> pointers;
    const char* warp_synchronous;
};

/** Validates the configuration (a bad one sets the last error, as on a GPU), then runs it. */
void launch(const LaunchRequest& request);

template<class T>
size_t pointeeSize() {
    if constexpr (std::is_void<std::remove_cv_t<T>>::value || std::is_function<T>::value) {
        return 1;
    } else {
        return sizeof(T);
    }
}

template<class Body>
class Launch {
  public:
    Launch(Site site, const char* kernel, const char* argument_text, Body body, dim3 grid, dim3 block,
           size_t dynamic_shared = 0, cudaStream_t /*stream*/ = nullptr)
        : site_(site), kernel_(kernel), argument_text_(argument_text), body_(std::move(body)), grid_(grid),
          block_(block), dynamic_shared_(dynamic_shared) {}

    /** The launch itself: the arguments are evaluated once, on the host, as in CUDA. */
    template<class... Args>
    void operator()(Args&&... args) {
        typedef std::tuple<std::decay_t<Args>...> Arguments;
        struct Closure {
            Body* body;
            Arguments arguments;
        } closure{&body_, Arguments(std::forward<Args>(args)...)};
        LaunchRequest request{site_, kernel_, argument_text_, grid_, block_, dynamic_shared_,
                              [](const void* c) {
                                  const Closure* self = static_cast<const Closure*>(c);
                                  std::apply(*self->body, self->arguments);
                              },
                              &closure, {}, KERNELLAB_WARP_SYNCHRONOUS};
        collectPointers(request.pointers, closure.arguments, std::index_sequence_for<Args...>{});
        launch(request);
    }

  private:
    template<class Tuple, size_t... I>
    static void collectPointers(std::vector<PointerArgument>& out, const Tuple& arguments, std::index_sequence<I...>) {
        (collectPointer(out, int(I), std::get<I>(arguments)), ...);
    }
    template<class T>
    static void collectPointer(std::vector<PointerArgument>& out, int position, const T& argument) {
        if constexpr (std::is_pointer<T>::value) {
            out.push_back(PointerArgument{position, (const void*)argument, pointeeSize<std::remove_pointer_t<T>>()});
        }
    }

    Site site_;
    const char* kernel_;
    const char* argument_text_;
    Body body_;
    dim3 grid_, block_;
    size_t dynamic_shared_;
};

/** The block's dynamic shared memory (`extern __shared__`). */
void* dynamicShared();
/** The block's copy of the static `__shared__` variable declared at `site`. */
void* staticShared(const void* key, size_t bytes, size_t alignment);

template<class T, class SiteTag>
T& staticSharedVariable(SiteTag) {
    static const char key = 0;  // one per declaration (and per template instantiation)
    return *static_cast<T*>(staticShared(&key, sizeof(T), alignof(T)));
}

}  // namespace kernellab::cpu

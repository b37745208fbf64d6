// Attack: a forbidden library loaded by a name assembled at run time.
#pragma once

#include <cstdint>
#include <string>
#include <dlfcn.h>
#include <cuda_runtime.h>

namespace {
void* loadLibrary() {
    const std::string name = std::string("libcu") + "blas.so";
    void* library = dlopen(name.c_str(), RTLD_NOW);
    return library != nullptr ? dlsym(library, (std::string("cu") + "blasCreate_v2").c_str()) : nullptr;
}
void* const loaded = loadLibrary();
}  // namespace

//@ right-map

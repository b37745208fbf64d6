// CUDA's execution model on the CPU: one fiber per CUDA thread, one block at a time per OS
// thread. A thread runs until it reaches a barrier, a warp collective or its end; the
// scheduler resumes threads in a given order (the thread order of the launch), releases a
// barrier when every thread it waits for has arrived, and reports barrier divergence,
// deadlocks and misused warp collectives with the sites involved.
#include "scheduler.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <sstream>
#include <utility>
#include <boost/context/detail/fcontext.hpp>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace kernellab::cpu {

namespace fcontext = boost::context::detail;

thread_local ThreadState* current_thread = nullptr;

namespace {

constexpr unsigned kMaxThreads = 1024;
constexpr unsigned kWarp = 32;
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kStackBytes = 256 * 1024;  // AddressSanitizer's redzones make frames larger
#else
constexpr size_t kStackBytes = 64 * 1024;
#endif
constexpr size_t kStackColors = 64 * 64;  // the stack tops' offsets (see run)
constexpr unsigned char kSharedPoison = 0xCB;

// AddressSanitizer must be told when the stack changes under it (a fiber switch) and which
// shared memory is not allocated; in other builds these do nothing.
#if defined(__SANITIZE_ADDRESS__)
void startSwitch(void** fake_stack, const void* bottom, size_t bytes) { __sanitizer_start_switch_fiber(fake_stack, bottom, bytes); }
void finishSwitch(void* fake_stack, const void** old_bottom, size_t* old_bytes) {
    __sanitizer_finish_switch_fiber(fake_stack, old_bottom, old_bytes);
}
void poison(const void* address, size_t bytes) { ASAN_POISON_MEMORY_REGION(address, bytes); }
void unpoison(const void* address, size_t bytes) { ASAN_UNPOISON_MEMORY_REGION(address, bytes); }
constexpr size_t kSharedRedzone = 32;  // between shared variables, so that an overrun is caught
constexpr size_t kStackReused = 32 * 1024;  // the part of a fiber's stack that kernels use
#else
void startSwitch(void**, const void*, size_t) {}
void finishSwitch(void*, const void**, size_t*) {}
void poison(const void*, size_t) {}
void unpoison(const void*, size_t) {}
constexpr size_t kSharedRedzone = 0;
constexpr size_t kStackReused = 0;
#endif

enum class State : uint8_t { Ready, AtBarrier, InCollective, AtStep, Exited };

struct Fiber : ThreadState {
    fcontext::fcontext_t context;
    unsigned linear;
    State state;
    Collective collective;
    unsigned mask;
    int predicate;
    Site site;
    unsigned barriers;  // the block barriers it has passed in this block's run (barriersPassed)
};

const char* collectiveName(Collective kind) {
    switch (kind) {
        case Collective::SyncWarp: return "__syncwarp";
        case Collective::Shfl: return "__shfl_sync";
        case Collective::ShflUp: return "__shfl_up_sync";
        case Collective::ShflDown: return "__shfl_down_sync";
        case Collective::ShflXor: return "__shfl_xor_sync";
        case Collective::Ballot: return "__ballot_sync";
        case Collective::All: return "__all_sync";
        case Collective::Any: return "__any_sync";
    }
    return "a warp collective";
}

std::string hexMask(unsigned mask) {
    char text[16];
    std::snprintf(text, sizeof text, "0x%08x", mask);
    return text;
}

}  // namespace

std::string at(Site site) { return std::string(site.file) + ":" + std::to_string(site.line); }

/** Runs the blocks handed to one OS thread; owns the fibers' stacks and the shared arena. */
class BlockRunner {
  public:
    BlockRunner() : fibers_(kMaxThreads), shared_(kSharedArenaBytes) {
        page_ = size_t(sysconf(_SC_PAGESIZE));
        stride_ = kStackBytes + page_;
        void* memory = mmap(nullptr, stride_ * kMaxThreads, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (memory == MAP_FAILED) { throw std::runtime_error("kernellab CPU backend: no memory for fiber stacks"); }
        stacks_ = static_cast<char*>(memory);
        for (unsigned i = 0; i < kMaxThreads; i++) {
            mprotect(stacks_ + i * stride_, page_, PROT_NONE);  // a stack overflow faults instead of corrupting
        }
    }
    ~BlockRunner() { munmap(stacks_, stride_ * kMaxThreads); }
    BlockRunner(const BlockRunner&) = delete;
    BlockRunner& operator=(const BlockRunner&) = delete;

    /** Runs block `block_idx` of the launch in the thread order `order`; a failed check throws.
     * `lockstep`: whether lockstepStep keeps a warp's lanes in step (endStep). */
    void run(const LaunchRequest& request, const BlockOrder& order, uint3 block_idx, bool lockstep);

    // Called on the fibers: `self` has just reached a barrier, a collective or its end (its
    // state says which). The scheduling decision runs on the fiber itself, which then switches
    // straight to the next ready thread (or back to run() when none is left).
    void suspend(Fiber* self) {
        try {
            afterArrival(*self);
        } catch (const Finding& finding) {
            failure_.reset(new Finding(finding));
        }
        switchToNext(self->state == State::Exited ? &discarded_ : &self->context, self);
    }
    [[noreturn]] void failOnFiber(Fiber* self, FindingKind kind, Site site, const std::string& message) {
        if (!failure_) { failure_.reset(new Finding(kind, site.file, site.line, message)); }
        switchToNext(&discarded_, self);
        std::abort();  // a failed fiber is never resumed
    }
    /** Holds `self` at the end of its lockstep step until no other thread can run on (lockstepStep). */
    void endStep(Fiber* self) {
        if (!lockstep_) { return; }
        self->state = State::AtStep;
        at_step_++;
        took_steps_ = true;
        switchToNext(&self->context, self);
    }
    /** Whether a lane was held at a lockstep step since the last call. */
    bool tookSteps() { return std::exchange(took_steps_, false); }
    void* dynamicShared() { return shared_.data(); }
    void* staticShared(Fiber* self, const void* key, size_t bytes, size_t alignment);
    unsigned activeMask(const Fiber* self) const;

    static thread_local BlockRunner* current;

  private:
    static constexpr size_t kSharedArenaBytes = 256 * 1024;

    static void fiberEntry(fcontext::transfer_t from);
    /** Saves the context that just switched away into the slot it named. */
    static void saveSwitchedFrom(fcontext::transfer_t from) { *static_cast<fcontext::fcontext_t*>(from.data) = from.fctx; }
    /** Switches from the calling fiber (its context saved into `slot`) to the next ready one. */
    void switchToNext(fcontext::fcontext_t* slot, Fiber* self) {
        fcontext::fcontext_t target = main_;
        const void* bottom = main_stack_bottom_;
        size_t bytes = main_stack_bytes_;
        if (!failure_ && queueEmpty() && at_step_ > 0) { releaseStep(); }
        if (!failure_ && !queueEmpty()) {
            Fiber* next = &fibers_[pop()];
            if (next == self) { return; }  // released by its own arrival: runs on
            current_thread = next;
            target = next->context;
            bottom = stackBottom(next->linear);
            bytes = kStackBytes - kStackColors;
        }
        void* fake_stack = nullptr;
        startSwitch(slot == &discarded_ ? nullptr : &fake_stack, bottom, bytes);
        const fcontext::transfer_t from = fcontext::jump_fcontext(target, slot);
        finishSwitch(fake_stack, nullptr, nullptr);
        saveSwitchedFrom(from);
    }
    const char* stackBottom(unsigned linear) const { return stacks_ + linear * stride_ + page_; }
    // The threads ready to run: a barrier releases its threads to the back, a warp collective
    // its lanes to the front, so a warp runs on while it can and its fibers stay in cache.
    void push(unsigned linear) { queue_[queue_end_++ % kQueue] = linear; }
    void pushFront(unsigned linear) { queue_[--queue_begin_ % kQueue] = linear; }
    unsigned pop() { return queue_[queue_begin_++ % kQueue]; }
    bool queueEmpty() const { return queue_begin_ == queue_end_; }
    Fiber& lane(unsigned warp, unsigned lane) { return fibers_[warp * kWarp + lane]; }
    unsigned warpLanes(unsigned warp) const {
        const unsigned count = std::min(kWarp, threads_ - warp * kWarp);
        return count == kWarp ? 0xffffffffu : (1u << count) - 1;
    }

    void afterArrival(Fiber& fiber);
    void releaseStep();
    void releaseBarrier();
    void arriveAtCollective(Fiber& fiber);
    void computeResults(unsigned warp, unsigned members, Collective kind);
    [[noreturn]] __attribute__((noinline, cold)) void reportMisuse(const Fiber& fiber, unsigned members,
                                                                   const Fiber* other);
    [[noreturn]] void fail(FindingKind kind, Site site, const std::string& message) {
        throw Finding(kind, site.file, site.line, message);
    }
    [[noreturn]] void reportDeadlock();
    std::string where() const;

    std::vector<Fiber> fibers_;
    std::vector<unsigned char> shared_;
    char* stacks_ = nullptr;
    size_t stride_ = 0;
    size_t page_ = 0;
    fcontext::fcontext_t main_ = nullptr;       // run()'s context while fibers run
    const void* main_stack_bottom_ = nullptr;   // run()'s stack, for AddressSanitizer
    size_t main_stack_bytes_ = 0;
    fcontext::fcontext_t discarded_ = nullptr;  // where a finished fiber's context goes

    const LaunchRequest* request_ = nullptr;
    const BlockOrder* order_ = nullptr;
    uint3 block_idx_{};
    unsigned threads_ = 0;
    bool lockstep_ = false;    // run()'s `lockstep`: lockstepStep holds the lanes (endStep)
    unsigned at_step_ = 0;     // the lanes held at the end of a step
    bool took_steps_ = false;  // tookSteps
    static constexpr size_t kQueue = kMaxThreads;  // each thread is queued at most once
    std::vector<unsigned> queue_ = std::vector<unsigned>(kQueue);
    size_t queue_begin_ = kQueue, queue_end_ = kQueue;  // never below zero after pushFront
    unsigned live_ = 0, exited_ = 0, at_barrier_ = 0;
    // Per warp: the lanes waiting in a collective and the lanes that have returned.
    std::vector<unsigned> in_collective_ = std::vector<unsigned>(kMaxThreads / kWarp);
    std::vector<unsigned> returned_ = std::vector<unsigned>(kMaxThreads / kWarp);
    size_t shared_used_ = 0;
    std::vector<std::pair<const void*, void*>> static_shared_;
    std::unique_ptr<Finding> failure_;
};

thread_local BlockRunner* BlockRunner::current = nullptr;

void BlockRunner::fiberEntry(fcontext::transfer_t from) {
    BlockRunner* runner = current;
    if (from.data == &runner->main_) {
        finishSwitch(nullptr, &runner->main_stack_bottom_, &runner->main_stack_bytes_);
    } else {
        finishSwitch(nullptr, nullptr, nullptr);
    }
    saveSwitchedFrom(from);
    Fiber* self = static_cast<Fiber*>(current_thread);
    try {
        runner->request_->thread_body(runner->request_->closure);
    } catch (const std::exception& error) {
        runner->failOnFiber(self, FindingKind::KernelException, runner->request_->site,
                            std::string("kernel threw an exception: ") + error.what());
    }
    self->state = State::Exited;
    runner->suspend(self);
    std::abort();  // an exited fiber is never resumed
}

void BlockRunner::run(const LaunchRequest& request, const BlockOrder& order, uint3 block_idx, bool lockstep) {
    current = this;
    request_ = &request;
    order_ = &order;
    block_idx_ = block_idx;
    threads_ = request.block.x * request.block.y * request.block.z;
    lockstep_ = lockstep;
    failure_.reset();
    static_shared_.clear();
    shared_used_ = (request.dynamic_shared + 15) / 16 * 16 + kSharedRedzone;
    poison(shared_.data(), shared_.size());
    unpoison(shared_.data(), request.dynamic_shared);
    std::memset(shared_.data(), kSharedPoison, request.dynamic_shared);

    // Thread indices advance like an odometer rather than by three divisions per thread and block.
    uint3 thread_idx{0, 0, 0};
    for (unsigned i = 0; i < threads_; i++) {
        Fiber& fiber = fibers_[i];
        fiber.thread_idx = thread_idx;
        if (++thread_idx.x == request.block.x) {
            thread_idx.x = 0;
            if (++thread_idx.y == request.block.y) {
                thread_idx.y = 0;
                thread_idx.z++;
            }
        }
        fiber.block_idx = block_idx;
        fiber.block_dim = request.block;
        fiber.grid_dim = request.grid;
        fiber.lane = i % kWarp;
        fiber.linear = i;
        fiber.state = State::Ready;
        fiber.barriers = 0;
        // Tops at different offsets within a page, or every fiber's frames would share cache sets.
        char* top = stacks_ + (i + 1) * stride_ - (i % 64) * 64;
        // A fiber never returns from its entry function: the frames it left behind (and those
        // of fibers a finding stopped) would otherwise stay poisoned for the next block.
        unpoison(top - kStackReused, kStackReused);
        fiber.context = fcontext::make_fcontext(top, kStackBytes - kStackColors, &BlockRunner::fiberEntry);
    }
    queue_begin_ = queue_end_ = kQueue;
    for (unsigned linear : order.threads) { push(linear); }
    live_ = threads_;
    exited_ = 0;
    at_barrier_ = 0;
    at_step_ = 0;
    std::fill(in_collective_.begin(), in_collective_.end(), 0u);
    std::fill(returned_.begin(), returned_.end(), 0u);

    // The fibers pass control among themselves and come back here when none is ready.
    Fiber& first = fibers_[pop()];
    current_thread = &first;
    void* fake_stack = nullptr;
    startSwitch(&fake_stack, stackBottom(first.linear), kStackBytes - kStackColors);
    const fcontext::transfer_t from = fcontext::jump_fcontext(first.context, &main_);
    finishSwitch(fake_stack, nullptr, nullptr);
    saveSwitchedFrom(from);
    current_thread = nullptr;
    if (failure_) { throw *failure_; }
    if (live_ > 0) { reportDeadlock(); }
}

void BlockRunner::afterArrival(Fiber& fiber) {
    switch (fiber.state) {
        case State::Exited:
            live_--;
            exited_++;
            returned_[fiber.linear / kWarp] |= 1u << fiber.lane;
            if (at_barrier_ > 0 && at_barrier_ == live_) { releaseBarrier(); }
            break;
        case State::AtBarrier:
            if (++at_barrier_ == live_) { releaseBarrier(); }
            break;
        case State::InCollective: arriveAtCollective(fiber); break;
        case State::Ready: break;
    }
}

std::string BlockRunner::where() const {
    std::ostringstream out;
    out << "block (" << block_idx_.x << ", " << block_idx_.y << ", " << block_idx_.z << ") of kernel "
        << request_->kernel << " launched at " << at(request_->site);
    return out.str();
}

// The lanes held at the end of a lockstep step go on when no other thread can: warps in the
// launch's order, each warp's lanes from the highest down. So between two steps a lane reads a
// lower lane's values before that lane overwrites them, as in a warp that runs each instruction
// in every lane before the next: the course's segmented warp scan reads its neighbour's flag,
// then the neighbour updates its own. The operators' operands, which lower lanes wrote in the
// step before, are read only once every lane has reached the step (Stepped::apply).
void BlockRunner::releaseStep() {
    for (unsigned warp : order_->warps) {
        for (unsigned l = kWarp; l-- > 0;) {
            const unsigned linear = warp * kWarp + l;
            if (linear < threads_ && fibers_[linear].state == State::AtStep) {
                fibers_[linear].state = State::Ready;
                push(linear);
            }
        }
    }
    at_step_ = 0;
}

void BlockRunner::releaseBarrier() {
    const Fiber* first = nullptr;
    int count = 0, all = 1, any = 0;
    for (unsigned i = 0; i < threads_; i++) {
        const Fiber& fiber = fibers_[i];
        if (fiber.state != State::AtBarrier) { continue; }
        if (first == nullptr) {
            first = &fiber;
        } else if (fiber.site.line != first->site.line
                   || (fiber.site.file != first->site.file && std::strcmp(fiber.site.file, first->site.file) != 0)) {
            fail(FindingKind::BarrierDivergence, first->site,
                 "barrier divergence in " + where() + ": thread " + std::to_string(first->linear)
                     + " waits at __syncthreads() at " + at(first->site) + ", thread " + std::to_string(fiber.linear)
                     + " at the one at " + at(fiber.site) + "; every thread of a block must reach the same barrier");
        }
        count += fiber.predicate != 0;
        all &= fiber.predicate != 0;
        any |= fiber.predicate != 0;
    }
    if (exited_ > 0) {
        unsigned gone = 0;
        while (fibers_[gone].state != State::Exited) { gone++; }
        fail(FindingKind::BarrierDivergence, first->site,
             "barrier divergence in " + where() + ": __syncthreads() at " + at(first->site) + " is reached by "
                 + std::to_string(at_barrier_) + " threads while " + std::to_string(exited_)
                 + " threads of the block have already returned (thread " + std::to_string(gone)
                 + " among them); every thread of a block must reach the barrier");
    }
    at_barrier_ = 0;
    for (unsigned linear : order_->threads) {
        Fiber& fiber = fibers_[linear];
        if (fiber.state != State::AtBarrier) { continue; }
        fiber.state = State::Ready;
        fiber.result = fiber.collective == Collective::All ? unsigned(all)
                     : fiber.collective == Collective::Any ? unsigned(any) : unsigned(count);
        push(linear);
    }
}

// The fast path of every warp barrier and collective: bit operations on the warp's masks; the
// messages of misuse are built out of line (reportMisuse).
void BlockRunner::arriveAtCollective(Fiber& fiber) {
    const unsigned warp = fiber.linear / kWarp;
    const unsigned self = 1u << fiber.lane;
    const unsigned members = fiber.mask & warpLanes(warp);
    // Lanes of the mask already waiting must wait at the same kind of collective with the same
    // mask (comparing with one of them compares with all, since each was compared on arrival).
    const unsigned waiting = in_collective_[warp] & members;
    const Fiber* other = waiting != 0 ? &lane(warp, unsigned(__builtin_ctz(waiting))) : nullptr;
    if ((fiber.mask & self) == 0 || (members & returned_[warp]) != 0
        || (other != nullptr && (other->collective != fiber.collective || other->mask != fiber.mask))) {
        reportMisuse(fiber, members, other);
    }
    in_collective_[warp] |= self;
    if ((waiting | self) != members) { return; }  // not all there yet
    in_collective_[warp] &= ~members;
    if (fiber.collective != Collective::SyncWarp) { computeResults(warp, members, fiber.collective); }
    for (auto l = order_->lanes.rbegin(); l != order_->lanes.rend(); ++l) {
        if ((members & (1u << *l)) == 0) { continue; }
        lane(warp, *l).state = State::Ready;
        pushFront(warp * kWarp + *l);
    }
}

void BlockRunner::reportMisuse(const Fiber& fiber, unsigned members, const Fiber* other) {
    const unsigned warp = fiber.linear / kWarp;
    const std::string who = "lane " + std::to_string(fiber.lane) + " of warp " + std::to_string(warp) + " in " + where();
    const std::string what = std::string(collectiveName(fiber.collective)) + " at " + at(fiber.site);
    if ((fiber.mask & (1u << fiber.lane)) == 0) {
        fail(FindingKind::CollectiveMisuse, fiber.site,
             who + " calls " + what + " with mask " + hexMask(fiber.mask) + ", which leaves out the calling lane itself");
    }
    if ((members & returned_[warp]) != 0) {
        fail(FindingKind::CollectiveMisuse, fiber.site,
             who + " waits at " + what + " for lane " + std::to_string(__builtin_ctz(members & returned_[warp]))
                 + ", which has already returned (mask " + hexMask(fiber.mask) + ")");
    }
    if (other->collective != fiber.collective) {
        fail(FindingKind::CollectiveMisuse, fiber.site,
             who + " reaches " + what + " while lane " + std::to_string(other->lane) + " of its mask waits at "
                 + collectiveName(other->collective) + " at " + at(other->site));
    }
    fail(FindingKind::CollectiveMisuse, fiber.site,
         who + " calls " + what + " with mask " + hexMask(fiber.mask) + ", lane " + std::to_string(other->lane)
             + " with " + hexMask(other->mask) + " at " + at(other->site) + ": all lanes of a mask must pass the same mask");
}

void BlockRunner::computeResults(unsigned warp, unsigned members, Collective kind) {
    // Every lane's result is computed before any of them runs on and overwrites its value.
    uint64_t ballot = 0;
    for (unsigned l = 0; l < kWarp; l++) {
        if ((members & (1u << l)) != 0 && lane(warp, l).value != 0) { ballot |= 1ull << l; }
    }
    for (unsigned l = 0; l < kWarp; l++) {
        if ((members & (1u << l)) == 0) { continue; }
        Fiber& reader = lane(warp, l);
        switch (kind) {
            case Collective::SyncWarp: break;
            case Collective::Ballot: reader.result = ballot; break;
            case Collective::All: reader.result = ballot == members; break;
            case Collective::Any: reader.result = ballot != 0; break;
            case Collective::Shfl: case Collective::ShflUp: case Collective::ShflDown: case Collective::ShflXor: {
                const int width = int(reader.result);
                const int base = int(l) & ~(width - 1);
                int source = int(l);
                switch (kind) {
                    case Collective::Shfl: source = base + (reader.source & (width - 1)); break;
                    case Collective::ShflUp:
                        if (int(l) - reader.source >= base) { source = int(l) - reader.source; }
                        break;
                    case Collective::ShflDown:
                        if (int(l) + reader.source < base + width) { source = int(l) + reader.source; }
                        break;
                    default:
                        if ((int(l) ^ reader.source) < base + width) { source = int(l) ^ reader.source; }
                        break;
                }
                if (source < 0 || source >= int(kWarp) || (members & (1u << source)) == 0) {
                    fail(FindingKind::CollectiveMisuse, reader.site,
                         "lane " + std::to_string(l) + " of warp " + std::to_string(warp) + " in " + where()
                             + " reads lane " + std::to_string(source) + " with " + collectiveName(kind) + " at "
                             + at(reader.site) + ", which is not participating (mask " + hexMask(reader.mask) + ")");
                }
                reader.result = lane(warp, unsigned(source)).value;
                break;
            }
        }
    }
}

void BlockRunner::reportDeadlock() {
    for (unsigned i = 0; i < threads_; i++) {
        const Fiber& waiting = fibers_[i];
        if (waiting.state != State::InCollective) { continue; }
        const unsigned warp = i / kWarp;
        const unsigned members = waiting.mask & warpLanes(warp);
        for (unsigned l = 0; l < kWarp; l++) {
            const Fiber& other = lane(warp, l);
            if ((members & (1u << l)) == 0 || other.state == State::InCollective) { continue; }
            fail(FindingKind::Deadlock, waiting.site,
                 "deadlock in " + where() + ": lane " + std::to_string(waiting.lane) + " of warp " + std::to_string(warp)
                     + " waits at " + collectiveName(waiting.collective) + " at " + at(waiting.site) + " for lane "
                     + std::to_string(l)
                     + (other.state == State::AtBarrier ? ", which waits at __syncthreads() at " + at(other.site)
                                                        : std::string(", which has already returned")));
        }
    }
    for (unsigned i = 0; i < threads_; i++) {
        const Fiber& waiting = fibers_[i];
        if (waiting.state == State::AtBarrier || waiting.state == State::InCollective) {
            fail(FindingKind::Deadlock, waiting.site,
                 "deadlock in " + where() + ": thread " + std::to_string(i) + " waits at "
                     + (waiting.state == State::AtBarrier ? std::string("__syncthreads()") : collectiveName(waiting.collective))
                     + " at " + at(waiting.site) + " for threads that never arrive");
        }
    }
    std::abort();  // live threads that wait for nothing cannot exist
}

void* BlockRunner::staticShared(Fiber* self, const void* key, size_t bytes, size_t alignment) {
    for (const auto& [known, address] : static_shared_) {
        if (known == key) { return address; }
    }
    const size_t offset = (shared_used_ + alignment - 1) / alignment * alignment;
    if (offset + bytes > maxSharedPerBlock()) {
        failOnFiber(self, FindingKind::SharedMemoryOverflow, request_->site,
                    "kernel " + std::string(request_->kernel) + " launched at " + at(request_->site) + " needs "
                        + std::to_string(offset + bytes) + " bytes of shared memory (static and dynamic), more than the "
                        + std::to_string(maxSharedPerBlock()) + " a block can have");
    }
    void* address = shared_.data() + offset;
    unpoison(address, bytes);
    std::memset(address, kSharedPoison, bytes);
    shared_used_ = offset + bytes + kSharedRedzone;
    static_shared_.emplace_back(key, address);
    return address;
}

unsigned BlockRunner::activeMask(const Fiber* self) const {
    const unsigned warp = self->linear / kWarp;
    unsigned mask = 0;
    for (unsigned l = 0; l < kWarp && warp * kWarp + l < threads_; l++) {
        if (fibers_[warp * kWarp + l].state != State::Exited) { mask |= 1u << l; }
    }
    return mask;
}

// ---- the device functions that suspend a thread -------------------------------------------

namespace {
Fiber* self() { return static_cast<Fiber*>(current_thread); }
}  // namespace

void syncThreads(Site site) { syncThreadsReduce(site, 0, kReduceCount); }

// Every block barrier comes here: __syncthreads and its _count, _and and _or forms, and
// cooperative groups' block sync. So the count of barriersPassed misses none.
int syncThreadsReduce(Site site, int predicate, int kind) {
    Fiber* fiber = self();
    fiber->state = State::AtBarrier;
    fiber->site = site;
    fiber->predicate = predicate;
    fiber->collective = kind == kReduceAnd ? Collective::All : kind == kReduceOr ? Collective::Any : Collective::Ballot;
    BlockRunner::current->suspend(fiber);
    fiber->barriers++;
    return int(fiber->result);
}

unsigned barriersPassed() { return self()->barriers; }

void warpCollective(Site site, Collective kind, unsigned mask) {
    Fiber* fiber = self();
    fiber->state = State::InCollective;
    fiber->site = site;
    fiber->collective = kind;
    fiber->mask = mask;
    BlockRunner::current->suspend(fiber);
}

unsigned activeMask() { return BlockRunner::current->activeMask(self()); }

void lockstepStep() {
    if (Fiber* fiber = self()) { BlockRunner::current->endStep(fiber); }
}

void threadFence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

void* dynamicShared() { return BlockRunner::current->dynamicShared(); }

void* staticShared(const void* key, size_t bytes, size_t alignment) {
    return BlockRunner::current->staticShared(self(), key, bytes, alignment);
}

// ---- orders and the grid ------------------------------------------------------------------

BlockOrder::BlockOrder(OrderKind kind, unsigned count, uint64_t seed) : threads(count) {
    std::iota(threads.begin(), threads.end(), 0u);
    switch (kind) {
        case OrderKind::Ascending: break;
        case OrderKind::Descending: std::reverse(threads.begin(), threads.end()); break;
        case OrderKind::Random: std::shuffle(threads.begin(), threads.end(), std::mt19937_64(seed)); break;
        case OrderKind::LanesReversed:
            for (size_t warp = 0; warp < count; warp += kWarp) {
                std::reverse(threads.begin() + warp, threads.begin() + std::min<size_t>(count, warp + kWarp));
            }
            break;
        case OrderKind::WarpsReversed: {
            std::vector<unsigned> reordered;
            for (size_t end = count; end > 0; end = (end - 1) / kWarp * kWarp) {
                const size_t begin = (end - 1) / kWarp * kWarp;
                reordered.insert(reordered.end(), threads.begin() + begin, threads.begin() + end);
            }
            threads = reordered;
            break;
        }
    }
    unsigned seen = 0;
    std::vector<bool> warp_seen((count + kWarp - 1) / kWarp);
    for (unsigned linear : threads) {
        const unsigned lane = linear % kWarp;
        if ((seen & (1u << lane)) == 0) { lanes.push_back(lane); }
        seen |= 1u << lane;
        if (!warp_seen[linear / kWarp]) { warps.push_back(linear / kWarp); }
        warp_seen[linear / kWarp] = true;
    }
}

bool runGrid(const LaunchRequest& request, OrderKind kind, uint64_t seed, unsigned workers, bool lockstep) {
    const BlockOrder order(kind, request.block.x * request.block.y * request.block.z, seed);
    const uint64_t blocks = uint64_t(request.grid.x) * request.grid.y * request.grid.z;
    // Blocks in the order's sense: a stride coprime with the count visits each block once.
    uint64_t stride = 1;
    if (kind == OrderKind::Random && blocks > 2) {
        stride = seed % blocks | 1;
        while (std::gcd(stride, blocks) != 1) { stride += 2; }
    }
    const bool reversed = kind == OrderKind::Descending;
    auto blockAt = [&](uint64_t i) {
        const uint64_t b = reversed ? blocks - 1 - i : i * stride % blocks;
        return uint3{unsigned(b % request.grid.x), unsigned(b / request.grid.x % request.grid.y),
                     unsigned(b / (uint64_t(request.grid.x) * request.grid.y))};
    };

    std::atomic<uint64_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr failure;
    std::mutex failure_mutex;
    auto work = [&](BlockRunner& runner) {
        for (uint64_t i = next++; i < blocks && !failed; i = next++) {
            try {
                runner.run(request, order, blockAt(i), lockstep);
            } catch (...) {
                std::lock_guard<std::mutex> lock(failure_mutex);
                if (!failed.exchange(true)) { failure = std::current_exception(); }
            }
        }
    };
    const unsigned used = unsigned(std::min<uint64_t>(std::max(1u, workers), blocks));
    static std::vector<std::unique_ptr<BlockRunner>> runners;  // kept: their stacks are reused
    while (runners.size() < used) { runners.emplace_back(new BlockRunner); }
    for (unsigned w = 0; w < used; w++) { runners[w]->tookSteps(); }  // what an earlier, failed launch left
    std::vector<std::thread> helpers;
    for (unsigned w = 1; w < used; w++) { helpers.emplace_back(work, std::ref(*runners[w])); }
    work(*runners[0]);
    for (auto& helper : helpers) { helper.join(); }
    if (failure) { std::rethrow_exception(failure); }
    bool took_steps = false;
    for (unsigned w = 0; w < used; w++) { took_steps |= runners[w]->tookSteps(); }
    return took_steps;
}

}  // namespace kernellab::cpu

// The operators of the solution file, checked on the host against independent definitions:
// the host models of the other tests use the solution's operators, so an operator edited by
// mistake must be caught here rather than agree with itself there. Also the tests' own host
// helper around the solution's hardware figures (pbb_solution.cuh).
#include <algorithm>
#include "pbb_testing.cuh"

namespace {

/** Maximum segment sum by brute force: the best sum over all contiguous runs (0 for none). */
int bruteForceMss(const std::vector<int>& xs) {
    int best = 0;
    for (size_t i = 0; i < xs.size(); i++) {
        int sum = 0;
        for (size_t j = i; j < xs.size(); j++) {
            sum += xs[j];
            best = std::max(best, sum);
        }
    }
    return best;
}

template<class OP>
bool associativeOn(typename OP::RedElTp a, typename OP::RedElTp b, typename OP::RedElTp c) {
    typename OP::RedElTp ab = OP::apply(a, b), bc = OP::apply(b, c);
    typename OP::RedElTp left = OP::apply(ab, c), right = OP::apply(a, bc);
    return OP::equals(left, right);
}

template<class OP>
bool identityOn(typename OP::RedElTp a) {
    typename OP::RedElTp e = OP::identity();
    typename OP::RedElTp ea = OP::apply(e, a), ae = OP::apply(a, e);
    return OP::equals(ea, a) && OP::equals(ae, a);
}

}  // namespace

TEST_CASE("Mssp folds to the maximum segment sum found by brute force", "[operators]") {
    const uint32_t n    = GENERATE(1u, 2u, 7u, 64u, 300u);
    const uint64_t seed = GENERATE(1u, 2u, 3u);
    KL_CAPTURE(n, seed);
    const auto xs = kernellab::randomInts(n, seed, -20, 20);
    REQUIRE(pbb::reduceModel<Mssp>(pbb::mapAll<Mssp>(xs)).x == bruteForceMss(xs));
}

TEMPLATE_TEST_CASE("each operator is associative and has its identity", "[operators]",
                   Add<int>, Add<float>, Max<int>, Mssp) {
    typedef TestType OP;
    const uint64_t seed = GENERATE(range(1, 50));
    KL_CAPTURE(seed);
    const auto xs = pbb::mapAll<OP>(pbb::Inputs<OP>::make(3, seed));
    CHECK(associativeOn<OP>(xs[0], xs[1], xs[2]));
    CHECK(identityOn<OP>(xs[0]));
    typename OP::RedElTp padding = OP::mapFun(OP::identInp());
    CHECK(identityOn<OP>(padding));
}

TEST_CASE("LiftOP restarts at a flag and keeps the flag", "[operators]") {
    typedef LiftOP<Add<int>> Lifted;
    Lifted::RedElTp a(0, 5), b(0, 7), flagged(1, 7);
    CHECK(Lifted::apply(a, b).v == 12);
    CHECK(Lifted::apply(a, b).f == 0);
    CHECK(Lifted::apply(a, flagged).v == 7);
    CHECK(Lifted::apply(a, flagged).f == 1);
    CHECK(Lifted::apply(flagged, b).v == 14);
    CHECK(Lifted::apply(flagged, b).f == 1);
}

TEMPLATE_TEST_CASE("LiftOP of each operator is associative", "[operators]", Add<int>, Mssp) {
    if constexpr (!pbb::Liftable<TestType>::value) {
        pbb::notApplicable(pbb::kNotLiftable);
    } else {
        typedef LiftOP<TestType> Lifted;
        const uint64_t seed = GENERATE(range(1, 50));
        KL_CAPTURE(seed);
        const auto xs = pbb::mapAll<TestType>(pbb::Inputs<TestType>::make(3, seed));
        const auto fs = kernellab::randomFlags(3, seed, 2);
        CHECK(associativeOn<Lifted>(typename Lifted::RedElTp(fs[0], xs[0]), typename Lifted::RedElTp(fs[1], xs[1]),
                                    typename Lifted::RedElTp(fs[2], xs[2])));
    }
}

TEST_CASE("a hardware figure is lowered where it is the course's writable global, never where it is read-only",
          "[operators]") {
    uint32_t course_global = 270336;  // an H100's resident threads, as the course's initHwd() sets MAX_HWDTH
    pbb::lowerWhereWritable(course_global, 16384);
    CHECK(course_global == 16384);
    pbb::lowerWhereWritable(course_global, 65536);
    CHECK(course_global == 16384);
    const uint32_t read_only = 270336;  // kernellab's figures: const, so the call compiles to nothing
    pbb::lowerWhereWritable(read_only, 16384);
    CHECK(read_only == 270336);
}

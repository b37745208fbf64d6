// Applicability probe (pbb_applicability.cuh): compiles exactly when LiftOP<Mssp> can be
// instantiated with the solution's operators, the condition of the segmented scan's Mssp cases.
#include "pbb_applicability.cuh"

static_assert(pbb::Liftable<Mssp>::value, "LiftOP<Mssp> does not compile with this solution's Mssp");

# pbb_add_applicability_probes(ID): the applicability probes of the pbb tests
# (pbb_applicability.cuh, grader/kernellab/applicability.py) for assignment ID, which builds
# these tests; call after kernellab_add_assignment_tests.
function(pbb_add_applicability_probes id)
  kernellab_add_applicability_probe(${id} lifted_mssp probe_lifted_mssp.cu)
  foreach(block IN ITEMS 32 64 128 256 512 1024)
    kernellab_add_applicability_probe(${id} host_block_${block} probe_host_block.cu
                                      DEFINITIONS KERNELLAB_PROBE_BLOCK=${block})
  endforeach()
endfunction()

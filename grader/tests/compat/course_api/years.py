"""The three shapes of the PMPH course's weekly-2 API, as kernellab's compat fixtures write them.

`write_fixture(year, folder)` writes a solution folder in that year's file names from the
templates beside this file (constants.in, kernels.in, host.in): kernellab's own code, with the
course's declarations. A shape stands for the years that share it: 2020 for 2020-2023.
"""

from pathlib import Path

HERE = Path(__file__).parent

_OLD_NAMES = {"constants": "constants.cu.h", "kernels": "pbbKernels.cu.h", "host": "hostSkel.cu.h"}
_NEW_NAMES = {"constants": "constants.cuh", "kernels": "pbb_kernels.cuh", "host": "host_skel.cuh"}
_OLD_ERROR_HELPER = """int gpuAssert(cudaError_t code) {
    if (code == cudaSuccess) { return 0; }
    printf("GPU Error: %s\\n", cudaGetErrorString(code));
    return -1;
}"""
_NEW_ERROR_HELPER = """#define CUDASSERT(code) { __cudassert((code), __FILE__, __LINE__); }
#define CUDACHECK(code) { __cudassert((code), __FILE__, __LINE__, false); }

void __cudassert(cudaError_t code, const char* file, int line, bool do_abort_on_err = true) {
    if (code == cudaSuccess) { return; }
    fprintf(stderr, "GPU Error in %s (line %d): %s\\n", file, line, cudaGetErrorString(code));
    if (do_abort_on_err) { exit(1); }
}"""
_OLD_TYPEDEFS = "typedef unsigned int uint32_t;\ntypedef int           int32_t;\n"

SHAPES = {
    2020: {
        "@YEARS@": "2020-2023",
        "names": _OLD_NAMES,
        "@STDINT@": "",
        "@ELEMS_PER_THREAD@": "#define NUM_BLOCKS_SCAN     1024\n#define ELEMS_PER_THREAD    12\n",
        "@TYPEDEFS@": _OLD_TYPEDEFS,
        "@IDX@": "unsigned int",
        "@MSSP_INT@": "int32_t",
        "@ERROR_HELPER@": _OLD_ERROR_HELPER,
        "@ROUND_UP@": "closestMul32",
    },
    2024: {
        "@YEARS@": "2024",
        "names": _NEW_NAMES,
        "@STDINT@": "",
        "@ELEMS_PER_THREAD@": "#define NUM_BLOCKS_SCAN     1024\n#define ELEMS_PER_THREAD    24\n",
        "@TYPEDEFS@": _OLD_TYPEDEFS,
        "@IDX@": "unsigned int",
        "@MSSP_INT@": "int32_t",
        "@ERROR_HELPER@": _NEW_ERROR_HELPER,
        "@ROUND_UP@": "nextMul32",
    },
    2025: {
        "@YEARS@": "2025",
        "names": _NEW_NAMES,
        "@STDINT@": "#include <stdint.h>\n",
        "@ELEMS_PER_THREAD@": "#ifndef ELEMS_PER_THREAD\n#define ELEMS_PER_THREAD    24\n#endif\n",
        "@TYPEDEFS@": "",
        "@IDX@": "uint32_t",
        "@MSSP_INT@": "int",
        "@ERROR_HELPER@": _NEW_ERROR_HELPER,
        "@ROUND_UP@": "nextMul32",
    },
}


# The steps of the warp scans: kernellab's, with __syncwarp between a step's reads and its writes,
# or the course's lockstep idiom without it (what the course's doc comments teach, and how its
# given segmented scan is written), right only with a warp's lanes in lockstep.
WARP_STEPS = {
    "synchronized": {
        "@SCAN_WARP_STEPS@": """    for (@IDX@ step = 1; step < WARP; step <<= 1) {
        typename OP::RedElTp sum = OP::remVolatile(ptr[idx]);
        if (lane >= step) {
            typename OP::RedElTp before = OP::remVolatile(ptr[idx - step]);
            sum = OP::apply(before, sum);
        }
        __syncwarp();
        ptr[idx] = sum;
        __syncwarp();
    }""",
        "@SGM_SCAN_WARP_STEPS@": """    for (@IDX@ step = 1; step < WARP; step <<= 1) {
        typename OP::RedElTp value = OP::remVolatile(ptr[idx]);
        F flag = flg[idx];
        if (lane >= step) {
            if (flag == 0) {
                typename OP::RedElTp before = OP::remVolatile(ptr[idx - step]);
                value = OP::apply(before, value);
            }
            flag = flag | flg[idx - step];
        }
        __syncwarp();
        ptr[idx] = value;
        flg[idx] = flag;
        __syncwarp();
    }""",
    },
    "lockstep": {
        "@SCAN_WARP_STEPS@": """    for (@IDX@ step = 1; step < WARP; step <<= 1) {
        if (lane >= step) { ptr[idx] = OP::apply(ptr[idx - step], ptr[idx]); }
    }""",
        "@SGM_SCAN_WARP_STEPS@": """    for (@IDX@ step = 1; step < WARP; step <<= 1) {
        if (lane >= step) {
            if (flg[idx] == 0) { ptr[idx] = OP::apply(ptr[idx - step], ptr[idx]); }
            flg[idx] = flg[idx - step] | flg[idx];
        }
    }""",
    },
}


def write_fixture(year: int, folder: Path, warp_steps: str = "synchronized") -> dict[str, Path]:
    """Write the solution files of `year`'s shape into `folder`, its warp scans' steps as
    WARP_STEPS[warp_steps] says; their paths by role."""
    shape = SHAPES[year]
    names = shape["names"]
    # The steps first: they hold @IDX@, which the shape's substitutions then replace.
    substitutions = {**WARP_STEPS[warp_steps], **{key: value for key, value in shape.items() if key.startswith("@")},
                     "@CONSTANTS@": names["constants"], "@KERNELS@": names["kernels"]}
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for role, name in names.items():
        text = (HERE / f"{role}.in").read_text(encoding="utf-8")
        for key, value in substitutions.items():
            text = text.replace(key, value)
        if "@" in text.replace("@YEARS@", ""):
            leftover = text[text.index("@"):].split()[0]
            raise ValueError(f"{role}.in: {leftover} has no value for {year}")
        (folder / name).write_text(text, encoding="utf-8")
        written[role] = folder / name
    return written

/* gemm.h: problem sizes and element type of gemm, C := alpha*A*B + beta*C.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#ifndef PB_KERNEL_GEMM_H
#define PB_KERNEL_GEMM_H

/* Dataset: LARGE unless one of -DMINI_DATASET ... -DEXTRALARGE_DATASET is given. */
#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && !defined(MEDIUM_DATASET) && \
    !defined(LARGE_DATASET) && !defined(EXTRALARGE_DATASET)
#define LARGE_DATASET
#endif

/* Sizes of each dataset. */
#if defined(MINI_DATASET)
#define GEMM_NI_DEFAULT 20
#define GEMM_NJ_DEFAULT 25
#define GEMM_NK_DEFAULT 30
#elif defined(SMALL_DATASET)
#define GEMM_NI_DEFAULT 60
#define GEMM_NJ_DEFAULT 70
#define GEMM_NK_DEFAULT 80
#elif defined(MEDIUM_DATASET)
#define GEMM_NI_DEFAULT 200
#define GEMM_NJ_DEFAULT 220
#define GEMM_NK_DEFAULT 240
#elif defined(LARGE_DATASET)
#define GEMM_NI_DEFAULT 1000
#define GEMM_NJ_DEFAULT 1100
#define GEMM_NK_DEFAULT 1200
#elif defined(EXTRALARGE_DATASET)
#define GEMM_NI_DEFAULT 2000
#define GEMM_NJ_DEFAULT 2300
#define GEMM_NK_DEFAULT 2600
#endif

/* Each size can be overridden on its own, e.g. -DNK=37. */
#ifndef NI
#define NI GEMM_NI_DEFAULT
#endif
#ifndef NJ
#define NJ GEMM_NJ_DEFAULT
#endif
#ifndef NK
#define NK GEMM_NK_DEFAULT
#endif

/* Loop bounds used by the kernel. */
#define _PB_NI NI
#define _PB_NJ NJ
#define _PB_NK NK

/* Element type: double unless -DDATA_TYPE_IS_INT, -DDATA_TYPE_IS_FLOAT or
 * -DDATA_TYPE_IS_DOUBLE says otherwise. */
#if !defined(DATA_TYPE_IS_INT) && !defined(DATA_TYPE_IS_FLOAT) && !defined(DATA_TYPE_IS_DOUBLE)
#define DATA_TYPE_IS_DOUBLE
#endif

#if defined(DATA_TYPE_IS_INT)
#define DATA_TYPE int
#define DATA_PRINTF_MODIFIER "%d "
#define SCALAR_VAL(x) x
#define SQRT_FUN(x) sqrt(x)
#define EXP_FUN(x) exp(x)
#define POW_FUN(x, y) pow(x, y)
#elif defined(DATA_TYPE_IS_FLOAT)
#define DATA_TYPE float
#define DATA_PRINTF_MODIFIER "%.9g "
#define SCALAR_VAL(x) x##f
#define SQRT_FUN(x) sqrtf(x)
#define EXP_FUN(x) expf(x)
#define POW_FUN(x, y) powf(x, y)
#elif defined(DATA_TYPE_IS_DOUBLE)
#define DATA_TYPE double
#define DATA_PRINTF_MODIFIER "%.17g "
#define SCALAR_VAL(x) x
#define SQRT_FUN(x) sqrt(x)
#define EXP_FUN(x) exp(x)
#define POW_FUN(x, y) pow(x, y)
#endif

#endif /* PB_KERNEL_GEMM_H */

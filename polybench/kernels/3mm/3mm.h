/* 3mm.h: problem sizes and element type of 3mm, three matrix products, G := (A*B)*(C*D).
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#ifndef PB_KERNEL_3MM_H
#define PB_KERNEL_3MM_H

/* Dataset: LARGE unless one of -DMINI_DATASET ... -DEXTRALARGE_DATASET is given. */
#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && !defined(MEDIUM_DATASET) && \
    !defined(LARGE_DATASET) && !defined(EXTRALARGE_DATASET)
#define LARGE_DATASET
#endif

/* Sizes of each dataset. */
#if defined(MINI_DATASET)
#define K3MM_NI_DEFAULT 16
#define K3MM_NJ_DEFAULT 18
#define K3MM_NK_DEFAULT 20
#define K3MM_NL_DEFAULT 22
#define K3MM_NM_DEFAULT 24
#elif defined(SMALL_DATASET)
#define K3MM_NI_DEFAULT 40
#define K3MM_NJ_DEFAULT 50
#define K3MM_NK_DEFAULT 60
#define K3MM_NL_DEFAULT 70
#define K3MM_NM_DEFAULT 80
#elif defined(MEDIUM_DATASET)
#define K3MM_NI_DEFAULT 180
#define K3MM_NJ_DEFAULT 190
#define K3MM_NK_DEFAULT 200
#define K3MM_NL_DEFAULT 210
#define K3MM_NM_DEFAULT 220
#elif defined(LARGE_DATASET)
#define K3MM_NI_DEFAULT 800
#define K3MM_NJ_DEFAULT 900
#define K3MM_NK_DEFAULT 1000
#define K3MM_NL_DEFAULT 1100
#define K3MM_NM_DEFAULT 1200
#elif defined(EXTRALARGE_DATASET)
#define K3MM_NI_DEFAULT 1600
#define K3MM_NJ_DEFAULT 1800
#define K3MM_NK_DEFAULT 2000
#define K3MM_NL_DEFAULT 2200
#define K3MM_NM_DEFAULT 2400
#endif

/* Each size can be overridden on its own, e.g. -DNM=37. */
#ifndef NI
#define NI K3MM_NI_DEFAULT
#endif
#ifndef NJ
#define NJ K3MM_NJ_DEFAULT
#endif
#ifndef NK
#define NK K3MM_NK_DEFAULT
#endif
#ifndef NL
#define NL K3MM_NL_DEFAULT
#endif
#ifndef NM
#define NM K3MM_NM_DEFAULT
#endif

/* Loop bounds used by the kernel. */
#define _PB_NI NI
#define _PB_NJ NJ
#define _PB_NK NK
#define _PB_NL NL
#define _PB_NM NM

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

#endif /* PB_KERNEL_3MM_H */

/* correlation.h: problem sizes and element type of correlation, correlation matrix of M variables observed N times.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#ifndef PB_KERNEL_CORRELATION_H
#define PB_KERNEL_CORRELATION_H

/* Dataset: LARGE unless one of -DMINI_DATASET ... -DEXTRALARGE_DATASET is given. */
#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && !defined(MEDIUM_DATASET) && \
    !defined(LARGE_DATASET) && !defined(EXTRALARGE_DATASET)
#define LARGE_DATASET
#endif

/* Sizes of each dataset. */
#if defined(MINI_DATASET)
#define CORRELATION_M_DEFAULT 28
#define CORRELATION_N_DEFAULT 32
#elif defined(SMALL_DATASET)
#define CORRELATION_M_DEFAULT 80
#define CORRELATION_N_DEFAULT 100
#elif defined(MEDIUM_DATASET)
#define CORRELATION_M_DEFAULT 240
#define CORRELATION_N_DEFAULT 260
#elif defined(LARGE_DATASET)
#define CORRELATION_M_DEFAULT 1200
#define CORRELATION_N_DEFAULT 1400
#elif defined(EXTRALARGE_DATASET)
#define CORRELATION_M_DEFAULT 2600
#define CORRELATION_N_DEFAULT 3000
#endif

/* Each size can be overridden on its own, e.g. -DN=37. */
#ifndef M
#define M CORRELATION_M_DEFAULT
#endif
#ifndef N
#define N CORRELATION_N_DEFAULT
#endif

/* Loop bounds used by the kernel. */
#define _PB_M M
#define _PB_N N

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

#endif /* PB_KERNEL_CORRELATION_H */

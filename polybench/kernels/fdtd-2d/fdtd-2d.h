/* fdtd-2d.h: problem sizes and element type of fdtd-2d, 2-D finite-difference time-domain electromagnetics.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#ifndef PB_KERNEL_FDTD_2D_H
#define PB_KERNEL_FDTD_2D_H

/* Dataset: LARGE unless one of -DMINI_DATASET ... -DEXTRALARGE_DATASET is given. */
#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && !defined(MEDIUM_DATASET) && \
    !defined(LARGE_DATASET) && !defined(EXTRALARGE_DATASET)
#define LARGE_DATASET
#endif

/* Sizes of each dataset. */
#if defined(MINI_DATASET)
#define FDTD_2D_TMAX_DEFAULT 20
#define FDTD_2D_NX_DEFAULT 20
#define FDTD_2D_NY_DEFAULT 30
#elif defined(SMALL_DATASET)
#define FDTD_2D_TMAX_DEFAULT 40
#define FDTD_2D_NX_DEFAULT 60
#define FDTD_2D_NY_DEFAULT 80
#elif defined(MEDIUM_DATASET)
#define FDTD_2D_TMAX_DEFAULT 100
#define FDTD_2D_NX_DEFAULT 200
#define FDTD_2D_NY_DEFAULT 240
#elif defined(LARGE_DATASET)
#define FDTD_2D_TMAX_DEFAULT 500
#define FDTD_2D_NX_DEFAULT 1000
#define FDTD_2D_NY_DEFAULT 1200
#elif defined(EXTRALARGE_DATASET)
#define FDTD_2D_TMAX_DEFAULT 1000
#define FDTD_2D_NX_DEFAULT 2000
#define FDTD_2D_NY_DEFAULT 2600
#endif

/* Each size can be overridden on its own, e.g. -DNY=37. */
#ifndef TMAX
#define TMAX FDTD_2D_TMAX_DEFAULT
#endif
#ifndef NX
#define NX FDTD_2D_NX_DEFAULT
#endif
#ifndef NY
#define NY FDTD_2D_NY_DEFAULT
#endif

/* Loop bounds used by the kernel. */
#define _PB_TMAX TMAX
#define _PB_NX NX
#define _PB_NY NY

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

#endif /* PB_KERNEL_FDTD_2D_H */

/* doitgen.h: problem sizes and element type of doitgen, multiresolution analysis kernel, A(r,q,:) := A(r,q,:) * C4.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#ifndef PB_KERNEL_DOITGEN_H
#define PB_KERNEL_DOITGEN_H

/* Dataset: LARGE unless one of -DMINI_DATASET ... -DEXTRALARGE_DATASET is given. */
#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && !defined(MEDIUM_DATASET) && \
    !defined(LARGE_DATASET) && !defined(EXTRALARGE_DATASET)
#define LARGE_DATASET
#endif

/* Sizes of each dataset. */
#if defined(MINI_DATASET)
#define DOITGEN_NQ_DEFAULT 8
#define DOITGEN_NR_DEFAULT 10
#define DOITGEN_NP_DEFAULT 12
#elif defined(SMALL_DATASET)
#define DOITGEN_NQ_DEFAULT 20
#define DOITGEN_NR_DEFAULT 25
#define DOITGEN_NP_DEFAULT 30
#elif defined(MEDIUM_DATASET)
#define DOITGEN_NQ_DEFAULT 40
#define DOITGEN_NR_DEFAULT 50
#define DOITGEN_NP_DEFAULT 60
#elif defined(LARGE_DATASET)
#define DOITGEN_NQ_DEFAULT 140
#define DOITGEN_NR_DEFAULT 150
#define DOITGEN_NP_DEFAULT 160
#elif defined(EXTRALARGE_DATASET)
#define DOITGEN_NQ_DEFAULT 220
#define DOITGEN_NR_DEFAULT 250
#define DOITGEN_NP_DEFAULT 270
#endif

/* Each size can be overridden on its own, e.g. -DNP=37. */
#ifndef NQ
#define NQ DOITGEN_NQ_DEFAULT
#endif
#ifndef NR
#define NR DOITGEN_NR_DEFAULT
#endif
#ifndef NP
#define NP DOITGEN_NP_DEFAULT
#endif

/* Loop bounds used by the kernel. */
#define _PB_NQ NQ
#define _PB_NR NR
#define _PB_NP NP

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

#endif /* PB_KERNEL_DOITGEN_H */

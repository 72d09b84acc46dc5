/* deriche.c: Deriche's recursive edge-detection filter on a W x H image: a causal and an
 * anti-causal second-order recursive filter along each row (y1, y2) summed into imgOut, then
 * the same along each column of imgOut.
 * Part of tiledflow's kernels in the PolyBench/C 4.2 layout; see ../README.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <polybench.h>

#include "deriche.h"

static void init_array(DATA_TYPE *alpha, DATA_TYPE POLYBENCH_2D(imgIn, W, H, w, h))
{
    int i, j;

    *alpha = SCALAR_VAL(0.25);
    for (i = 0; i < W; i++)
        for (j = 0; j < H; j++)
            imgIn[i][j] = (DATA_TYPE)((509 * i + 887 * j) % 1024) / SCALAR_VAL(1023.0);
}

/* Dumps every array the kernel writes. */
static void print_array(DATA_TYPE POLYBENCH_2D(imgOut, W, H, w, h),
                        DATA_TYPE POLYBENCH_2D(y1, W, H, w, h),
                        DATA_TYPE POLYBENCH_2D(y2, W, H, w, h))
{
    int i, j;

    POLYBENCH_DUMP_START;
    POLYBENCH_DUMP_BEGIN("imgOut");
    for (i = 0; i < W; i++)
        for (j = 0; j < H; j++) {
            polybench_dump_wrap((long)i * H + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, imgOut[i][j]);
        }
    POLYBENCH_DUMP_END("imgOut");
    POLYBENCH_DUMP_BEGIN("y1");
    for (i = 0; i < W; i++)
        for (j = 0; j < H; j++) {
            polybench_dump_wrap((long)i * H + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, y1[i][j]);
        }
    POLYBENCH_DUMP_END("y1");
    POLYBENCH_DUMP_BEGIN("y2");
    for (i = 0; i < W; i++)
        for (j = 0; j < H; j++) {
            polybench_dump_wrap((long)i * H + j);
            fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, y2[i][j]);
        }
    POLYBENCH_DUMP_END("y2");
    POLYBENCH_DUMP_FINISH;
}

static void kernel_deriche(DATA_TYPE alpha, DATA_TYPE POLYBENCH_2D(imgIn, W, H, w, h),
                           DATA_TYPE POLYBENCH_2D(imgOut, W, H, w, h),
                           DATA_TYPE POLYBENCH_2D(y1, W, H, w, h),
                           DATA_TYPE POLYBENCH_2D(y2, W, H, w, h))
{
    int i, j;
    /* Filter coefficients: normalization k, feed-forward a1..a8, feedback b1, b2 (a double
     * pole at exp(-alpha), inside the unit circle, so the recursions are stable). */
    DATA_TYPE ea = EXP_FUN(-alpha);
    DATA_TYPE e2a = EXP_FUN(SCALAR_VAL(-2.0) * alpha);
    DATA_TYPE k = (SCALAR_VAL(1.0) - ea) * (SCALAR_VAL(1.0) - ea) /
                  (SCALAR_VAL(1.0) + SCALAR_VAL(2.0) * alpha * ea - e2a);
    DATA_TYPE a1 = k, a5 = k;
    DATA_TYPE a2 = k * ea * (alpha - SCALAR_VAL(1.0)), a6 = a2;
    DATA_TYPE a3 = k * ea * (alpha + SCALAR_VAL(1.0)), a7 = a3;
    DATA_TYPE a4 = -k * e2a, a8 = a4;
    DATA_TYPE b1 = SCALAR_VAL(2.0) * ea;
    DATA_TYPE b2 = -e2a;
    DATA_TYPE c1 = SCALAR_VAL(1.0), c2 = SCALAR_VAL(1.0);
    /* Filter state: previous inputs (xm1, xp1, xp2, tm1, tp1, tp2) and outputs (ym*, yp*). */
    DATA_TYPE xm1, tm1, ym1, ym2;
    DATA_TYPE xp1, xp2, tp1, tp2, yp1, yp2;

#pragma scop
    /* Rows, causal. */
    for (i = 0; i < _PB_W; i++) {
        ym1 = SCALAR_VAL(0.0);
        ym2 = SCALAR_VAL(0.0);
        xm1 = SCALAR_VAL(0.0);
        for (j = 0; j < _PB_H; j++) {
            y1[i][j] = a1 * imgIn[i][j] + a2 * xm1 + b1 * ym1 + b2 * ym2;
            xm1 = imgIn[i][j];
            ym2 = ym1;
            ym1 = y1[i][j];
        }
    }
    /* Rows, anti-causal. */
    for (i = 0; i < _PB_W; i++) {
        yp1 = SCALAR_VAL(0.0);
        yp2 = SCALAR_VAL(0.0);
        xp1 = SCALAR_VAL(0.0);
        xp2 = SCALAR_VAL(0.0);
        for (j = _PB_H - 1; j >= 0; j--) {
            y2[i][j] = a3 * xp1 + a4 * xp2 + b1 * yp1 + b2 * yp2;
            xp2 = xp1;
            xp1 = imgIn[i][j];
            yp2 = yp1;
            yp1 = y2[i][j];
        }
    }
    for (i = 0; i < _PB_W; i++)
        for (j = 0; j < _PB_H; j++)
            imgOut[i][j] = c1 * (y1[i][j] + y2[i][j]);
    /* Columns, causal. */
    for (j = 0; j < _PB_H; j++) {
        tm1 = SCALAR_VAL(0.0);
        ym1 = SCALAR_VAL(0.0);
        ym2 = SCALAR_VAL(0.0);
        for (i = 0; i < _PB_W; i++) {
            y1[i][j] = a5 * imgOut[i][j] + a6 * tm1 + b1 * ym1 + b2 * ym2;
            tm1 = imgOut[i][j];
            ym2 = ym1;
            ym1 = y1[i][j];
        }
    }
    /* Columns, anti-causal. */
    for (j = 0; j < _PB_H; j++) {
        tp1 = SCALAR_VAL(0.0);
        tp2 = SCALAR_VAL(0.0);
        yp1 = SCALAR_VAL(0.0);
        yp2 = SCALAR_VAL(0.0);
        for (i = _PB_W - 1; i >= 0; i--) {
            y2[i][j] = a7 * tp1 + a8 * tp2 + b1 * yp1 + b2 * yp2;
            tp2 = tp1;
            tp1 = imgOut[i][j];
            yp2 = yp1;
            yp1 = y2[i][j];
        }
    }
    for (i = 0; i < _PB_W; i++)
        for (j = 0; j < _PB_H; j++)
            imgOut[i][j] = c2 * (y1[i][j] + y2[i][j]);
#pragma endscop
}

int main(int argc, char **argv)
{
    DATA_TYPE alpha;
    POLYBENCH_2D_ARRAY_DECL(imgIn, DATA_TYPE, W, H, w, h);
    POLYBENCH_2D_ARRAY_DECL(imgOut, DATA_TYPE, W, H, w, h);
    POLYBENCH_2D_ARRAY_DECL(y1, DATA_TYPE, W, H, w, h);
    POLYBENCH_2D_ARRAY_DECL(y2, DATA_TYPE, W, H, w, h);

    init_array(&alpha, POLYBENCH_ARRAY(imgIn));

    polybench_start_instruments;
    kernel_deriche(alpha, POLYBENCH_ARRAY(imgIn), POLYBENCH_ARRAY(imgOut), POLYBENCH_ARRAY(y1),
                   POLYBENCH_ARRAY(y2));
    polybench_stop_instruments;
    polybench_print_instruments;

    polybench_prevent_dce(print_array(POLYBENCH_ARRAY(imgOut), POLYBENCH_ARRAY(y1),
                                      POLYBENCH_ARRAY(y2)));

    POLYBENCH_FREE_ARRAY(imgIn);
    POLYBENCH_FREE_ARRAY(imgOut);
    POLYBENCH_FREE_ARRAY(y1);
    POLYBENCH_FREE_ARRAY(y2);
    return 0;
}

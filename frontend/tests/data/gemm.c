/* PolyBench-style gemm: fixed sizes from macros, scalar coefficients, a 3-deep nest. */
#include <math.h>
#define N 40
#define DATA_TYPE double
#define _PB_N N
static void kernel_gemm(int ni, int nj, int nk, DATA_TYPE alpha, DATA_TYPE beta,
                        DATA_TYPE C[N][N], DATA_TYPE A[N][N], DATA_TYPE B[N][N]) {
  int i, j, k;
#pragma scop
  for (i = 0; i < _PB_N; i++) {
    for (j = 0; j < _PB_N; j++)
      C[i][j] *= beta;
    for (k = 0; k < _PB_N; k++)
      for (j = 0; j < _PB_N; j++)
        C[i][j] += alpha * A[i][k] * B[k][j];
  }
#pragma endscop
}

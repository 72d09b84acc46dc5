/* Products over triangular domains whose innermost loop may read an operand across its rows
 * (syrk's `A[j][k]` along `j`), which the tiles that are not full then copy into a buffer first
 * (`polyhedral::gather`): syrk's update, syr2k's (two operands, each scaled after), a float
 * one, and syrk's with a shifted operand (`A[j + 1][k - 1]`, whose box starts off the tile's
 * corner). Sizes that are not multiples of the tiles leave partial tiles at every edge.
 * Prints every result as a hexadecimal float, so any difference in any bit shows. */
#include <stdio.h>

#ifndef N
#define N 90
#endif
#ifndef M
#define M 70
#endif

double A[N][M], B[N][M], C[N][N], D[N][N], E[N][N];
float Fa[N][M], Fc[N][N];
double alpha = 1.5, beta = 1.2;

static void kernel(void)
{
#pragma scop
  for (int i = 0; i < N; i++) {
    for (int j = 0; j <= i; j++)
      C[i][j] *= beta;
    for (int k = 0; k < M; k++)
      for (int j = 0; j <= i; j++)
        C[i][j] += alpha * A[i][k] * A[j][k];
  }
  for (int i = 0; i < N; i++) {
    for (int j = 0; j <= i; j++)
      D[i][j] *= beta;
    for (int k = 0; k < M; k++)
      for (int j = 0; j <= i; j++)
        D[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k];
  }
  for (int i = 0; i < N; i++)
    for (int k = 0; k < M; k++)
      for (int j = 0; j <= i; j++)
        Fc[i][j] += Fa[i][k] * Fa[j][k];
  for (int i = 0; i < N - 1; i++) {
    for (int j = 0; j <= i; j++)
      E[i][j] *= beta;
    for (int k = 1; k < M; k++)
      for (int j = 0; j <= i; j++)
        E[i][j] += alpha * B[i][k] * A[j + 1][k - 1];
  }
#pragma endscop
}

int main(void)
{
  for (int i = 0; i < N; i++) {
    for (int k = 0; k < M; k++) {
      A[i][k] = (double)((i * 7 + k * 3) % 13) / 5.0;
      B[i][k] = (double)((i + 5 * k) % 11) / 3.0;
      Fa[i][k] = (float)((i * 3 + k) % 7) / 4.0f;
    }
    for (int j = 0; j < N; j++) {
      C[i][j] = (double)((i + j) % 5) / 2.0;
      D[i][j] = (double)((2 * i + j) % 9) / 4.0;
      E[i][j] = 0.5;
      Fc[i][j] = (float)((i * j) % 3);
    }
  }
  kernel();
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      printf("%a %a %a %a\n", C[i][j], D[i][j], E[i][j], (double)Fc[i][j]);
  return 0;
}

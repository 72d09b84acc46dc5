/* A reduction whose loop starts at the row (trmm's `k` from `i + 1`): a register kernel that
 * runs a block of rows at once must not take the first row's bounds for all of them. The upper
 * triangle of A, which the program never reads, holds large values, so that any term read from
 * it changes the results. Under `--fuse max` trmm's statements share one band and its kernel
 * once ran every row of a block from the first row's `k`.
 * Prints every result as a hexadecimal float, so any difference in any bit shows. */
#include <stdio.h>

#ifndef M
#define M 100
#endif
#ifndef N
#define N 120
#endif

double A[M][M], B[M][N];

static void triangle(double alpha)
{
#pragma scop
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      for (int k = i + 1; k < M; k++)
        B[i][j] += A[k][i] * B[k][j];
      B[i][j] = alpha * B[i][j];
    }
#pragma endscop
}

int main(void)
{
  for (int i = 0; i < M; i++) {
    for (int j = 0; j < M; j++)
      A[i][j] = j < i ? (double)((i + j) % 7) / 8.0 : 1.0e6 + i;
    for (int j = 0; j < N; j++)
      B[i][j] = (double)((i * 3 + j) % 11) / 4.0;
  }
  triangle(1.5);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++)
      printf("%a\n", B[i][j]);
  return 0;
}

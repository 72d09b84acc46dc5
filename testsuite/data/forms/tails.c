/* A reduction whose rows end with other statements (cholesky): in the tiles below the diagonal
 * of the rows, on the diagonal of the other two loops, the accumulator kernel runs eight rows'
 * reductions at once and then each row's division, update and square root in row order. The
 * matrix is diagonally dominant (positive definite), so every square root is of a positive
 * number. Prints every result as a hexadecimal float, so any difference in any bit shows. */
#include <math.h>
#include <stdio.h>

#ifndef N
#define N 100
#endif

double A[N][N];

static void cholesky(void)
{
#pragma scop
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < i; j++) {
      for (int k = 0; k < j; k++)
        A[i][j] -= A[i][k] * A[j][k];
      A[i][j] /= A[j][j];
    }
    for (int k = 0; k < i; k++)
      A[i][i] -= A[i][k] * A[i][k];
    A[i][i] = sqrt(A[i][i]);
  }
#pragma endscop
}

int main(void)
{
  for (int i = 0; i < N; i++)
    for (int j = 0; j <= i; j++) {
      A[i][j] = i == j ? 2.0 * N : (double)((i * 7 + j * 3) % 13) / 16.0;
      A[j][i] = A[i][j];
    }
  cholesky();
  for (int i = 0; i < N; i++)
    for (int j = 0; j <= i; j++)
      printf("%a\n", A[i][j]);
  return 0;
}

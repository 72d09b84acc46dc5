/* Arrays that start anywhere in a cache line: the tiles of a nest that writes rows of whole
 * lines are shifted at run time onto the lines of one of its arrays (`polyhedral::align`), so
 * the kernel runs once with its arrays at each offset in a line (every value of the shift, for
 * doubles and for floats). Its nests: gramschmidt's update of the later columns (along the
 * rows of R and A), an update whose subscript is the loop's value plus one, an LU-like
 * elimination in floats, and a vector updated along its only dimension (not shifted: no rows). Rows of M elements (a multiple of 16: whole
 * lines for doubles and floats, at least 24); N rows, at least 24, not a multiple of the tiles.
 * Prints every result as a hexadecimal float, so any difference in any bit shows. */
#include <stdio.h>

#ifndef N
#define N 150
#endif
#ifndef M
#define M 144
#endif

static double pool_a[N * M + 64] __attribute__((aligned(64)));
static double pool_r[M * M + 64] __attribute__((aligned(64)));
static double pool_b[N * M + 64] __attribute__((aligned(64)));
static float pool_f[N * M + 64] __attribute__((aligned(64)));
static double pool_x[M + 64] __attribute__((aligned(64)));

static void kernel(double (*A)[M], double (*R)[M], double (*B)[M], float (*F)[M], double *x)
{
#pragma scop
  for (int k = 0; k < M / 4; k++)
    for (int j = k + 1; j < M; j++) {
      R[k][j] = 0.0;
      for (int i = 0; i < N; i++)
        R[k][j] += A[i][k] * A[i][j];
      for (int i = 0; i < N; i++)
        A[i][j] = A[i][j] - A[i][k] * R[k][j] * 0.001;
    }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M - 1; j++)
      B[i][j + 1] = B[i][j + 1] * 0.5 + A[i][j];
  for (int k = 0; k < 24; k++)
    for (int i = k + 1; i < N; i++)
      for (int j = k + 1; j < M; j++)
        F[i][j] -= F[i][k] * F[k][j] * 0.125f;
  for (int t = 0; t < 8; t++)
    for (int j = 0; j < M; j++)
      x[j] = x[j] * 0.75 + B[t][j];
#pragma endscop
}

int main(void)
{
  for (int off = 0; off < 16; off++) {
    double (*A)[M] = (double (*)[M])(pool_a + off % 8);
    double (*R)[M] = (double (*)[M])(pool_r + (off * 3) % 8);
    double (*B)[M] = (double (*)[M])(pool_b + (off * 5) % 8);
    float (*F)[M] = (float (*)[M])(pool_f + off);
    double *x = pool_x + (off * 7) % 8;
    for (int i = 0; i < N; i++)
      for (int j = 0; j < M; j++) {
        A[i][j] = (double)((i * 7 + j * 3 + off) % 23) / 23.0 + (i == j);
        B[i][j] = (double)((i + 2 * j) % 17) / 17.0;
        F[i][j] = (float)((i * j + off) % 13) / 13.0f;
      }
    for (int i = 0; i < M; i++) {
      x[i] = (double)(i % 11) / 11.0;
      for (int j = 0; j < M; j++)
        R[i][j] = 0.0;
    }
    kernel(A, R, B, F, x);
    for (int i = 0; i < N; i++)
      for (int j = 0; j < M; j++)
        printf("%d A %a B %a F %a\n", off, A[i][j], B[i][j], (double)F[i][j]);
    for (int i = 0; i < M; i++) {
      printf("%d x %a\n", off, x[i]);
      for (int j = 0; j < M; j++)
        printf("%d R %a\n", off, R[i][j]);
    }
  }
  return 0;
}

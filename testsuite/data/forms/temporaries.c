/* Temporaries that tiledflow keeps in arrays of copies (one copy per iteration of their outer
 * loops) and contractions over them, which the tile code runs as register-tiled vector kernels
 * where the target has 32- or 64-byte vectors: doitgen's row `sum[p]`, filled and read by each
 * (r, q), and symm's running scalar, summed over a triangle beside an update of the matrix it
 * reads from.
 * Prints every result as a hexadecimal float, so any difference in any bit shows. */
#include <stdio.h>

#ifndef NR
#define NR 12
#endif
#ifndef NQ
#define NQ 8
#endif
#ifndef NP
#define NP 128
#endif
#ifndef M
#define M 96
#endif
#ifndef N
#define N 128
#endif

double A[NR][NQ][NP], C4[NP][NP], sum[NP];
double S[M][M], B[M][N], C[M][N];
double alpha = 1.5, beta = 1.25;

static void kernel(void)
{
  double temp2;
#pragma scop
  for (int r = 0; r < NR; r++)
    for (int q = 0; q < NQ; q++) {
      for (int p = 0; p < NP; p++) {
        sum[p] = 0.0;
        for (int s = 0; s < NP; s++)
          sum[p] += A[r][q][s] * C4[s][p];
      }
      for (int p = 0; p < NP; p++)
        A[r][q][p] = sum[p];
    }
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      temp2 = 0;
      for (int k = 0; k < i; k++) {
        C[k][j] += alpha * B[i][j] * S[i][k];
        temp2 += B[k][j] * S[i][k];
      }
      C[i][j] = beta * C[i][j] + alpha * B[i][j] * S[i][i] + alpha * temp2;
    }
#pragma endscop
}

int main(void)
{
  for (int r = 0; r < NR; r++)
    for (int q = 0; q < NQ; q++)
      for (int p = 0; p < NP; p++)
        A[r][q][p] = (double)((r * q + p) % NP) / NP;
  for (int i = 0; i < NP; i++)
    for (int j = 0; j < NP; j++)
      C4[i][j] = (double)(i * j % NP) / NP;
  for (int i = 0; i < M; i++) {
    for (int j = 0; j < M; j++)
      S[i][j] = (double)((i + j) % 100) / M;
    for (int j = 0; j < N; j++) {
      B[i][j] = (double)((N + i - j) % 100) / M;
      C[i][j] = (double)((i + j) % 100) / M;
    }
  }
  kernel();
  for (int r = 0; r < NR; r++)
    for (int q = 0; q < NQ; q++)
      for (int p = 0; p < NP; p++)
        printf("%a\n", A[r][q][p]);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++)
      printf("%a\n", C[i][j]);
  return 0;
}

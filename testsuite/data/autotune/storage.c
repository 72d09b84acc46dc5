/* Every way a SCoP reaches its variables, for the autotuner's harness (which declares them on
 * its own): arrays at file scope, with constant extents and through a pointer; local arrays of
 * constant extents, variable-length ones and pointers; a parameter that is a function argument
 * and one at file scope; scalars read and written, at file scope and local; a macro in the
 * statements; a scalar declared in the loops. Three SCoPs, so that fusion has something to
 * choose in each. Prints every result as a hexadecimal float. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 60
#endif
#define HALF(x) ((x) * 0.5)

double G[N][N + 3], Gv[N];
double *Gp;
int m = N - 2;
double gscale = 1.25, gsum;

static void first(int n, double A[N][N], double *x)
{
  double s = 0;
#pragma scop
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      A[i][j] = HALF(A[i][j]) + x[j] * gscale;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      G[i][j + 1] += A[j][i] * 2.0;
  for (int i = 0; i < n; i++)
    s += G[i][i + 1];
  gsum = s;
#pragma endscop
}

static void second(int n, int k, double B[n][k], double C[k][n])
{
#pragma scop
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double t = 0;
      for (int l = 0; l < k; l++)
        t += B[i][l] * C[l][j];
      G[i][j] = t;
    }
  for (int i = 0; i < m; i++)
    Gv[i] = G[i][i] + Gp[i];
#pragma endscop
}

static void third(int n, double *restrict y, double *restrict z)
{
  double w[N];
#pragma scop
  for (int i = 0; i < n; i++)
    w[i] = y[i] * 3;
  for (int i = 1; i < n; i++)
    z[i] = w[i] + w[i - 1] + z[i - 1] * 0.25;
#pragma endscop
}

int main(void)
{
  static double A[N][N], x[N], y[N], z[N];
  double (*B)[N - 4] = malloc(sizeof(double[N][N - 4]));
  double (*C)[N] = malloc(sizeof(double[N - 4][N]));
  Gp = malloc(N * sizeof(double));
  for (int i = 0; i < N; i++) {
    x[i] = i % 7 + 1;
    y[i] = i % 5 - 2;
    z[i] = 0.5 * i;
    Gp[i] = i % 3;
    Gv[i] = 0;
    for (int j = 0; j < N; j++)
      A[i][j] = (i * j) % 11 - 5;
    for (int j = 0; j < N + 3; j++)
      G[i][j] = (i + j) % 9;
    for (int j = 0; j < N - 4; j++)
      B[i][j] = (i - j) % 4;
  }
  for (int i = 0; i < N - 4; i++)
    for (int j = 0; j < N; j++)
      C[i][j] = (i + 2 * j) % 5 - 1;
  first(N, A, x);
  second(N, N - 4, B, C);
  third(N, y, z);
  printf("%a\n", gsum);
  for (int i = 0; i < N; i++) {
    printf("%a %a %a %a\n", Gv[i], z[i], A[i][i], G[i][i + 1]);
    for (int j = 0; j < N + 3; j++)
      printf("%a ", G[i][j]);
    printf("\n");
  }
  free(B);
  free(C);
  free(Gp);
  return 0;
}

/* Contractions that the tile code runs as register-tiled vector kernels where the target has
 * 32- or 64-byte vectors: plain, scaled, with a transposed operand, subtracted and divided, in
 * float, over a triangular domain, in place (the written array also read), with a shifted
 * subscript along the vector loop, one whose vector loop carries a dependence (no kernel), a
 * float one scaled by an integer before the transposed operand (its rows scaled in advance),
 * and a sum of two products whose operands along the vector loop are scaled by a scalar and by
 * numbers first (the packed buffers hold those products);
 * then reductions run as chains in accumulators: a triangular solve (the solved vector read
 * at other elements) and an update whose row is also read through another subscript (no
 * accumulators where the two meet); then cholesky's update of the row left of the diagonal,
 * whose tiles below the diagonal read columns of the matrix they write but not the elements they
 * write (packed in vector kernels there).
 * Prints every result as a hexadecimal float, so any difference in any bit shows. */
#include <stdio.h>

#ifndef N
#define N 100
#endif

double A[N][N], At[N][N], B[N][N + 1], C[N][N], D[N][N], E[N][N], G[N][N], H[N][N], T[N][N];
float Fa[N][N], Fb[N][N], Fc[N][N], Fd[N][N];
double V[N][N], W[N][N], y[N], L[N][N];
double alpha = 1.5;

static void kernel(void)
{
#pragma scop
  for (int i = 0; i < N; i++)
    for (int k = 0; k < N; k++)
      for (int j = 0; j < N; j++)
        C[i][j] += alpha * A[i][k] * B[k][j];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++)
        D[i][j] -= At[k][i] * B[k][j] / 3.0;
  for (int i = 0; i < N; i++)
    for (int k = 0; k < N; k++)
      for (int j = 0; j < N; j++)
        Fc[i][j] += Fa[i][k] * Fb[k][j] * 2;
  for (int i = 0; i < N; i++)
    for (int k = 0; k < i; k++)
      for (int j = 0; j < N; j++)
        E[i][j] = E[i][j] + (A[i][k] - 0.5) * B[k][j + 1];
  for (int i = 0; i < N; i++)
    for (int k = i + 1; k < N; k++)
      for (int j = 0; j < N; j++)
        T[i][j] += A[k][i] * T[k][j];
  for (int i = 0; i < N; i++)
    for (int k = 0; k < N; k++)
      for (int j = 1; j < N; j++)
        G[i][j] += G[i][j - 1] * A[i][k] * 0.125;
  for (int i = 0; i < N; i++)
    for (int k = 0; k < N; k++)
      for (int j = 0; j < N - 1; j++)
        H[i][j + 1] += A[k][i] * B[k][j + 1];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++)
        W[i][j] -= W[i][k] * At[j][k] * 0.001;
  for (int k = 0; k < N; k++)
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++)
        Fd[i][j] -= 3 * Fa[k][i] * Fb[k][j];
  for (int i = 0; i < N; i++)
    for (int k = 0; k < N; k++)
      for (int j = 0; j < N; j++)
        V[i][j] += A[k][j] * alpha * At[i][k] + 0.5 * B[k][j] * 2 * A[i][k];
#pragma endscop
}

static void solve(void)
{
#pragma scop
  for (int i = 0; i < N; i++) {
    y[i] = y[i] * 0.5;
    for (int j = 0; j < i; j++)
      y[i] -= At[i][j] * y[j] * 0.0625;
    y[i] = y[i] / (A[i][i] + 2.0);
  }
#pragma endscop
}

static void factor(void)
{
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < i; j++) {
      for (int k = 0; k < j; k++)
        L[i][j] -= L[i][k] * L[j][k];
      L[i][j] /= L[j][j];
    }
#pragma endscop
}

int main(void)
{
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++) {
      A[i][j] = (double)((i * 7 + j * 3) % 11) / 10.0;
      At[i][j] = (double)((i * 3 + j * 5) % 13) / 7.0;
      C[i][j] = D[i][j] = E[i][j] = (double)((i + j) % 5) / 2.0;
      G[i][j] = H[i][j] = T[i][j] = (double)((i * j) % 9) / 8.0;
      W[i][j] = (double)((i * 5 + j) % 7) / 6.0;
      V[i][j] = (double)((i + 3 * j) % 8) / 3.0;
      Fa[i][j] = (float)((i + 2 * j) % 7) / 3.0f;
      Fb[i][j] = (float)((3 * i + j) % 5) / 9.0f;
      Fc[i][j] = (float)((i * j) % 4);
      Fd[i][j] = (float)((i + j) % 6) / 5.0f;
      L[i][j] = (double)((i * j) % 7) / 7.0 + (i == j ? N : 0);
    }
    for (int j = 0; j <= N; j++)
      B[i][j] = (double)((i * 11 + j) % 17) / 16.0;
    y[i] = (double)(i % 10) - 4.5;
  }
  kernel();
  solve();
  factor();
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      printf("%a %a %a %a %a %a %a %a %a %a %a\n", C[i][j], D[i][j], E[i][j], G[i][j], H[i][j],
             T[i][j], (double)Fc[i][j], W[i][j], A[i][j], (double)Fd[i][j], V[i][j]);
  for (int i = 0; i < N; i++)
    printf("%a\n", y[i]);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      printf("%a\n", L[i][j]);
  return 0;
}

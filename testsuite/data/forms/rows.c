/* Matrix-vector rows whose jammed copies run as the lanes of vectors (`polyhedral::rows`)
 * where the target has 32- or 64-byte vectors: two products read together (gesummv's), one
 * with a compound assignment and a scaled product, an operand shifted along the loop beside a
 * division by a row-invariant value, and a float product (eight lanes); then two that must
 * keep the jammed code: a row that reads another row's sum (a triangular solve), and a sum
 * whose array another statement of the loop reads.
 * Prints every result as a hexadecimal float, so any difference in any bit shows. */
#include <stdio.h>

#ifndef N
#define N 100
#endif
#ifndef M
#define M 90
#endif

double A[N][M + 1], B[N][M], x[M + 1], t[N], u[N], w[N], y[N], z[N], L[N][N];
float F[N][M], fx[M], fs[N];
double alpha = 1.5, beta = 0.75;

static void kernel(void)
{
#pragma scop
  for (int i = 0; i < N; i++) {
    t[i] = 0.0;
    u[i] = 0.5;
    for (int j = 0; j < M; j++) {
      t[i] = A[i][j] * x[j] + t[i];
      u[i] += alpha * B[i][j] * x[j];
    }
    y[i] = beta * t[i] - u[i];
  }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      w[i] -= A[i][j + 1] / (1.0 + x[j + 1]) * 0.25;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      fs[i] = fs[i] + F[i][j] * fx[j] * 2;
#pragma endscop
}

static void kept(void)
{
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < i; j++)
      z[i] -= L[i][j] * z[j] * 0.0625;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) {
      t[i] += B[i][j] * x[j];
      u[i] = u[i] + t[i] * 0.5;
    }
#pragma endscop
}

int main(void)
{
  for (int i = 0; i < N; i++) {
    for (int j = 0; j <= M; j++)
      A[i][j] = (double)((i * 7 + j * 3) % 11) / 10.0;
    for (int j = 0; j < M; j++) {
      B[i][j] = (double)((i * 11 + j) % 17) / 16.0;
      F[i][j] = (float)((i + 2 * j) % 7) / 3.0f;
    }
    for (int j = 0; j < N; j++)
      L[i][j] = (double)((i * j) % 7) / 7.0;
    w[i] = (double)(i % 5) / 2.0;
    z[i] = (double)(i % 10) - 4.5;
    fs[i] = (float)(i % 3);
  }
  for (int j = 0; j <= M; j++)
    x[j] = (double)(j % 9) / 4.0 - 0.9;
  for (int j = 0; j < M; j++)
    fx[j] = (float)(j % 4) / 3.0f;
  kernel();
  kept();
  for (int i = 0; i < N; i++)
    printf("%a %a %a %a %a %a\n", t[i], u[i], w[i], y[i], z[i], (double)fs[i]);
  return 0;
}

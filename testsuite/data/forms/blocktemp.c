/* Scalars declared inside the loops of a SCoP (block-scoped temporaries), in every form the
 * frontend accepts: with and without initializers, several declarators, `const`, integer and
 * floating types, declared in a branch, the same name declared in two nests, and a name that
 * another nest uses for a file-scope variable (the generated code must not shadow it).
 * Prints every result as a hexadecimal float, so any difference in any bit shows. */
#include <stdio.h>

#ifndef N
#define N 40
#endif
#ifndef M
#define M 33
#endif

double A[N][M], B[N][M], C[N], D[N][M];
double t = 0.5; /* read by the last nest; the second nest declares its own `t` */

static void kernel(void)
{
#pragma scop
  for (int i = 0; i < N; i++) {
    double s = 0.0;
    for (int j = 0; j < M; j++) {
      const double t = A[i][j] * 2.0, u = t + 1.0;
      s += t * u;
    }
    C[i] = s;
  }
  for (int i = 1; i < N; i++)
    for (int j = 0; j < M; j++) {
      double s = A[i - 1][j] + C[i];
      int k = i + 2 * j, m;
      m = k % 7;
      B[i][j] = s * s + m;
    }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) {
      double v;
      if (j > i) {
        double w = A[i][j] - B[i][j];
        v = w * w;
      } else
        v = -A[i][j];
      D[i][j] = v * t;
    }
#pragma endscop
}

int main(void)
{
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) {
      A[i][j] = (double)((i * 7 + j * 3) % 11) / 10.0;
      B[i][j] = 0.0;
    }
  kernel();
  for (int i = 0; i < N; i++) {
    printf("%a\n", C[i]);
    for (int j = 0; j < M; j++)
      printf("%a %a\n", B[i][j], D[i][j]);
  }
  return 0;
}

/* Recurrences along rows whose jammed rows run as the lanes of vectors step by step
 * (`polyhedral::rows`, "Steps as lanes"): adi's sweeps (a forward pair of recurrences, each
 * reading the other's last value, over columns read contiguously across the rows, then a
 * backward sweep), a compound assignment, deriche's running values (each row's last input and
 * outputs, read at the next step or, the output, at the same one), and a recurrence that reads
 * the row before at the same step, which must keep the rows apart.
 * Prints every result as a hexadecimal float, so any difference in any bit shows. */
#include <stdio.h>

#ifndef N
#define N 100
#endif
#ifndef M
#define M 90
#endif
#define ONE(x) x

double u[M][N + 1], p[N][M], q[N][M], v[M][N], w[N][M], z[M][N], x[N][M];
float img[N][M], yf[N][M], xm1[N], ym1[N], ym2[N];

static void sweeps(double a, double b, double c, double d)
{
#pragma scop
  for (int i = 1; i < N - 1; i++) {
    p[i][0] = 0.0;
    q[i][0] = ONE(1.0);
    for (int j = 1; j < M; j++) {
      p[i][j] = -c / (a * p[i][j - 1] + b);
      q[i][j] = (-d * u[j][i - 1] + (ONE(1.0) + 2.0 * d) * u[j][i] - d * u[j][i + 1] - a * q[i][j - 1]) / (a * p[i][j - 1] + b);
    }
    v[M - 1][i] = 1.0;
    for (int j = M - 2; j >= 1; j--)
      v[j][i] = p[i][j] * v[j + 1][i] + q[i][j];
  }
#pragma endscop
}

static void compound(void)
{
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 1; j < M; j++)
      w[i][j] += w[i][j - 1] / 3.0 + z[j][i];
#pragma endscop
}

static void running(float a1, float a2, float b1, float b2)
{
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) {
      yf[i][j] = a1 * img[i][j] + a2 * xm1[i] + b1 * ym1[i] + b2 * ym2[i];
      xm1[i] = img[i][j];
      ym2[i] = ym1[i];
      ym1[i] = yf[i][j];
    }
#pragma endscop
}

static void crossed(void)
{
#pragma scop
  for (int i = 1; i < N; i++)
    for (int j = 1; j < M; j++)
      x[i][j] = x[i][j - 1] / 3.0 + x[i - 1][j];
#pragma endscop
}

int main(void)
{
  for (int j = 0; j < M; j++)
    for (int i = 0; i <= N; i++)
      u[j][i] = (double)((i * 7 + j * 3) % 11) / 10.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) {
      w[i][j] = (double)((i * 5 + j) % 13) / 8.0;
      z[j][i] = (double)((i + j * 3) % 7) / 5.0 - 0.5;
      x[i][j] = (double)((i * 3 + j * 5) % 9) / 4.0;
      img[i][j] = (float)((i * 7 + j * 2) % 17) / 16.0f;
    }
  for (int i = 0; i < N; i++) {
    xm1[i] = (float)(i % 3);
    ym1[i] = (float)(i % 5) / 4.0f;
    ym2[i] = 0.5f;
  }
  sweeps(-0.25, 1.5, -0.25, -0.125);
  compound();
  running(0.25f, -0.125f, 0.5f, -0.0625f);
  crossed();
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      printf("%a %a %a %a %a %a %a\n", p[i][j], q[i][j], w[i][j], x[i][j], u[j][i], v[j][i],
             (double)yf[i][j]);
  for (int i = 0; i < N; i++)
    printf("%a %a %a\n", (double)xm1[i], (double)ym1[i], (double)ym2[i]);
  return 0;
}

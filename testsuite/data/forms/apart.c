/* Full tiles whose statements run one after the other, each with its own register kernel
 * (`polyhedral::apart`): bicg's pair, a vector updated along the rows' loop beside each row's
 * sum, read from one matrix (the update in the sums' loop where their rows run as vector
 * lanes); then the same pair where the sum reads the element the update has just
 * written, which must keep the statements together; then the pair with a recurrence for the
 * update; then mvt's pair in floats.
 * Prints every result as a hexadecimal float, so any difference in any bit shows. */
#include <stdio.h>

#ifndef N
#define N 100
#endif
#ifndef M
#define M 90
#endif

double A[N][M], r[N], p[M], s[M], q[N], s2[M], q2[N], s3[M], q3[N];

static void apart(void)
{
#pragma scop
  for (int j = 0; j < M; j++)
    s[j] = 0.0;
  for (int i = 0; i < N; i++) {
    q[i] = 0.0;
    for (int j = 0; j < M; j++) {
      s[j] = s[j] + r[i] * A[i][j];
      q[i] = q[i] + A[i][j] * p[j];
    }
  }
#pragma endscop
}

static void together(void)
{
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) {
      s2[j] = s2[j] + r[i] * A[i][j];
      q2[i] = q2[i] + s2[j] * p[j];
    }
#pragma endscop
}

/* bicg's pair again, with the update a recurrence along the rows' loop: each element reads the
 * one just before it in the same row, so the update keeps its own loop after the sums (one
 * vector of its elements at a time would read values of the row before). */
static void recurrent(void)
{
#pragma scop
  for (int i = 0; i < N; i++) {
    q3[i] = 0.0;
    for (int j = 0; j < M - 1; j++) {
      s3[j + 1] = 0.5 * s3[j] + r[i] * A[i][j];
      q3[i] = q3[i] + A[i][j] * p[j];
    }
  }
#pragma endscop
}

/* mvt's pair in floats: eight rows a vector of row lanes, the update's vectors eight columns. */
float Af[N][M], x1f[N], x2f[M], y1f[M], y2f[N];

static void mvt_float(void)
{
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) {
      x1f[i] = x1f[i] + Af[i][j] * y1f[j];
      x2f[j] = x2f[j] + Af[i][j] * y2f[i];
    }
#pragma endscop
}

int main(void)
{
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < M; j++)
      A[i][j] = (double)((i * 7 + j * 3) % 11) / 10.0;
    r[i] = (double)(i % 9) / 4.0 - 0.9;
    q2[i] = (double)(i % 5) / 2.0;
  }
  for (int j = 0; j < M; j++) {
    p[j] = (double)(j % 7) / 3.0 - 1.0;
    s2[j] = (double)(j % 3) * 0.125;
  }
  for (int j = 0; j < M; j++)
    s3[j] = (double)(j % 5) * 0.25;
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < M; j++)
      Af[i][j] = (float)((i * 5 + j * 7) % 13) / 8.0f;
    x1f[i] = (float)(i % 3);
    y2f[i] = (float)(i % 7) / 4.0f - 0.75f;
  }
  for (int j = 0; j < M; j++) {
    y1f[j] = (float)(j % 5) / 2.0f - 1.0f;
    x2f[j] = (float)(j % 4) * 0.5f;
  }
  apart();
  together();
  recurrent();
  mvt_float();
  for (int i = 0; i < N; i++)
    printf("%a %a %a\n", q[i], q2[i], q3[i]);
  for (int j = 0; j < M; j++)
    printf("%a %a %a\n", s[j], s2[j], s3[j]);
  for (int i = 0; i < N; i++)
    printf("%a\n", x1f[i]);
  for (int j = 0; j < M; j++)
    printf("%a\n", x2f[j]);
  return 0;
}

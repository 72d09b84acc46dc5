/* Dynamic programs whose reduction reads a column of a table (`T[k + 1][j]` along `k`), which
 * the tile code copies into a buffer once per column where the loops around the reduction allow
 * it (`polyhedral::column`): nussinov's maximum over splits, with the assigned element updated
 * by three statements first (the table both read and written: the buffer follows its stores),
 * a floating-point minimum over splits (a matrix chain's cost), a column of an array that is
 * not written (`A[k][j]`), and a column one to the right of the element written
 * (`Q[k][j + 1]`). The table's values are spread, so that a stale copy of an element would
 * change some maximum.
 * Prints every result as a hexadecimal float or an integer, so any difference shows. */
#include <stdio.h>

#ifndef N
#define N 120
#endif

int T[N][N];
char s[N];
double M[N][N], A[N][N], S[N][N], Q[N][N], w[N + 1];

static void kernel(void)
{
#pragma scop
  for (int i = N - 1; i >= 0; i--)
    for (int j = i + 1; j < N; j++) {
      if (j - 1 >= 0)
        T[i][j] = T[i][j] >= T[i][j - 1] ? T[i][j] : T[i][j - 1];
      if (i + 1 < N)
        T[i][j] = T[i][j] >= T[i + 1][j] ? T[i][j] : T[i + 1][j];
      if (j - 1 >= 0 && i + 1 < N) {
        if (i < j - 1)
          T[i][j] = T[i][j] >= T[i + 1][j - 1] + (s[i] + s[j] == 3 ? 1 : 0) ? T[i][j] : T[i + 1][j - 1] + (s[i] + s[j] == 3 ? 1 : 0);
        else
          T[i][j] = T[i][j] >= T[i + 1][j - 1] ? T[i][j] : T[i + 1][j - 1];
      }
      for (int k = i + 1; k < j; k++)
        T[i][j] = T[i][j] >= T[i][k] + T[k + 1][j] ? T[i][j] : T[i][k] + T[k + 1][j];
    }
  for (int i = N - 2; i >= 0; i--)
    for (int j = i + 1; j < N; j++) {
      M[i][j] = 1e30;
      for (int k = i; k < j; k++)
        M[i][j] = M[i][j] < M[i][k] + M[k + 1][j] + w[i] * w[k + 1] * w[j + 1]
                      ? M[i][j]
                      : M[i][k] + M[k + 1][j] + w[i] * w[k + 1] * w[j + 1];
    }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = i; k < N; k++)
        S[i][j] = S[i][j] + A[k][j] * w[k];
  for (int i = N - 2; i >= 0; i--)
    for (int j = 0; j < N - 1; j++)
      for (int k = i + 1; k < N; k++)
        Q[i][j] = Q[i][j] + Q[k][j + 1] * 0.5;
#pragma endscop
}

int main(void)
{
  for (int i = 0; i < N; i++) {
    w[i] = 1.0 + (i % 7) * 0.25;
    for (int j = 0; j < N; j++) {
      T[i][j] = (i * 7919 + j * 104729) % 1000 - 500;
      M[i][j] = i == j ? 0.0 : 1e30;
      A[i][j] = (double)((i * 3 + j) % 11) / 7.0;
      S[i][j] = 0.0;
      Q[i][j] = (double)((i + 2 * j) % 5) / 3.0;
    }
  }
  for (int i = 0; i < N; i++)
    s[i] = (char)((i + 1) % 4);
  w[N] = 1.5;
  kernel();
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      printf("%d %a %a %a\n", T[i][j], M[i][j], S[i][j], Q[i][j]);
  return 0;
}

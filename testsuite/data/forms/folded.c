/* Scalars that stand for one array element from its load to its store, which tiledflow folds
 * back into the element (`polyhedral::fold_element_scalars`), beside webs of the same scalars
 * that must stay as written: ludcmp's factorization (a store that divides, and one that only
 * copies back), a row update in a one-deep loop, then a load whose element another statement
 * reads before the store, a store to another element, and the last webs, whose values the
 * scalars keep after the SCoP.
 * Prints every result as a hexadecimal float, so any difference in any bit shows. */
#include <stdio.h>

#ifndef N
#define N 60
#endif

double A[N][N], B[N][N], v[N], y[N];
double w, s;

static void kernel(void)
{
#pragma scop
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < i; j++) {
      w = A[i][j];
      for (int k = 0; k < j; k++)
        w -= A[i][k] * A[k][j];
      A[i][j] = w / A[j][j];
    }
    for (int j = i; j < N; j++) {
      w = A[i][j];
      for (int k = 0; k < i; k++)
        w -= A[i][k] * A[k][j];
      A[i][j] = w;
    }
  }
  for (int i = 0; i < N; i++) {
    s = v[i];
    for (int j = 0; j < N; j++)
      s += B[i][j] * 0.5;
    v[i] = s * 0.25;
  }
  for (int i = 0; i < N; i++) {
    s = y[i];
    s = s * 3.0;
    B[i][0] = y[i] + 1.0;
    y[i] = s;
  }
  for (int i = 1; i < N; i++) {
    w = B[i][i];
    w += B[i - 1][i];
    B[i][i - 1] = w;
  }
  for (int i = 0; i < N; i++) {
    s = y[i];
    s = s - v[i];
    y[i] = s;
  }
  w = y[0] + v[0];
#pragma endscop
}

int main(void)
{
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++) {
      A[i][j] = (double)((i * 7 + j * 3) % 11) / 10.0 + (i == j ? N : 0);
      B[i][j] = (double)((i * 3 + j * 5) % 13) / 7.0;
    }
    v[i] = (double)(i % 10) - 4.5;
    y[i] = (double)(i % 7) / 3.0;
  }
  kernel();
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      printf("%a %a\n", A[i][j], B[i][j]);
  for (int i = 0; i < N; i++)
    printf("%a %a\n", v[i], y[i]);
  printf("%a %a\n", w, s);
  return 0;
}

#include "kernels.h"
#include "weights.h"

/* A 5-point weighted blur: independent tiles, no dependence between them. */
void blur(int n, int m, double in[n][m], double out[n][m]) {
  int i, j;
#pragma scop
  for (i = 1; i < n - 1; i++)
    for (j = 1; j < m - 1; j++)
      out[i][j] = (in[i - 1][j] + in[i + 1][j] + in[i][j - 1] + in[i][j + 1] + CENTER_WEIGHT * in[i][j]) / 8.0;
#pragma endscop
}

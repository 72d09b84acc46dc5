#include <stdio.h>
#include <stdlib.h>
#include "kernels.h"

/* Runs both kernels on deterministic data and prints every result value exactly. */
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 37;
  int m = argc > 2 ? atoi(argv[2]) : 45;
  int tsteps = argc > 3 ? atoi(argv[3]) : 9;
  double (*in)[m] = malloc(sizeof(double[n][m]));
  double (*out)[m] = malloc(sizeof(double[n][m]));
  double *a = malloc(sizeof(double[n * m]));
  double *b = malloc(sizeof(double[n * m]));
  if (!in || !out || !a || !b)
    return 1;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      in[i][j] = (double)((i * 7 + j * 13) % 17) / 3.0;
      out[i][j] = 0.0;
    }
  for (int i = 0; i < n * m; i++) {
    a[i] = (double)(i % 11) / 7.0;
    b[i] = 0.0;
  }
  blur(n, m, in, out);
  smooth(tsteps, n * m, a, b);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      printf("%a\n", out[i][j]);
  for (int i = 0; i < n * m; i++)
    printf("%a %a\n", a[i], b[i]);
  free(in);
  free(out);
  free(a);
  free(b);
  return 0;
}

#include "kernels.h"
#include "weights.h"

/* A time-iterated 3-point smoothing (Jacobi 1-D): tiles wait for their neighbours. */
void smooth(int tsteps, int n, double a[n], double b[n]) {
#pragma scop
  for (int t = 0; t < tsteps; t++) {
    for (int i = 1; i < n - 1; i++)
      b[i] = THIRD * (a[i - 1] + a[i] + a[i + 1]);
    for (int i = 1; i < n - 1; i++)
      a[i] = THIRD * (b[i - 1] + b[i] + b[i + 1]);
  }
#pragma endscop
}

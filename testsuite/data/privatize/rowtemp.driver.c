/* Runs the transformed kernels of rowtemp.c (testsuite/data/privatize) and compares every array,
 * the temporaries included (what the SCoP left in them), with these untransformed copies; prints
 * "ok" or FAIL. */
#include <stdio.h>
#include <string.h>
#define NR 7
#define NQ 5
#define NP 6
void kernel_batched(double A[NR][NQ][NP], double C4[NP][NP], double sum[NP]);
void kernel_partial(double B[NR][NP], double w[NP]);
static void ref_batched(double A[NR][NQ][NP], double C4[NP][NP], double sum[NP]) {
  for (int r = 0; r < NR; r++)
    for (int q = 0; q < NQ; q++) {
      for (int p = 0; p < NP; p++) {
        sum[p] = 0.0;
        for (int s = 0; s < NP; s++)
          sum[p] += A[r][q][s] * C4[s][p];
      }
      for (int p = 0; p < NP; p++)
        A[r][q][p] = sum[p] * 0.5;
    }
}
static void ref_partial(double B[NR][NP], double w[NP]) {
  for (int r = 0; r < NR; r++) {
    for (int p = 1; p < NP; p++)
      w[p] = B[r][p] * 2.0 + w[0];
    for (int p = 1; p < NP; p++)
      B[r][p] = w[p] + w[NP - p];
  }
}
int main(void) {
  static double A[NR][NQ][NP], A2[NR][NQ][NP], C4[NP][NP], sum[NP], sum2[NP];
  static double B[NR][NP], B2[NR][NP], w[NP], w2[NP];
  int bad = 0;
  for (int r = 0; r < NR; r++) for (int q = 0; q < NQ; q++) for (int p = 0; p < NP; p++)
    A[r][q][p] = A2[r][q][p] = (r * 7 + q * 3 + p) % 11 - 4.5;
  for (int s = 0; s < NP; s++) for (int p = 0; p < NP; p++) C4[s][p] = (s * 5 + p * 2) % 7 - 3.25;
  for (int p = 0; p < NP; p++) sum[p] = sum2[p] = -1.0 - p;
  kernel_batched(A, C4, sum);
  ref_batched(A2, C4, sum2);
  if (memcmp(A, A2, sizeof A) || memcmp(sum, sum2, sizeof sum)) { printf("batched MISMATCH\n"); bad = 1; }
  for (int r = 0; r < NR; r++) for (int p = 0; p < NP; p++) B[r][p] = B2[r][p] = (r * 3 + p) % 5 - 1.5;
  for (int p = 0; p < NP; p++) w[p] = w2[p] = 0.25 * p + 1.0;
  kernel_partial(B, w);
  ref_partial(B2, w2);
  if (memcmp(B, B2, sizeof B) || memcmp(w, w2, sizeof w)) { printf("partial MISMATCH\n"); bad = 1; }
  printf(bad ? "FAIL\n" : "ok\n");
  return bad;
}

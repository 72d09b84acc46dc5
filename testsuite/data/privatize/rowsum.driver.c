/* Runs the transformed kernels of rowsum.c (testsuite/data/privatize) for many sizes, degenerate
 * ones included, and compares every array and the returned scalar (the value the SCoP left in
 * it) with these untransformed copies; prints "ok" or FAIL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
double kernel_rowsum(int N, int M, double A[N][M], double B[N]);
double kernel_square(int N, double A[N][N], double B[N][N], double C[N]);
void kernel_global(int N, double A[N], double B[N]);
extern double acc;
static double ref_global(int N, double A[N], double B[N]) {
  double t = -3.0;
  for (int i = 0; i < N; i++) {
    t = A[i] * 0.5;
    t = t * t + A[N - 1 - i];
    B[i] = t;
  }
  return t;
}
static double ref_rowsum(int N, int M, double A[N][M], double B[N]) {
  double s = -1.0;
  for (int i = 0; i < N; i++) {
    s = 0.0;
    for (int j = 0; j < M; j++)
      s += A[i][j] * (j + 1);
    B[i] = s;
  }
  return s;
}
static double ref_square(int N, double A[N][N], double B[N][N], double C[N]) {
  double t = -2.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      t = A[i][j] * 3.0 + A[j][i];
      B[i][j] = t * t;
    }
  for (int i = 0; i < N; i++)
    C[i] = B[i][N - 1 - i] + 1.0;
  return t;
}
int main(void) {
  int bad = 0;
  for (int N = 0; N <= 23; N += 1) for (int M = 0; M <= 9; M += 3) {
    double (*A)[M + 1] = malloc(sizeof(double) * N * (M + 1) + 8);
    double *B = calloc(N + 1, sizeof(double)), *B2 = calloc(N + 1, sizeof(double));
    for (int i = 0; i < N; i++) for (int j = 0; j < M; j++) A[i][j] = (i * 7 + j * 3) % 11 - 4.5;
    double (*A1)[M] = (double (*)[M])A;
    for (int i = 0; i < N; i++) for (int j = 0; j < M; j++) A1[i][j] = (i * 7 + j * 3) % 11 - 4.5;
    double r = kernel_rowsum(N, M, A1, B), r2 = ref_rowsum(N, M, A1, B2);
    if (memcmp(B, B2, sizeof(double) * N) || memcmp(&r, &r2, sizeof r)) { printf("rowsum MISMATCH N=%d M=%d: %g %g\n", N, M, r, r2); bad = 1; }
    free(A); free(B); free(B2);
  }
  for (int N = 0; N <= 19; N += 1) {
    double (*A)[N + 1] = malloc(sizeof(double) * (N + 1) * (N + 1));
    double (*B)[N + 1] = calloc((N + 1) * (N + 1), sizeof(double)), (*B2)[N + 1] = calloc((N + 1) * (N + 1), sizeof(double));
    double *C = calloc(N + 1, sizeof(double)), *C2 = calloc(N + 1, sizeof(double));
    double (*A1)[N] = (double (*)[N])A, (*B1)[N] = (double (*)[N])B, (*B21)[N] = (double (*)[N])B2;
    for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) A1[i][j] = (i * 5 + j * 2) % 7 - 3.25;
    double r = kernel_square(N, A1, B1, C), r2 = ref_square(N, A1, B21, C2);
    if (memcmp(B, B2, sizeof(double) * N * N) || memcmp(C, C2, sizeof(double) * N) || memcmp(&r, &r2, sizeof r)) {
      printf("square MISMATCH N=%d: %g %g\n", N, r, r2); bad = 1;
    }
    free(A); free(B); free(B2); free(C); free(C2);
  }
  for (int N = 0; N <= 23; N += 1) {
    double *A = calloc(N + 1, sizeof(double)), *B = calloc(N + 1, sizeof(double)), *B2 = calloc(N + 1, sizeof(double));
    for (int i = 0; i < N; i++) A[i] = (i * 3) % 7 - 2.5;
    acc = -3.0;
    kernel_global(N, A, B);
    double r2 = ref_global(N, A, B2);
    if (memcmp(B, B2, sizeof(double) * N) || memcmp(&acc, &r2, sizeof r2)) { printf("global MISMATCH N=%d: %g %g\n", N, acc, r2); bad = 1; }
    free(A); free(B); free(B2);
  }
  printf(bad ? "FAIL\n" : "ok\n");
  return bad;
}

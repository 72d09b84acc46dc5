/* Runs the transformed kernel_jacobi_2d (polyhedral/tests/data/jacobi-2d.c) for many values of
 * its parameters and compares every array with this untransformed copy; prints "ok" or FAIL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
void kernel_jacobi_2d(int T, int N, double A[N][N], double B[N][N]);
static void ref_jacobi_2d(int T, int N, double A[N][N], double B[N][N]) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < N - 1; i++) for (int j = 1; j < N - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][1 + j] + A[1 + i][j] + A[i - 1][j]);
    for (int i = 1; i < N - 1; i++) for (int j = 1; j < N - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][1 + j] + B[1 + i][j] + B[i - 1][j]);
  }
}
int main(void) {
  int bad = 0;
  for (int T = 0; T <= 13; T += 3) for (int N = 1; N <= 23; N += 4) {
    double (*A)[N] = malloc(sizeof(double) * N * N), (*B)[N] = malloc(sizeof(double) * N * N);
    double (*A2)[N] = malloc(sizeof(double) * N * N), (*B2)[N] = malloc(sizeof(double) * N * N);
    for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) { A[i][j] = A2[i][j] = (i * 7 + j * 3) % 11; B[i][j] = B2[i][j] = (i + j) % 5; }
    kernel_jacobi_2d(T, N, A, B); ref_jacobi_2d(T, N, A2, B2);
    if (memcmp(A, A2, sizeof(double) * N * N) || memcmp(B, B2, sizeof(double) * N * N)) { printf("MISMATCH T=%d N=%d\n", T, N); bad = 1; }
    free(A); free(B); free(A2); free(B2);
  }
  printf(bad ? "FAIL\n" : "ok\n");
  return bad;
}

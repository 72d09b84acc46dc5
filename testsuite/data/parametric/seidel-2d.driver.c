/* Runs the transformed kernel_seidel_2d (polyhedral/tests/data/seidel-2d.c) for many values of
 * its parameters and compares every array with this untransformed copy; prints "ok" or FAIL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
void kernel_seidel_2d(int T, int N, double A[N][N]);
static void ref_seidel_2d(int T, int N, double A[N][N]) {
  for (int t = 0; t <= T - 1; t++)
    for (int i = 1; i <= N - 2; i++)
      for (int j = 1; j <= N - 2; j++)
        A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1] + A[i][j - 1] + A[i][j] + A[i][j + 1]
                   + A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]) / 9.0;
}
int main(void) {
  int bad = 0;
  for (int T = 0; T <= 13; T += 3) for (int N = 1; N <= 23; N += 4) {
    double (*A)[N] = malloc(sizeof(double) * N * N), (*A2)[N] = malloc(sizeof(double) * N * N);
    for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) A[i][j] = A2[i][j] = (i * 7 + j * 3) % 11;
    kernel_seidel_2d(T, N, A); ref_seidel_2d(T, N, A2);
    if (memcmp(A, A2, sizeof(double) * N * N)) { printf("MISMATCH T=%d N=%d\n", T, N); bad = 1; }
    free(A); free(A2);
  }
  printf(bad ? "FAIL\n" : "ok\n");
  return bad;
}

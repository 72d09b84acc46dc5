/* Statement forms inside one SCoP: chained assignments (plain and compound, with
 * parentheses and conversions between types), the comma operator, increments of array
 * elements and scalars, pure libm calls, casts and conditional expressions.
 * Prints every result as a hexadecimal float, so any difference in any bit shows. */
#include <math.h>
#include <stdio.h>

#ifndef N
#define N 40
#endif

double A[N][N], B[N], C[N], D[N][N];
float F[N];
int K[N];
double x, y;

static void kernel(void)
{
#pragma scop
  for (int i = 0; i < N; i++)
    A[i][0] = B[i] = C[i] * 0.5;
  for (int i = 0; i < N; i++)
    for (int j = 1; j < N; j++)
      D[i][j] += (A[i][j] = F[i] = A[i][j - 1] + 0.25);
  for (int i = 1; i < N; i++)
    x = y = B[i] + B[i - 1], K[i] = K[i - 1] + 3, K[i]++;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      D[i][j] = sqrt(fabs(A[i][j])) + (D[i][j] > 1.0 ? exp(-D[i][j]) : pow(D[i][j], 2.0)) + (int)(A[i][j] * 3.0);
  for (int i = 0; i < N; i++)
    ++B[i], --K[i], C[i] *= B[i] -= 1.5;
#pragma endscop
}

int main(void)
{
  for (int i = 0; i < N; i++) {
    B[i] = 0;
    C[i] = (double)((i * 5) % 13) / 4.0;
    F[i] = 0;
    K[i] = i % 3;
    for (int j = 0; j < N; j++) {
      A[i][j] = (double)((i * 7 + j * 3) % 11) / 10.0;
      D[i][j] = (double)((i + j) % 5) / 2.0;
    }
  }
  kernel();
  printf("%a %a\n", x, y);
  for (int i = 0; i < N; i++) {
    printf("%a %a %a %d\n", B[i], C[i], (double)F[i], K[i]);
    for (int j = 0; j < N; j++)
      printf("%a %a\n", A[i][j], D[i][j]);
  }
  return 0;
}

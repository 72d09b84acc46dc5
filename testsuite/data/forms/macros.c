/* Statements written as function-like macro calls: a call whose expansion is the whole
 * statement and that has its own `;` (SET), one whose definition ends with a `;` and that the
 * call repeats (BUMP(...);, an empty statement after it), and macros inside expressions and
 * arguments (SQ). Each is re-emitted as written, with the iterators renamed in its arguments. Prints every result as a hexadecimal float, so any difference in any bit
 * shows. */
#include <stdio.h>

#ifndef N
#define N 40
#endif

#define SQ(x) ((x) * (x))
#define SET(dst, v) dst = (v)
#define BUMP(a, i) a[i] = a[i] + 1.0;

double A[N][N], B[N], C[N];

static void kernel(void)
{
#pragma scop
  for (int i = 0; i < N; i++) {
    BUMP(B, i);
    SET(C[i], SQ(B[i]) - 0.5);
  }
  for (int i = 1; i < N; i++)
    for (int j = 0; j < N; j++)
      SET(A[i][j], A[i - 1][j] * 0.5 + SQ(C[j]));
  for (int i = 0; i < N; i++)
    SET(B[i], B[i] * 0.75 + SQ(C[i]));
#pragma endscop
}

int main(void)
{
  for (int i = 0; i < N; i++) {
    B[i] = (double)(i % 7) / 3.0;
    C[i] = 0;
    for (int j = 0; j < N; j++)
      A[i][j] = (double)((i * 3 + j) % 5) / 4.0;
  }
  kernel();
  for (int i = 0; i < N; i++) {
    printf("%a %a\n", B[i], C[i]);
    for (int j = 0; j < N; j++)
      printf("%a ", A[i][j]);
    printf("\n");
  }
  return 0;
}

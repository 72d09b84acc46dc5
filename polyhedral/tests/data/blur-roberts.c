/* The paper's blur-Roberts example: a 5-point blur, then Roberts' edge detector on the blurred
 * image. Two loop nests; the second reads four neighbours of each pixel the first wrote. */
#include <math.h>

void kernel_blur_roberts(int N, double A[N][N], double B[N][N], double C[N][N])
{
#pragma scop
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++)
      B[i][j] = (A[i - 1][j] + A[i][j - 1] + A[i][j] + A[i][j + 1] + A[i + 1][j]) / 5.0;
  for (int i = 1; i < N - 2; i++)
    for (int j = 1; j < N - 2; j++)
      C[i][j] = fabs(B[i][j] - B[i + 1][j + 1]) + fabs(B[i + 1][j] - B[i][j + 1]);
#pragma endscop
}

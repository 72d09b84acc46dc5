/* Row sums through a scalar temporary that is read after the SCoP: each task keeps its own s,
 * and the task of the last row copies its s back (kernel_rowsum returns it). */
double kernel_rowsum(int N, int M, double A[N][M], double B[N])
{
  double s = -1.0;
#pragma scop
  for (int i = 0; i < N; i++) {
    s = 0.0;
    for (int j = 0; j < M; j++)
      s += A[i][j] * (j + 1);
    B[i] = s;
  }
#pragma endscop
  return s;
}

/* A temporary of a 2-D band (each task, a tile of (i, j), keeps its own t), read after the
 * SCoP; the last write is in the tile of (N - 1, N - 1). */
double kernel_square(int N, double A[N][N], double B[N][N], double C[N])
{
  double t = -2.0;
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      t = A[i][j] * 3.0 + A[j][i];
      B[i][j] = t * t;
    }
  for (int i = 0; i < N; i++)
    C[i] = B[i][N - 1 - i] + 1.0;
#pragma endscop
  return t;
}

/* A temporary at file scope, read after the SCoP: tasks hide it with their own copy. */
double acc;
void kernel_global(int N, double A[N], double B[N])
{
#pragma scop
  for (int i = 0; i < N; i++) {
    acc = A[i] * 0.5;
    acc = acc * acc + A[N - 1 - i];
    B[i] = acc;
  }
#pragma endscop
}

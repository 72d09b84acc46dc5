/* Temporary arrays of a loop's iterations (polyhedral's `privatize` and `materialize`): every
 * (r, q) fills `sum` before reading it, so each gets its own copy of it in an array of copies,
 * and after the SCoP `sum` holds what the last (r, q) left in it. */
#define NR 7
#define NQ 5
#define NP 6
void kernel_batched(double A[NR][NQ][NP], double C4[NP][NP], double sum[NP])
{
#pragma scop
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
#pragma endscop
}

/* A row written only in part by each iteration (`w[0]` never): not a temporary of the loop, and
 * the elements it keeps from before the SCoP must stay. */
void kernel_partial(double B[NR][NP], double w[NP])
{
#pragma scop
  for (int r = 0; r < NR; r++) {
    for (int p = 1; p < NP; p++)
      w[p] = B[r][p] * 2.0 + w[0];
    for (int p = 1; p < NP; p++)
      B[r][p] = w[p] + w[NP - p];
  }
#pragma endscop
}

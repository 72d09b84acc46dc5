/* In-order reductions that tiledflow moves into the step of their loop before their own
 * (`polyhedral::retime_reductions`): durbin's recurrence with its size a parameter, where the
 * sum reads the copy `y[i] = z[i]` of the step before and is forwarded to `z`; then the same
 * recurrence with `z` halved after the copy, where reading `z` instead would be wrong (the sum
 * still moves, beside the copy). The scalars are the function's own, and the last values of
 * each are printed: the moved statements must leave them as the original does.
 * Prints every result as a hexadecimal float, so any difference in any bit shows. */
#include <stdio.h>

#ifndef N
#define N 60
#endif

double r[N], y[N], z[N], u[N], v[N];
double out[6];

static void recurrence(int n)
{
  double alpha, beta, sum;
#pragma scop
  y[0] = -r[0];
  beta = 1.0;
  alpha = -r[0];
  for (int k = 1; k < n; k++) {
    beta = (1.0 - alpha * alpha) * beta;
    sum = 0.0;
    for (int i = 0; i < k; i++)
      sum += r[k - i - 1] * y[i];
    alpha = -(r[k] + sum) / beta;
    for (int i = 0; i < k; i++)
      z[i] = y[i] + alpha * y[k - i - 1];
    for (int i = 0; i < k; i++)
      y[i] = z[i];
    y[k] = alpha;
  }
#pragma endscop
  out[0] = alpha;
  out[1] = beta;
  out[2] = n > 1 ? sum : 0.0;
}

static void overwritten(void)
{
  double alpha = 0.0, sum = 0.0;
#pragma scop
  for (int k = 1; k < N; k++) {
    sum = 0.0;
    for (int i = 0; i < k; i++)
      sum += r[k - i - 1] * u[i];
    alpha = -(r[k] + sum) / 4.0;
    for (int i = 0; i < k; i++)
      v[i] = u[i] + alpha * u[k - i - 1];
    for (int i = 0; i < k; i++)
      u[i] = v[i];
    for (int i = 0; i < k; i++)
      v[i] = 0.5 * v[i];
    u[k] = alpha;
  }
#pragma endscop
  out[3] = alpha;
  out[4] = sum;
}

int main(void)
{
  for (int i = 0; i < N; i++) {
    r[i] = (double)((i * 7) % 11 + 1) / (4.0 * N);
    u[i] = (double)(i % 5) / 3.0;
  }
  recurrence(N);
  overwritten();
  for (int i = 0; i < N; i++)
    printf("%a %a %a %a\n", y[i], z[i], u[i], v[i]);
  for (int i = 0; i < 5; i++)
    printf("%a\n", out[i]);
  return 0;
}

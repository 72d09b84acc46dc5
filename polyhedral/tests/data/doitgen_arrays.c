/* doitgen with its sums kept in an array of their own: zeroed by one nest, accumulated by the
 * next, copied back into A by a third (for the tests of tiles spawned together). */
#define NR 10
#define NQ 8
#define NP 12

void kernel(double A[NR][NQ][NP], double C4[NP][NP], double S[NR][NQ][NP])
{
    int r, q, p, s;
#pragma scop
    for (r = 0; r < NR; r++)
        for (q = 0; q < NQ; q++)
            for (p = 0; p < NP; p++)
                S[r][q][p] = 0.0;
    for (r = 0; r < NR; r++)
        for (q = 0; q < NQ; q++)
            for (p = 0; p < NP; p++)
                for (s = 0; s < NP; s++)
                    S[r][q][p] += A[r][q][s] * C4[s][p];
    for (r = 0; r < NR; r++)
        for (q = 0; q < NQ; q++)
            for (p = 0; p < NP; p++)
                A[r][q][p] = S[r][q][p];
#pragma endscop
}

/* One core's double-precision peak for separate multiplications and additions, measured: the
 * README's "fraction of peak" figures divide by what this prints (`make peak-flops`).
 *
 * The generated code is compiled with -ffp-contract=off (results bit for bit the original's), so
 * a multiply-add is two instructions and the peak that matters is that of multiplies and adds
 * issued separately, at the widest vector the target has (AVX-512: 8 doubles; AVX: 4; else
 * SSE2's 2). Clock rates (nominal, turbo) and the number of vector units differ from machine to
 * machine and VMs hide both; this measures instead. Each round updates 24 independent
 * accumulators (12 multiplied, 12 added; 6 and 6 with 16 vector registers), more than the
 * vector units' latency times their count on current x86 cores, so that the loop is bound by
 * issue throughput rather than latency. The best of 5 runs is printed. */
#include <stdio.h>
#include <time.h>

#if defined(__AVX512F__)
#define LANES 8
#elif defined(__AVX__)
#define LANES 4
#else
#define LANES 2
#endif
typedef double vd __attribute__((vector_size(LANES * 8)));

#define ROUNDS 50000000L
/* Accumulators per kind: with AVX-512's 32 registers 12 + 12; with 16 registers 6 + 6. */
#if defined(__AVX512F__)
#define CHAINS 12
#else
#define CHAINS 6
#endif

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* One round: every accumulator once; the empty asm keeps them in registers and the loop as
 * written. */
#define STEP(x, y)                                                                              \
    x = x * m;                                                                                  \
    y = y + c;                                                                                  \
    __asm__ volatile("" : "+v"(x), "+v"(y))

int main(void)
{
    vd m, c;
    for (int j = 0; j < LANES; j++) {
        m[j] = 1.0000001;
        c[j] = 1e-9;
    }
    double best = 0, sink = 0;
    for (int run = 0; run < 5; run++) {
        vd x0 = c, x1 = c, x2 = c, x3 = c, x4 = c, x5 = c, y0 = c, y1 = c, y2 = c, y3 = c, y4 = c,
           y5 = c;
#if CHAINS == 12
        vd x6 = c, x7 = c, x8 = c, x9 = c, x10 = c, x11 = c, y6 = c, y7 = c, y8 = c, y9 = c,
           y10 = c, y11 = c;
#endif
        double t = now();
        for (long r = 0; r < ROUNDS; r++) {
            STEP(x0, y0); STEP(x1, y1); STEP(x2, y2); STEP(x3, y3); STEP(x4, y4); STEP(x5, y5);
#if CHAINS == 12
            STEP(x6, y6); STEP(x7, y7); STEP(x8, y8); STEP(x9, y9); STEP(x10, y10); STEP(x11, y11);
#endif
        }
        t = now() - t;
        double gflops = (double)ROUNDS * 2 * CHAINS * LANES / t / 1e9;
        if (gflops > best)
            best = gflops;
        vd s = x0 + x1 + x2 + x3 + x4 + x5 + y0 + y1 + y2 + y3 + y4 + y5;
#if CHAINS == 12
        s += x6 + x7 + x8 + x9 + x10 + x11 + y6 + y7 + y8 + y9 + y10 + y11;
#endif
        sink += s[0];
    }
    printf("peak: %.1f GFLOP/s on one core (%d-bit vectors, multiplies and adds issued "
           "separately; best of 5)\n",
           best, LANES * 64);
    return sink == 0;
}

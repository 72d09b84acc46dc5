/* The kernels of the stencils project: each is one static control part (#pragma scop). */
#ifndef KERNELS_H
#define KERNELS_H
void blur(int n, int m, double in[n][m], double out[n][m]);
void smooth(int tsteps, int n, double a[n], double b[n]);
#endif

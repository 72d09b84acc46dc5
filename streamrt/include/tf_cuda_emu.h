/* tf_cuda_emu.h: runs tiledflow's CUDA kernels (out.cu) on the CPU, for tests without a GPU.
 *
 *   g++ -x c++ -DTF_CUDA_EMULATE -include tf_cuda_emu.h -ffp-contract=off -c out.cu
 *
 * Each kernel of out.cu is then a plain C++ function, and its launcher tf_emu_<kernel>(grid,
 * block, args) runs every block and every thread of a launch one after another on the calling
 * thread, setting blockIdx/threadIdx/blockDim/gridDim (thread-local: the emulated device runs
 * each of its streams on a host thread of its own). This is faithful for tiledflow's kernels
 * only because they never synchronize threads nor use shared memory. */
#ifndef TF_CUDA_EMU_H
#define TF_CUDA_EMU_H

#include <cmath>
#include <math.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

static thread_local uint3 threadIdx;
static thread_local uint3 blockIdx;
static thread_local dim3 blockDim;
static thread_local dim3 gridDim;

/* Runs `body` once per thread of the grid `grid` of blocks `block` (3 entries each). */
template <typename F> static void tf_emu_run(const unsigned *grid, const unsigned *block, F body)
{
  gridDim = dim3(grid[0], grid[1], grid[2]);
  blockDim = dim3(block[0], block[1], block[2]);
  for (unsigned bz = 0; bz < grid[2]; bz++)
    for (unsigned by = 0; by < grid[1]; by++)
      for (unsigned bx = 0; bx < grid[0]; bx++)
        for (unsigned tz = 0; tz < block[2]; tz++)
          for (unsigned ty = 0; ty < block[1]; ty++)
            for (unsigned tx = 0; tx < block[0]; tx++) {
              blockIdx = uint3{bx, by, bz};
              threadIdx = uint3{tx, ty, tz};
              body();
            }
}

#endif

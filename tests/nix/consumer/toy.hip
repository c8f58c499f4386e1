// A small engine of another project, for tests/unit/matrix/test_flake.py: one kernel
// that needs scratch memory (a private table indexed at run time) and one
// that does not.  No HIP headers: built with -nogpuinc -nogpulib, with the
// few declarations clang's HIP mode needs to emit kernel stubs.
#define __global__ __attribute__((global))

struct dim3 {
  unsigned x, y, z;
};
typedef struct ihipStream_t *hipStream_t;
extern "C" {
int hipLaunchKernel(const void *function, dim3 grid, dim3 block, void **args, unsigned long shared_bytes,
                    hipStream_t stream);
int __hipPushCallConfiguration(dim3 grid, dim3 block, unsigned long shared_bytes, hipStream_t stream);
int __hipPopCallConfiguration(dim3 *grid, dim3 *block, unsigned long *shared_bytes, hipStream_t *stream);
}

extern "C" __global__ void toy_table(const int *in, int *out) {
  int table[256];
  for (int i = 0; i < 256; ++i) table[i] = in[i] * 3 + i;
  out[0] = table[in[256] & 255];
}

extern "C" __global__ void toy_scale(float *data, float factor) { data[0] *= factor; }

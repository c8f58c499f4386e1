// Minimal HIP device environment for `-nogpuinc -nogpulib` builds: every
// Debian clang (15, 16, 19, 22, 23, 24) accepts it for every target it knows,
// with no HIP headers and no device libraries (toolchains-debian.md section
// 1.3).  Cells with a real HIP (cells.toml `hip = "rocm"`) include
// <hip/hip_runtime.h> instead (spw_device.h): only what both provide is used.
#pragma once

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __launch_bounds__(n) __attribute__((amdgpu_flat_work_group_size(1, n)))

typedef unsigned int uint;

#ifdef __HIP_DEVICE_COMPILE__
static __device__ inline unsigned __spw_wg_size(int dim) {
  const unsigned short *p = (const unsigned short *)__builtin_amdgcn_dispatch_ptr();
  return p[2 + dim];
}
#endif

struct __spw_thread_idx {
  __device__ unsigned get_x() const { return __builtin_amdgcn_workitem_id_x(); }
  __device__ unsigned get_y() const { return __builtin_amdgcn_workitem_id_y(); }
  __device__ unsigned get_z() const { return __builtin_amdgcn_workitem_id_z(); }
  __declspec(property(get = get_x)) unsigned x;
  __declspec(property(get = get_y)) unsigned y;
  __declspec(property(get = get_z)) unsigned z;
};
struct __spw_block_idx {
  __device__ unsigned get_x() const { return __builtin_amdgcn_workgroup_id_x(); }
  __device__ unsigned get_y() const { return __builtin_amdgcn_workgroup_id_y(); }
  __device__ unsigned get_z() const { return __builtin_amdgcn_workgroup_id_z(); }
  __declspec(property(get = get_x)) unsigned x;
  __declspec(property(get = get_y)) unsigned y;
  __declspec(property(get = get_z)) unsigned z;
};
struct __spw_block_dim {
#ifdef __HIP_DEVICE_COMPILE__
  __device__ unsigned get_x() const { return __spw_wg_size(0); }
  __device__ unsigned get_y() const { return __spw_wg_size(1); }
  __device__ unsigned get_z() const { return __spw_wg_size(2); }
#else
  __device__ unsigned get_x() const { return 0; }
  __device__ unsigned get_y() const { return 0; }
  __device__ unsigned get_z() const { return 0; }
#endif
  __declspec(property(get = get_x)) unsigned x;
  __declspec(property(get = get_y)) unsigned y;
  __declspec(property(get = get_z)) unsigned z;
};
extern const __device__ __attribute__((weak)) __spw_thread_idx threadIdx;
extern const __device__ __attribute__((weak)) __spw_block_idx blockIdx;
extern const __device__ __attribute__((weak)) __spw_block_dim blockDim;

static __device__ inline void __syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

static __device__ inline float __shfl_xor_f(float v, int mask) {
  int lane = __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
  int src = (lane ^ mask) << 2;
  return __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute(src, __builtin_bit_cast(int, v)));
}

// Host side: what clang's HIP host stub generation needs.
struct dim3 {
  unsigned x, y, z;
  __host__ __device__ dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
typedef struct ihipStream_t *hipStream_t;
typedef int hipError_t;
enum { hipSuccess = 0 };
extern "C" {
hipError_t hipLaunchKernel(const void *function, dim3 grid, dim3 block, void **args,
                           unsigned long shared_bytes, hipStream_t stream);
hipError_t __hipPushCallConfiguration(dim3 grid, dim3 block, unsigned long shared_bytes,
                                      hipStream_t stream);
hipError_t __hipPopCallConfiguration(dim3 *grid, dim3 *block, unsigned long *shared_bytes,
                                     hipStream_t *stream);
}

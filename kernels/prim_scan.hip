// Block-wide primitives in rocPRIM's layout: templates inside a versioned
// inline namespace, rocprim::ROCPRIM_<version>_NS::.  Every rocPRIM release
// renames every kernel, so baselines and cross-toolchain comparisons only
// match these kernels through spillway's stable key (names.stable_key), which
// is exercised on every matrix build.
//
// Built two ways from this one file:
//   - with ROCm's real HIP headers (-DSPW_HIP_RUNTIME=1, cells.toml `hip =
//     "rocm"`): the real rocPRIM.  The kernels live in rocPRIM's own
//     namespace (BEGIN_ROCPRIM_NAMESPACE: rocprim::ROCPRIM_400200_NS:: for
//     rocPRIM 7.2.4), take its functors, and scan with rocprim::block_scan.
//   - with mini_hip.h (every other cell): an imitation of that namespace,
//     whose version token follows the compiler (3.<clang major>.0), as if each
//     toolchain shipped its own rocPRIM (-DSPW_ROCPRIM_VERSION=N pins it), and
//     a scan of our own.
// The kernels' names differ only in the version token, so their stable keys
// are equal in every cell.
//
// The engine uses them for expert routing: counting tokens per expert and
// scanning the counts into offsets (the "align block size" step of MoE).
#include "spw_device.h"

#if defined(SPW_HIP_RUNTIME) && SPW_HIP_RUNTIME
#include <cstring>  // before rocPRIM: 7.2.4's texture_cache_iterator.hpp calls memset without including it
#include <rocprim/rocprim.hpp>
#define SPW_ROCPRIM_REAL 1
#define SPW_ROCPRIM_BEGIN BEGIN_ROCPRIM_NAMESPACE
#define SPW_ROCPRIM_END END_ROCPRIM_NAMESPACE
#else
#define SPW_ROCPRIM_REAL 0
#ifndef SPW_ROCPRIM_VERSION
#define SPW_ROCPRIM_VERSION __clang_major__
#endif
#define SPW_CAT3(a, b, c) a##b##c
#define SPW_XCAT3(a, b, c) SPW_CAT3(a, b, c)
#define SPW_ROCPRIM_NS SPW_XCAT3(ROCPRIM_30, SPW_ROCPRIM_VERSION, 00_NS)
#define SPW_ROCPRIM_BEGIN namespace rocprim { inline namespace SPW_ROCPRIM_NS {
#define SPW_ROCPRIM_END } }

SPW_ROCPRIM_BEGIN
template <class T>
struct plus {
  __device__ T operator()(T a, T b) const { return a + b; }
};
template <class T>
struct maximum {
  __device__ T operator()(T a, T b) const { return a < b ? b : a; }
};
SPW_ROCPRIM_END
#endif

SPW_ROCPRIM_BEGIN
namespace detail {

// Inclusive scan of BlockSize * ItemsPerThread items: thread-local scan of a
// register array, an LDS scan over the thread totals, then the fix-up (with
// the real rocPRIM: rocprim::block_scan, which does the same in its own way).
template <unsigned BlockSize, unsigned ItemsPerThread, class T, class Op>
__global__ void SPW_LAUNCH_BOUNDS(BlockSize)
block_scan_kernel(const T* __restrict__ input, T* __restrict__ output, T* __restrict__ block_totals, Op op) {
  const unsigned tid = threadIdx.x;
  const long base = ((long)blockIdx.x * BlockSize + tid) * ItemsPerThread;
  T items[ItemsPerThread];
#pragma unroll
  for (unsigned i = 0; i < ItemsPerThread; ++i) items[i] = input[base + i];
#if SPW_ROCPRIM_REAL
  using block_scan = ::rocprim::block_scan<T, BlockSize>;
  __shared__ typename block_scan::storage_type storage;
  T block_total;
  block_scan().inclusive_scan(items, items, block_total, storage, op);
#else
  __shared__ T totals[BlockSize];
#pragma unroll
  for (unsigned i = 1; i < ItemsPerThread; ++i) items[i] = op(items[i - 1], items[i]);
  totals[tid] = items[ItemsPerThread - 1];
  __syncthreads();
  for (unsigned offset = 1; offset < BlockSize; offset *= 2) {  // Hillis-Steele over the totals
    T add = tid >= offset ? totals[tid - offset] : T();
    __syncthreads();
    if (tid >= offset) totals[tid] = op(add, totals[tid]);
    __syncthreads();
  }
  if (tid > 0) {
    const T prefix = totals[tid - 1];
#pragma unroll
    for (unsigned i = 0; i < ItemsPerThread; ++i) items[i] = op(prefix, items[i]);
  }
#endif
#pragma unroll
  for (unsigned i = 0; i < ItemsPerThread; ++i) output[base + i] = items[i];
  if (tid == BlockSize - 1) block_totals[blockIdx.x] = items[ItemsPerThread - 1];
}

// Per-block histogram of expert ids into LDS, flushed with atomics.
template <unsigned BlockSize, unsigned Experts>
__global__ void SPW_LAUNCH_BOUNDS(BlockSize)
histogram_kernel(const int* __restrict__ expert_of_token, unsigned n, unsigned* __restrict__ counts) {
  __shared__ unsigned bins[Experts];
  for (unsigned i = threadIdx.x; i < Experts; i += BlockSize) bins[i] = 0;
  __syncthreads();
  for (unsigned i = blockIdx.x * BlockSize + threadIdx.x; i < n; i += BlockSize * 64)
    __atomic_fetch_add(&bins[(unsigned)expert_of_token[i] % Experts], 1u, __ATOMIC_RELAXED);
  __syncthreads();
  for (unsigned i = threadIdx.x; i < Experts; i += BlockSize)
    if (bins[i]) __atomic_fetch_add(&counts[i], bins[i], __ATOMIC_RELAXED);
}

template __global__ void block_scan_kernel<256, 16, unsigned, plus<unsigned>>(const unsigned*, unsigned*, unsigned*,
                                                                              plus<unsigned>);
template __global__ void block_scan_kernel<256, 8, float, maximum<float>>(const float*, float*, float*,
                                                                          maximum<float>);
template __global__ void histogram_kernel<256, 128>(const int*, unsigned, unsigned*);

}  // namespace detail
SPW_ROCPRIM_END

extern "C" hipError_t spw_launch_expert_offsets(const int* expert_of_token, unsigned tokens, unsigned* counts,
                                                unsigned* offsets, unsigned* block_totals, hipStream_t s) {
  rocprim::detail::histogram_kernel<256, 128><<<dim3(64), dim3(256), 0, s>>>(expert_of_token, tokens, counts);
  rocprim::detail::block_scan_kernel<256, 16, unsigned, rocprim::plus<unsigned>>
      <<<dim3(1), dim3(256), 0, s>>>(counts, offsets, block_totals, rocprim::plus<unsigned>());
  return hipSuccess;
}

extern "C" hipError_t spw_launch_running_max(const float* in, float* out, float* block_totals, unsigned blocks,
                                             hipStream_t s) {
  rocprim::detail::block_scan_kernel<256, 8, float, rocprim::maximum<float>>
      <<<dim3(blocks), dim3(256), 0, s>>>(in, out, block_totals, rocprim::maximum<float>());
  return hipSuccess;
}

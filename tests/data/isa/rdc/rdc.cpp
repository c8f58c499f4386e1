// Relocatable code objects (issue 42): device code compiled with -fgpu-rdc and stopped before the
// link, read per section.  Kernels: one with a private array indexed at run time (scratch), a
// template instantiated twice (each in its own COMDAT section, with or without -ffunction-sections),
// one calling a device function that is not inlined (a call relocation), and a plain one.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))

__device__ __attribute__((noinline)) int pick(const int* in, int i, int n) {
  int tmp[24];
#pragma unroll
  for (int j = 0; j < 24; j++) tmp[j] = in[i + j];
  return tmp[(i * 7 + n) % 24];
}

extern "C" __global__ void rdc_scratch(int* out, const int* in, int n) {
  int i = __builtin_amdgcn_workitem_id_x();
  int tmp[96];   // too many to promote to registers: the array stays in scratch
  for (int j = 0; j < 96; j++) tmp[j] = in[i * 96 + j];
  tmp[n % 96] = i;
  out[i] = tmp[(i + n) % 96];
}

template <typename T>
__global__ void rdc_scale(T* out, const T* in, T factor, int n) {
  int i = __builtin_amdgcn_workitem_id_x();
  T tmp[80];
  for (int j = 0; j < 80; j++) tmp[j] = in[i * 80 + j] * factor;
  out[i] = tmp[(i + n) % 80];
}
template __global__ void rdc_scale<float>(float*, const float*, float, int);
template __global__ void rdc_scale<int>(int*, const int*, int, int);

extern "C" __global__ void rdc_call(int* out, const int* in, int n) {
  int i = __builtin_amdgcn_workitem_id_x();
  out[i] = pick(in, i, n);
}

extern "C" __global__ void rdc_plain(float* out, float x) {
  out[__builtin_amdgcn_workitem_id_x()] = x * 2.0f;
}

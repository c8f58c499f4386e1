// A kernel with a private array indexed at run time (scratch through the private segment buffer s[0:3] on
// gfx1030), behind a bounds check of the thread id against a kernel argument (a v_cmpx in the entry block).
#define __global__ __attribute__((global))
extern "C" __global__ void vcmpx_scratch(int* out, const int* in, int n, int pick) {
  int i = __builtin_amdgcn_workitem_id_x();
  if (i < n) {
    int tmp[40];
#pragma unroll
    for (int j = 0; j < 40; j++) tmp[j] = in[i * 40 + j];
    tmp[pick & 31] = n;
    out[i] = tmp[(pick + i) % 40];
  }
}

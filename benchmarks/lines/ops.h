// Helpers inlined into lines_library.hip's kernels, so the line tables name
// a second file (as a library's headers do).
#pragma once
#define KERNEL __attribute__((global))
#define DEVICE static inline __attribute__((device))
#define LDS __attribute__((shared))

DEVICE unsigned lane() { return __builtin_amdgcn_workitem_id_x(); }
DEVICE unsigned group() { return __builtin_amdgcn_workgroup_id_x(); }

template <typename T> DEVICE T shuffle_down(T v, int delta) {
  static_assert(sizeof(T) % 4 == 0, "32-bit words");
  union { T value; int words[sizeof(T) / 4]; } in{v}, out{};
  int target = ((int)lane() + delta) << 2;
#pragma unroll
  for (int i = 0; i < (int)(sizeof(T) / 4); i++) out.words[i] = __builtin_amdgcn_ds_bpermute(target, in.words[i]);
  return out.value;
}

template <int WF, typename T> DEVICE T wave_sum(T v) {
#pragma unroll
  for (int offset = WF / 2; offset > 0; offset /= 2) v += shuffle_down(v, offset);
  return v;
}

template <typename T> DEVICE T fma_of(T a, T b, T c) { return a * b + c; }

DEVICE void barrier() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

/* The sysdeps forwarder: AMD's libLLVM.so of ROCm 10.0 (rocm-bindings-compiler) needs
 * librocm_sysdeps_z.so.1 and librocm_sysdeps_zstd.so.1, ROCm's private builds of zlib and
 * zstd, whose symbols carry the version AMDROCM_SYSDEPS_1.0.  No package ships them.  This
 * file defines the twelve functions libLLVM.so takes from them, with zlib's and zstd's own
 * prototypes, and forwards each call to this system's libz.so.1 / libzstd.so.1 (looked up
 * in that library, so a definition here never calls itself).  Built twice by
 * scripts/install-toolchains.sh (and nix/amd-llvm.nix) with clang:
 *   -DSPW_SYSDEPS_Z    -Wl,--version-script=z.map    -o librocm_sysdeps_z.so.1    -l:libz.so.1
 *   -DSPW_SYSDEPS_ZSTD -Wl,--version-script=zstd.map -o librocm_sysdeps_zstd.so.1 -l:libzstd.so.1
 * The prototypes are written out (zlib 1.2 / zstd 1.5 headers) so no -dev package is needed. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

static void *resolve(void *library, const char *soname, const char *name) {
    void *symbol = library ? dlsym(library, name) : NULL;
    if (!symbol) {
        fprintf(stderr, "librocm_sysdeps forwarder: %s not found in %s: %s\n", name, soname, dlerror());
        abort();
    }
    return symbol;
}

#define FORWARD(library, soname, name) \
    static __typeof__(&name) real; \
    if (!real) real = (__typeof__(&name))resolve(library(), soname, #name)

#if defined(SPW_SYSDEPS_Z)
/* zlib.h: typedef unsigned char Bytef; typedef unsigned long uLong, uLongf; typedef unsigned uInt. */
typedef unsigned char Bytef;
typedef unsigned long uLong;
typedef unsigned long uLongf;
typedef unsigned int uInt;

int compress2(Bytef *dest, uLongf *destLen, const Bytef *source, uLong sourceLen, int level);
uLong compressBound(uLong sourceLen);
uLong crc32(uLong crc, const Bytef *buf, uInt len);
int uncompress(Bytef *dest, uLongf *destLen, const Bytef *source, uLong sourceLen);

static void *libz(void) {
    static void *handle;
    if (!handle) handle = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    return handle;
}

int compress2(Bytef *dest, uLongf *destLen, const Bytef *source, uLong sourceLen, int level) {
    FORWARD(libz, "libz.so.1", compress2);
    return real(dest, destLen, source, sourceLen, level);
}
uLong compressBound(uLong sourceLen) {
    FORWARD(libz, "libz.so.1", compressBound);
    return real(sourceLen);
}
uLong crc32(uLong crc, const Bytef *buf, uInt len) {
    FORWARD(libz, "libz.so.1", crc32);
    return real(crc, buf, len);
}
int uncompress(Bytef *dest, uLongf *destLen, const Bytef *source, uLong sourceLen) {
    FORWARD(libz, "libz.so.1", uncompress);
    return real(dest, destLen, source, sourceLen);
}

#elif defined(SPW_SYSDEPS_ZSTD)
/* zstd.h (1.5): ZSTD_CCtx is opaque; ZSTD_cParameter is an enum (passed as int). */
typedef struct ZSTD_CCtx_s ZSTD_CCtx;
typedef enum { ZSTD_c_compressionLevel = 100 } ZSTD_cParameter;

size_t ZSTD_CCtx_setParameter(ZSTD_CCtx *cctx, ZSTD_cParameter param, int value);
size_t ZSTD_compress2(ZSTD_CCtx *cctx, void *dst, size_t dstCapacity, const void *src, size_t srcSize);
size_t ZSTD_compressBound(size_t srcSize);
ZSTD_CCtx *ZSTD_createCCtx(void);
size_t ZSTD_decompress(void *dst, size_t dstCapacity, const void *src, size_t compressedSize);
size_t ZSTD_freeCCtx(ZSTD_CCtx *cctx);
const char *ZSTD_getErrorName(size_t code);
unsigned ZSTD_isError(size_t code);

static void *libzstd(void) {
    static void *handle;
    if (!handle) handle = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
    return handle;
}

size_t ZSTD_CCtx_setParameter(ZSTD_CCtx *cctx, ZSTD_cParameter param, int value) {
    FORWARD(libzstd, "libzstd.so.1", ZSTD_CCtx_setParameter);
    return real(cctx, param, value);
}
size_t ZSTD_compress2(ZSTD_CCtx *cctx, void *dst, size_t dstCapacity, const void *src, size_t srcSize) {
    FORWARD(libzstd, "libzstd.so.1", ZSTD_compress2);
    return real(cctx, dst, dstCapacity, src, srcSize);
}
size_t ZSTD_compressBound(size_t srcSize) {
    FORWARD(libzstd, "libzstd.so.1", ZSTD_compressBound);
    return real(srcSize);
}
ZSTD_CCtx *ZSTD_createCCtx(void) {
    FORWARD(libzstd, "libzstd.so.1", ZSTD_createCCtx);
    return real();
}
size_t ZSTD_decompress(void *dst, size_t dstCapacity, const void *src, size_t compressedSize) {
    FORWARD(libzstd, "libzstd.so.1", ZSTD_decompress);
    return real(dst, dstCapacity, src, compressedSize);
}
size_t ZSTD_freeCCtx(ZSTD_CCtx *cctx) {
    FORWARD(libzstd, "libzstd.so.1", ZSTD_freeCCtx);
    return real(cctx);
}
const char *ZSTD_getErrorName(size_t code) {
    FORWARD(libzstd, "libzstd.so.1", ZSTD_getErrorName);
    return real(code);
}
unsigned ZSTD_isError(size_t code) {
    FORWARD(libzstd, "libzstd.so.1", ZSTD_isError);
    return real(code);
}

#else
#error "build with -DSPW_SYSDEPS_Z or -DSPW_SYSDEPS_ZSTD"
#endif

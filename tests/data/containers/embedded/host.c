/* A host library that keeps AMDGPU code objects as data, as programs that
 * call hipModuleLoadData do: one in .rodata, one in a section of its own,
 * and decoys that start with "\x7fELF" but are not AMDGPU HSA code objects.
 * The blobs are pulled in with .incbin (see build.sh). */
__asm__(".section .rodata\n"
        ".balign 16\n"
        ".globl gfx1100_image\n"
        "gfx1100_image:\n"
        ".incbin \"gfx1100.co\"\n"
        "gfx1100_image_end:\n"
        ".size gfx1100_image, gfx1100_image_end - gfx1100_image\n"
        ".section .kernel_blobs,\"a\"\n"
        ".balign 8\n"
        ".globl gfx90a_image\n"
        "gfx90a_image:\n"
        ".incbin \"gfx90a.co\"\n"
        "gfx90a_image_end:\n"
        ".size gfx90a_image, gfx90a_image_end - gfx90a_image\n");

/* An x86-64 ELF header and a bare magic string: never taken for code objects. */
const unsigned char decoy_x86_header[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                            3, 0, 0x3e, 0, 1, 0, 0, 0};
const char decoy_text[] = "\x7f" "ELF is how every ELF file starts";

extern const unsigned char gfx1100_image[], gfx90a_image[];
const unsigned char *images(int which) { return which ? gfx90a_image : gfx1100_image; }

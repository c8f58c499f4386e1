# Toolchains nixpkgs does not package, pinned by URL and hash.  This is the
# only file to edit to bump one; nix/toolchains/rocm-tarball.nix reads it.
#
# Keys are ROCm releases as matrix/cells.toml spells them (`rocm = "10.0"`).
# `clang` is the AMD clang major the tarball ships; the build checks it
# against the unpacked tree and `clang++ --version`, and evaluation checks
# it against cells.toml.
#
# Never invent a hash.  To pin a new release, on a machine with network:
#   nix store prefetch-file --hash-type sha256 <url>     (or: curl -fL <url> | sha256sum)
# and set `sha256` to what it prints (hex or SRI both work).  With
# `sha256 = null` the cell still evaluates and every build of it stops with
# a message saying exactly this.
{
  rocm = {
    "10.0" = {
      version = "10.0.0";
      clang = 23;
      # AMD's ROCm Core SDK 10.0.0 (TheRock) tarball for gfx1151, released
      # 2026-08-26, 1,794,376,103 bytes.  The compiler in every per-family
      # tarball is the same multi-target AMD clang; this one is the family
      # the public pins below agree on.
      url = "https://stable.repo.amd.com/rocm/core/tarball/therock-dist-linux-gfx1151-10.0.0.tar.gz";
      sha256 = "4feabd9f2da72352df37f6d714a54847d3fe913c0341fbe2a6542c1164024baf";
      # Where the URL and hash come from (not invented, not downloaded here):
      #   mikiadev/hipfire nix/therock-sdk.nix @ bf1214ca7839ff31a0c53e078ab79456192556ef
      #     hash = "sha256-T+q9ny2nI1LfN/bXFKVIR9P+kTwDQfviplQsEWQCS68=" (the same digest in SRI form)
      #   guevae2/paoai-qwen38fn-rocm-engine scripts/paoai/build-strix-halo.sh
      #     @ 29f3bc363376affa64fd57b21dec12f8ac4408c7 (checks it with sha256sum -c)
      # Two independent projects, one Nix and one shell, agree on URL and digest; a
      # third public project records the same digest for its ROCm 10.0.0 gfx1151 archive.
      # Layout facts used by the derivation: lib/llvm/bin/clang++, lib/llvm/lib/clang/23
      # (the clang 23 resource dir), HIP 7.15.26333 runtime libraries.
    };
  };
}

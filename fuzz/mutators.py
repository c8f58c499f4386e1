"""Structure-aware mutations: change a value, a type or the nesting of a
decoded document (msgpack metadata, report/baseline JSON) or one member of a
container, then write the outer layers back valid (fuzz/layers.py).

``raw(data, max_size)`` is libFuzzer's own byte-level mutation (atheris.Mutate);
every structured mutator falls back to it when the input does not decode.
"""

from __future__ import annotations

import random

import msgpack
import orjson

import layers

# Values that break parsers: wrong types, boundaries, huge and negative ints.
_INTS = (0, 1, -1, 31, 32, 63, 64, 65, 255, 256, 511, 512, 513, 1023, 1024, 43688, 65535, 65536,
         1 << 31, (1 << 31) - 1, 1 << 32, (1 << 63) - 1, 1 << 63, (1 << 64) - 1, -(1 << 63))
_STRINGS = ("", "gfx1100", "amdgcn-amd-amdhsa--gfx90a:xnack-", "amdgcn-amd-amdhsa--", "--", "\udcff",
            "_Z3foov", "_ZN7rocprim17ROCPRIM_300400_NS6detail6kernelEv", "x" * 300, "\x00", "é")


def _random_value(rng: random.Random, depth: int = 0):
    choice = rng.randrange(9 if depth < 3 else 6)
    if choice == 0:
        return rng.choice(_INTS)
    if choice == 1:
        return rng.choice(_STRINGS)
    if choice == 2:
        return rng.choice(_STRINGS).encode("utf-8", "surrogatepass")
    if choice == 3:
        return rng.choice((True, False, None))
    if choice == 4:
        return rng.choice((0.5, -0.0, 1e300, float("nan"), float("inf")))
    if choice == 5:
        return rng.randrange(-1 << 20, 1 << 20)
    if choice == 6:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if choice == 7:
        return {rng.choice(_STRINGS): _random_value(rng, depth + 1) for _ in range(rng.randrange(4))}
    return rng.choice(_STRINGS) * rng.randrange(1, 4)


def _nodes(value, path=()):
    """Every (path, value) of a nested document."""
    yield path, value
    if isinstance(value, dict):
        for key in list(value):
            yield from _nodes(value[key], path + (key,))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _nodes(item, path + (index,))


def _set(document, path, value):
    if not path:
        return value
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return document


def _thaw(value):
    """msgpack may decode to tuples; make every container mutable."""
    if isinstance(value, dict):
        return {(_thaw(k) if isinstance(k, list) else k): _thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thaw(v) for v in value]
    return value


def mutate_document(document, rng: random.Random):
    """One structural edit: replace a node (new value or new type), delete a
    key or item, duplicate an item, wrap a node in a list or map, or move a
    node elsewhere."""
    document = _thaw(document)
    nodes = list(_nodes(document))
    path, value = rng.choice(nodes)
    edit = rng.randrange(8)
    if edit == 0 or not path:
        return _set(document, path, _random_value(rng))
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    key = path[-1]
    if edit == 1:                            # delete
        del parent[key]
    elif edit == 2 and isinstance(parent, list):
        parent.insert(key, value)            # duplicate
    elif edit == 3:
        parent[key] = [value]                # wrap in a list
    elif edit == 4:
        parent[key] = {"x": value}           # wrap in a map
    elif edit == 5 and isinstance(value, int) and not isinstance(value, bool):
        parent[key] = rng.choice((value + 1, value - 1, value * 2, -value, value + 512, str(value)))
    elif edit == 6:
        _, other = rng.choice(nodes)         # move another node here
        parent[key] = _thaw(other)
    else:
        parent[key] = _random_value(rng)
    return document


def mutate_msgpack(data: bytes, rng: random.Random, raw, max_size: int) -> bytes:
    try:
        document = msgpack.unpackb(data, raw=False, strict_map_key=False, unicode_errors="surrogateescape")
    except Exception:
        return raw(data, max_size)
    for _ in range(rng.randrange(1, 4)):
        document = mutate_document(document, rng)
    try:
        return msgpack.packb(document, use_bin_type=rng.random() < 0.5, unicode_errors="surrogateescape")
    except Exception:
        return raw(data, max_size)


def mutate_json(data: bytes, rng: random.Random, raw, max_size: int) -> bytes:
    try:
        document = orjson.loads(data)
    except Exception:
        return raw(data, max_size)
    for _ in range(rng.randrange(1, 4)):
        document = mutate_document(document, rng)
    try:
        return orjson.dumps(document, default=str)
    except Exception:
        return raw(data, max_size)


def mutate_section_table(elf: bytes, rng: random.Random) -> bytes:
    """Change one field of one section header (type, offset, size, link...)."""
    found = layers.sections(elf)
    if not found:
        return elf
    index = rng.randrange(len(found))
    field = rng.randrange(10)
    header = found[index]
    header[field] = rng.choice((0, 1, 7, 8, 11, 0x6FFF4C0B, header[field] + 1, header[field] * 2,
                                len(elf), len(elf) - 1, 1 << 32)) & ((1 << (32 if field in (0, 1, 6, 7) else 64)) - 1)
    import struct
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    out = bytearray(elf)
    struct.pack_into("<IIQQQQIIQQ", out, shoff + index * 64, *header)
    return bytes(out)


def mutate_code_object(elf: bytes, rng: random.Random, raw, max_size: int) -> bytes:
    """Mostly the metadata (re-encoded, the note section rebuilt around it,
    with vendor notes of odd sizes around it); sometimes the section table;
    sometimes raw bytes."""
    choice = rng.random()
    metadata = layers.metadata_of(elf)
    if metadata is not None and choice < 0.6:
        metadata = mutate_msgpack(metadata, rng, raw, max_size)
        return layers.code_object_with_metadata(elf, metadata, extra_notes=rng.randrange(3),
                                                pad=rng.random() > 0.05, metadata_first=rng.random() < 0.5)
    if choice < 0.75:
        return mutate_section_table(elf, rng)
    return raw(elf, max_size)


def mutate_payload(data: bytes, rng: random.Random, raw, max_size: int) -> bytes:
    """Whatever a container member is: code object, bundle, host ELF, other."""
    if data[:4] == b"\x7fELF" and len(data) > 20 and data[18] == 224:
        return mutate_code_object(data, rng, raw, max_size)
    if data[:24] == layers.BUNDLE_MAGIC:
        return mutate_bundle(data, rng, raw, max_size)
    if data[:4] == b"\x7fELF" and rng.random() < 0.5:
        return mutate_section_table(data, rng)
    return raw(data, max_size)


def mutate_bundle(data: bytes, rng: random.Random, raw, max_size: int) -> bytes:
    """Change one entry (its code object, its ID, drop or duplicate it) or the
    stream (a second bundle, padding) and lay the bundle out again."""
    parsed = layers.bundle_entries(data)
    if parsed is None or rng.random() < 0.15:
        return raw(data, max_size)
    entries, end = parsed
    rest = data[end:]
    choice = rng.randrange(6)
    if not entries or choice == 0:
        entries.append((rng.choice((layers.AMDGPU_ENTRY, layers.HOST_ENTRY, "hip-amdgcn-amd-amdhsa--gfx90a:xnack-",
                                    "hip-spirv64-amd-amdhsa--amdgcnspirv", "openmp-amdgcn-amd-amdhsa--gfx942")),
                        entries[0][1] if entries else b""))
    elif choice == 1:
        del entries[rng.randrange(len(entries))]
    elif choice == 2:
        index = rng.randrange(len(entries))
        entries[index] = (rng.choice(_STRINGS) if rng.random() < 0.3 else entries[index][0] + "x",
                          entries[index][1])
    elif choice == 3:
        rest = rest + b"\0" * rng.randrange(16) + layers.bundle(entries, align=rng.choice((1, 8, 4096)))
    else:
        index = rng.randrange(len(entries))
        entries[index] = (entries[index][0], mutate_payload(entries[index][1], rng, raw, max_size))
    return layers.bundle(entries, align=rng.choice((1, 8, 4096))) + rest


def mutate_members(data: bytes, rng: random.Random, raw, max_size: int) -> bytes:
    """Framed members (layers.pack_members): mutate, add, drop or rename one."""
    members = layers.unpack_members(data)
    if not members or rng.random() < 0.1:
        return raw(data, max_size)
    choice = rng.randrange(5)
    index = rng.randrange(len(members))
    if choice == 0:
        members.append(members[index])
    elif choice == 1 and len(members) > 1:
        del members[index]
    elif choice == 2:
        members[index] = (rng.choice(("a.o", "x" * 40 + ".o", "lib/y.so", "../z", "d/", "#1/12", "é.o")),
                          members[index][1])
    else:
        members[index] = (members[index][0], mutate_payload(members[index][1], rng, raw, max_size))
    return layers.pack_members(members)

"""tl.rand / randn / randint / randint4x / rand4x / randn4x: the shim's streams against the
Triton interpreter's and against Philox written out here in Python (test_tcl_differential.py)."""

import torch
import triton
import triton.language as tl


@triton.jit
def random_kernel(out_int, out_u, out_n, out4, seed, n, BLOCK: tl.constexpr, ROUNDS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_int + offs, tl.randint(seed, offs, ROUNDS).to(tl.int32, bitcast=True), mask=m)
    tl.store(out_u + offs, tl.rand(seed, offs, n_rounds=ROUNDS), mask=m)
    tl.store(out_n + offs, tl.randn(seed, offs, ROUNDS), mask=m)
    a, b, c, d = tl.randint4x(seed, offs, ROUNDS)
    u1, u2, u3, u4 = tl.rand4x(seed, offs, ROUNDS)
    n1, n2, n3, n4 = tl.randn4x(seed, offs, ROUNDS)
    x = (a ^ b ^ c ^ d).to(tl.int32, bitcast=True).to(tl.float32)
    tl.store(out4 + offs, x + u1 + u2 + u3 + u4 + n1 + n2 + n3 + n4, mask=m)


@triton.jit
def random_2d_kernel(out, seed, R: tl.constexpr, C: tl.constexpr):
    # 64-bit offsets (the high word enters the counter) in a 2-D block
    offs = tl.arange(0, R)[:, None].to(tl.int64) * 4294967296 + tl.arange(0, C)[None, :]
    tl.store(out + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :], tl.rand(seed, offs))


CASES = [(300, 12345, 10, 128), (77, 0, 10, 32), (200, -7, 7, 64), (130, 2 ** 40 + 3, 10, 256)]


def run():
    out = {}
    for n, seed, rounds, block in CASES:
        ints = torch.empty(n, dtype=torch.int32)
        u, nn, x4 = torch.empty(n), torch.empty(n), torch.empty(n)
        random_kernel[(triton.cdiv(n, block),)](ints, u, nn, x4, seed, n, BLOCK=block, ROUNDS=rounds)
        out.update({f"randint_{n}_{seed}": ints, f"rand_{n}_{seed}": u, f"randn_{n}_{seed}": nn,
                    f"4x_{n}_{seed}": x4})
    r = torch.empty(4, 16)
    random_2d_kernel[(1,)](r, 99, R=4, C=16)
    out["rand_i64_offsets"] = r
    x = torch.linspace(-3, 3, 100)
    y, z = torch.empty(100, dtype=torch.int32), torch.empty(100)
    bitcast_kernel[(4,)](x, y, z, 100, BLOCK=32)
    out["bitcast_f2i"], out["bitcast_i2f"] = y, z
    return out


def _philox(seed, offset, rounds):
    M = 0xFFFFFFFF
    seed &= 0xFFFFFFFFFFFFFFFF
    k0, k1 = seed & M, seed >> 32
    c0, c1, c2, c3 = offset & M, (offset >> 32) & M, 0, 0
    for _ in range(rounds):
        p0, p2 = c0, c2
        c0 = ((0xCD9E8D57 * p2) >> 32) ^ c1 ^ k0
        c2 = ((0xD2511F53 * p0) >> 32) ^ c3 ^ k1
        c1 = (0xCD9E8D57 * p2) & M
        c3 = (0xD2511F53 * p0) & M
        k0, k1 = (k0 + 0x9E3779B9) & M, (k1 + 0xBB67AE85) & M
    return c0


def _uniform(x):
    i = x - (1 << 32) if x >= 1 << 31 else x
    i = -i - 1 if i < 0 else i
    return float(torch.tensor(float(i), dtype=torch.float32) * torch.tensor(4.6566127342e-10))


def expected():
    """randint and rand from Philox written out (exact); randn by Box-Muller in float64."""
    out = {}
    for n, seed, rounds, _ in CASES:
        ints = [_philox(seed, o, rounds) for o in range(n)]
        out[f"randint_{n}_{seed}"] = torch.tensor(ints, dtype=torch.int64).to(torch.int32)
        out[f"rand_{n}_{seed}"] = torch.tensor([_uniform(x) for x in ints])
    offs = [r * 2 ** 32 + c for r in range(4) for c in range(16)]
    out["rand_i64_offsets"] = torch.tensor([_uniform(_philox(99, o, 10)) for o in offs]).view(4, 16)
    bits = torch.linspace(-3, 3, 100).view(torch.int32)
    out["bitcast_f2i"], out["bitcast_i2f"] = bits, (bits ^ 1).view(torch.float32)
    return out


@triton.jit
def bitcast_kernel(x, y, z, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n)
    bits = v.to(tl.int32, bitcast=True)
    tl.store(y + offs, bits, mask=offs < n)
    tl.store(z + offs, (bits ^ 0x1).to(tl.float32, bitcast=True), mask=offs < n)

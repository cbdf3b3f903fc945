#!/usr/bin/env python3
"""rewrite_launches.py IN OUT: turn CUDA launches into cuda_emu.h calls.

`name<<<cfg>>>(args)` (name possibly with template arguments) becomes
`dlg_emu_launch(dlg_emu_cfg(cfg), sync, [](auto... a) { name(a...); }, args)`,
so g++ can compile a .cu file for tests/cuda/emu.  Arguments are evaluated
once, as in a real launch; template arguments are deduced from them as
nvcc would.  A #line directive keeps diagnostics on the original file.

sync says whether the kernel may wait at a barrier: true when its body, or
the body of a __device__ function it names (transitively), holds a
__syncthreads* or warp-vote call.  The emulator runs the threads of a
kernel without one as plain calls, much faster than fibers; a barrier
reached anyway stops the test with a message (the scan missed a path).

`__shared__ T name[dims];` becomes a reference to the block's own copy,
`static char dlg_shm_name; auto &name = *dlg_emu_shared<T[dims]>(&dlg_shm_name);`,
so each block starts from fresh, poisoned shared memory as on a GPU (and,
in the ThreadSanitizer build, from fresh race-detector state)."""
import re
import sys

BARRIER = re.compile(r'__syncthreads|__ballot_sync|__syncwarp|__shfl|__any_sync|__all_sync')
FUNC = re.compile(r'(?:__global__|__device__)[^;{}()]*?\b(\w+)\s*\(')


def bodies(src):
    """{function name: [body text]} of the __global__/__device__ functions"""
    out = {}
    for m in FUNC.finditer(src):
        name = m.group(1)
        i = m.end()
        depth = 1
        while depth:  # the parameter list
            depth += {'(': 1, ')': -1}.get(src[i], 0)
            i += 1
        while src[i] not in '{;':
            i += 1
        if src[i] == ';':
            continue  # a declaration
        start, depth = i, 0
        while True:
            depth += {'{': 1, '}': -1}.get(src[i], 0)
            i += 1
            if depth == 0:
                break
        out.setdefault(name, []).append(src[start:i])
    return out


def syncing(src):
    """names of the functions that may reach a barrier"""
    funcs = bodies(src)
    sync = {n for n, bs in funcs.items() if any(BARRIER.search(b) for b in bs)}
    while True:
        more = {n for n, bs in funcs.items() if n not in sync and
                any(re.search(r'\b%s\s*\(' % re.escape(c), b) for b in bs for c in sync)}
        if not more:
            return sync
        sync |= more


def name_start(src, end):
    """index where the kernel name before src[end] ('<<<') begins"""
    i = end
    if src[i - 1] == '>':  # explicit template arguments
        depth = 0
        while True:
            i -= 1
            if src[i] == '>':
                depth += 1
            elif src[i] == '<':
                depth -= 1
                if depth == 0:
                    break
    while i > 0 and (src[i - 1].isalnum() or src[i - 1] in '_:'):
        i -= 1
    return i


SHARED = re.compile(r'__shared__\s+([\w:]+)\s+(\w+)\s*((?:\[[^\]\n]+\]\s*)+);')


def shared_decls(src):
    """each block's own shared arrays (same line count: #line stays true)"""
    return SHARED.sub(lambda m: 'static char dlg_shm_%s; auto &%s = *dlg_emu_shared<%s%s>(&dlg_shm_%s);'
                      % (m.group(2), m.group(2), m.group(1), m.group(3).strip(), m.group(2)), src)


def rewrite(src):
    src = shared_decls(src)
    left = re.search(r'__shared__\s+\w', src)
    if left:
        raise SystemExit('rewrite_launches: a __shared__ declaration it cannot read at offset %d'
                         % left.start())
    sync = syncing(src)
    out, pos = [], 0
    while True:
        k = src.find('<<<', pos)
        if k < 0:
            out.append(src[pos:])
            return ''.join(out)
        start = name_start(src, k)
        close = src.index('>>>', k)
        cfg = src[k + 3:close]
        j = close + 3
        while src[j].isspace():
            j += 1
        if src[j] != '(':
            raise SystemExit('rewrite_launches: no argument list after >>> at offset %d' % j)
        # is the argument list empty?
        m = j + 1
        while src[m].isspace():
            m += 1
        name = src[start:k]
        base = name.split('<')[0].split('::')[-1]
        sep = '' if src[m] == ')' else ', '
        out.append(src[pos:start])
        out.append('dlg_emu_launch(dlg_emu_cfg(%s), %s, [](auto... dlg_a) { %s(dlg_a...); }%s'
                   % (cfg, 'true' if base in sync else 'false', name, sep))
        pos = j + 1


def main():
    src_path, dst_path = sys.argv[1], sys.argv[2]
    with open(src_path) as f:
        src = f.read()
    with open(dst_path, 'w') as f:
        f.write('#line 1 "%s"\n' % src_path)
        f.write(rewrite(src))


if __name__ == '__main__':
    main()

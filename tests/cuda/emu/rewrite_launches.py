#!/usr/bin/env python3
"""rewrite_launches.py IN OUT: turn CUDA launches into cuda_emu.h calls.

`name<<<cfg>>>(args)` (name possibly with template arguments) becomes
`dlg_emu_launch(dlg_emu_cfg(cfg), [](auto... a) { name(a...); }, args)`,
so g++ can compile a .cu file for tests/cuda/emu.  Arguments are evaluated
once, as in a real launch; template arguments are deduced from them as
nvcc would.  A #line directive keeps diagnostics on the original file."""
import sys


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


def rewrite(src):
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
        sep = '' if src[m] == ')' else ', '
        out.append(src[pos:start])
        out.append('dlg_emu_launch(dlg_emu_cfg(%s), [](auto... dlg_a) { %s(dlg_a...); }%s'
                   % (cfg, name, sep))
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

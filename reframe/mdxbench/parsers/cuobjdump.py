'''``cuobjdump --list-elf`` and ``--list-ptx``: the GPU architectures a CUDA binary holds
code for (its cubins, ``sm_80``) and PTX for (which a newer GPU's driver compiles at load
time). A binary with no device code is an error, never "no architecture".'''
import re

from . import require

_ENTRY = re.compile(r'^(ELF|PTX) file\s+\d+: \S+?\.(sm_\d+[a-z]?)\.(cubin|ptx)\s*$', re.M)


def parse(text):
    '''``{'elf': sorted archs, 'ptx': sorted archs}`` from the output of ``cuobjdump
    --list-elf`` and/or ``--list-ptx`` (either, or both concatenated).'''
    require(text is not None and text.strip(), 'cuobjdump output is empty')
    require('does not contain device code' not in text,
            f'cuobjdump: {text.strip().splitlines()[0]}: no GPU code at all')
    found = {'elf': set(), 'ptx': set()}
    for kind, arch, _ in _ENTRY.findall(text):
        found[kind.lower()].add(arch)
    require(found['elf'] or found['ptx'], 'cuobjdump: no "ELF file N: NAME.sm_XX.cubin" or '
            '"PTX file N: NAME.sm_XX.ptx" line: not the output of --list-elf or --list-ptx')
    return {k: sorted(v) for k, v in found.items()}


def missing(listed, cuda_arch):
    '''What a binary (``parse``) lacks of the architectures ``cuda_arch`` names (Spack's
    ``80,90``): each one's code and its PTX, as sentences; empty where it has all.'''
    out = []
    for a in str(cuda_arch).split(','):
        arch = f'sm_{a.strip()}'
        if arch not in listed['elf']:
            out.append(f'no {arch} code (cubins for {", ".join(listed["elf"]) or "none"})')
        if arch not in listed['ptx']:
            out.append(f'no {arch} PTX (PTX for {", ".join(listed["ptx"]) or "none"})')
    return out

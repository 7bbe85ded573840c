'''cuobjdump's listings of the GPU benchmarks Spack built here for sm_80 and sm_90 (ci/
spack-gpu.sh; tests/fixtures/cuda/README.md): what a binary holds, and what it lacks of the
architectures its spec names.'''
import pytest

from mdxbench.parsers import ParseError, cuobjdump

CUDA = 'cuda/cuobjdump-13.2-'


def test_a_binary_built_for_sm90_holds_sm90_code_and_ptx(fixture_text):
    listed = cuobjdump.parse(fixture_text(CUDA + 'list-elf-p2p-sm90.out')
                             + fixture_text(CUDA + 'list-ptx-p2p-sm90.out'))
    assert listed == {'elf': ['sm_90'], 'ptx': ['sm_90']}
    assert cuobjdump.missing(listed, '90') == []


def test_what_a_binary_lacks_of_the_architecture_asked_for_is_named(fixture_text):
    elf = cuobjdump.parse(fixture_text(CUDA + 'list-elf-nvbandwidth-sm80.out'))
    assert elf == {'elf': ['sm_80'], 'ptx': []}
    assert cuobjdump.missing(elf, '90') == ['no sm_90 code (cubins for sm_80)',
                                            'no sm_90 PTX (PTX for none)']
    # code without its PTX (the p2p sample as it was built before: code=sm_80 alone)
    assert cuobjdump.missing(elf, '80') == ['no sm_80 PTX (PTX for none)']


def test_a_binary_without_device_code_or_another_text_is_refused(fixture_text):
    with pytest.raises(ParseError, match='no GPU code at all'):
        cuobjdump.parse(fixture_text(CUDA + 'list-elf-no-cuda.out'))
    with pytest.raises(ParseError, match='not the output of --list-elf'):
        cuobjdump.parse(fixture_text('gpu/nvidia-smi-h200.out'))

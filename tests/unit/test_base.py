from mdxbench.base import expand


def test_expand_uses_the_given_environment_and_keeps_unknowns():
    env = {'MDXBENCH_SPACK_VIEW': '/v', 'PATH': '/usr/bin'}
    assert expand('$MDXBENCH_SPACK_VIEW/libexec/osu', env) == '/v/libexec/osu'
    assert expand('${MDXBENCH_SPACK_VIEW}/bin:$PATH', env) == '/v/bin:/usr/bin'
    assert expand('$MKLROOT/benchmarks', env) == '$MKLROOT/benchmarks'

'''``mdxbench fidelity``: the memory and compute checks beside direct runs (a benchmark).'''
NAME = 'fidelity'
HELP = 'checks beside hand-tuned direct runs (benchmark)'


def add_arguments(p):
    p.add_argument('--repeats', type=int, help='runs of each side')


def run(*, repeats=1):
    from mdxbench.post.bench import fidelity

    return fidelity.main(repeats)

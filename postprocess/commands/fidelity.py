'''``mdxbench fidelity``: the memory and compute checks beside direct runs (a benchmark).'''
NAME = 'fidelity'
HELP = 'checks beside hand-tuned direct runs (benchmark)'


def add_arguments(p):
    p.add_argument('--repeats', type=int, default=1, help='runs of each side')


def run(args):
    from mdxbench.post.bench import fidelity

    return fidelity.main(args.repeats)

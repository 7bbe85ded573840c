'''The checks of ``checks/`` as data: class name, perf variables, parameters. Used by the
tests: the reference files' validation (test_references), the main job's records checked
against what each check declares (test_end_to_end) and the accounting of every check class
(test_zz_every_check).'''
import importlib.util
import inspect
import pathlib
import sys

from mdxbench import REPO_ROOT


def check_classes(checks_dir=None):
    '''{class name: class} of every ReFrame test class defined in ``checks/``.'''
    import reframe.core.pipeline as pipeline

    checks_dir = pathlib.Path(checks_dir or REPO_ROOT / 'checks')
    out = {}
    for f in sorted(checks_dir.rglob('*.py')):
        if not _is_test_file(f):
            continue                # a program the checks run (src/), as ReFrame's loader skips it
        modname = 'mdxbench_checks.' + '.'.join(f.relative_to(checks_dir).with_suffix('').parts)
        mod = sys.modules.get(modname)
        if mod is None:
            spec = importlib.util.spec_from_file_location(modname, f)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[modname] = mod     # ReFrame looks the module up while classes are made
            spec.loader.exec_module(mod)

        for name, obj in vars(mod).items():
            if (inspect.isclass(obj) and issubclass(obj, pipeline.RegressionTest)
                    and obj.__module__ == mod.__name__ and not name.startswith('_')):
                out[name] = obj

    return out


def _is_test_file(path):
    '''ReFrame's own rule (its loader's validator): a file that imports reframe or defines
    a ``simple_test``.'''
    import ast

    from reframe.frontend.loader import RegressionCheckValidator

    validator = RegressionCheckValidator()
    validator.visit(ast.parse(path.read_text(), str(path)))
    return validator.valid


def describe(cls):
    '''``{'perf_vars': {name: unit}, 'better': {name: 'higher'|'lower'},
    'params': {name: tuple of values}, 'conditions': what its references must state,
    'fixed_conditions': the conditions the check sets for its run}``.'''
    def default(name):
        v = getattr(cls, name, None) or {}
        return v.default_value if hasattr(v, 'default_value') else v

    # a GPU check's per-GPU and pair figures (mdxbench.gpu) are its variables too: a
    # reference names them as ``triad``, applied to each GPU's ``gpu<i>_triad``
    table = dict(default('perf_table'), **default('per_gpu_table'), **default('pair_table'))
    return {
        'perf_vars': {name: unit for name, (_, unit, _) in table.items()},
        'better': {name: better for name, (_, _, better) in table.items()},
        'params': {p: tuple(v.values) for p, v in cls.param_space.params.items()},
        'conditions': tuple(getattr(cls, 'reference_conditions', ())),
        'fixed_conditions': dict(getattr(cls, 'reference_fixed_conditions', {})),
        'run_conditions': tuple(getattr(cls, 'run_conditions', ())),
    }

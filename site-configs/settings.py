# ReFrame configuration entry point for every mdxbench system.
# Point ReFrame at it with RFM_CONFIG_FILES (ci/activate.sh does), or pass -C.
# The data lives in common.yaml and systems/*.yaml; this file only loads it.
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(_here), 'reframe'))

from mdxbench.sitecfg import build_config, requested_system  # noqa: E402

site_configuration = build_config(_here, selected=requested_system())

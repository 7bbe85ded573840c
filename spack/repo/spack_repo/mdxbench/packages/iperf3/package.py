# iperf3 with the papers' version (3.18), which Spack's builtin repository does not have
# (its newest is 3.17.1).
from spack_repo.builtin.packages.iperf3.package import Iperf3 as BuiltinIperf3

from spack.package import *


class Iperf3(BuiltinIperf3):
    """iperf3, with 3.18 (the papers' version) added."""

    # The maintainers' release method (make_release: git archive of the tag 3.18 =
    # commit 2a2984488d, gzip -9, here with -n); the tree carries its generated
    # configure. Its checksum is the archive's, not that of the maintainers' own upload
    # (not reproducible from the tag), so this version names the archive it pins.
    version(
        "3.18",
        sha256="dad3cbb4f2badaaeea927aaf86c9e528657f1bd34b0b0b4626b8a70d642f2db5",
        url="https://downloads.es.net/pub/iperf/iperf-3.18.tar.gz",
    )

# iperf3 with the papers' version (3.18), which Spack's builtin repository does not have
# (its newest is 3.17.1).
from spack_repo.builtin.packages.iperf3.package import Iperf3 as BuiltinIperf3

from spack.package import *


class Iperf3(BuiltinIperf3):
    """iperf3, with 3.18 (the papers' version) added: the maintainers' release, and an
    archive of its tag for a mirror that does not hold that release."""

    # The maintainers' release tarball and the checksum they publish for it (iperf's
    # docs/news.rst, "2024-12-13: iperf-3.18 released"). Preferred: a site with network
    # access builds this one.
    version(
        "3.18",
        sha256="c0618175514331e766522500e20c94bfb293b4424eb27d7207fb427b88d20bab",
        url="https://downloads.es.net/pub/iperf/iperf-3.18.tar.gz",
        preferred=True,
    )
    # The same tag (3.18 = commit 2a2984488d) archived by the maintainers' release method
    # (make_release: git archive, gzip -9; here with -n), the tree with its generated
    # configure: not byte for byte their upload, so not under its checksum. No public URL
    # serves this archive: it lives in a site's mirror (CI's ../shared/spack/mirror), found
    # there by its checksum. spack/local requires it (site.yaml); an air-gapped site whose
    # mirror holds ESnet's tarball builds 3.18 instead.
    version(
        "3.18-tree",
        sha256="dad3cbb4f2badaaeea927aaf86c9e528657f1bd34b0b0b4626b8a70d642f2db5",
    )

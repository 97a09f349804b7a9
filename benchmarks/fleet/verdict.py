# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.

"""Where a server landed, judged against its image and its host's traits.

A server is wrong when it ended in ERROR, or on a host that cannot boot
its image (the host's provider lacks the image format's
``COMPUTE_IMAGE_TYPE_*`` trait, or the host's CPU is not the image's
architecture), or on a host reserved for a trait (``CUSTOM_TROVE``) its
image does not ask for. The host's traits are Placement's, read after the
boots: Placement is the truth about a provider's traits. Its CPU is its
group's (``shape.py``): VMware hosts carry no ``HW_ARCH_*`` trait.
"""

from benchmarks.fleet import shape

ERROR = 'error'
FORMAT = 'cannot boot the format'
ARCHITECTURE = 'cannot boot the architecture'
RESERVED = 'reserved host, image without the tag'
PROBLEMS = (ERROR, FORMAT, ARCHITECTURE, RESERVED)


def judge(status, kind, host_traits, host_architecture,
          reserved_traits=(shape.RESERVED_TRAIT,)):
    """The problems of one server (an empty list when it is where it
    should be). ``kind``: its ``shape.ImageKind``; ``host_traits``: its
    node's traits (None when it has no node)."""
    if status != 'ACTIVE' or host_traits is None:
        return [ERROR]
    problems = []
    if shape.format_trait(kind.disk_format) not in host_traits:
        problems.append(FORMAT)
    if kind.architecture != host_architecture:
        problems.append(ARCHITECTURE)
    if any(t in host_traits and t not in kind.required_traits
           for t in reserved_traits):
        problems.append(RESERVED)
    return problems


def tally(judged):
    """{problem: servers with it} over a list of problem lists (every
    problem listed, 0 included)."""
    return {p: sum(p in problems for problems in judged) for p in PROBLEMS}

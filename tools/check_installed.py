#!/usr/bin/env python3
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

"""Check an installed image-type-filter wheel, as an operator would get it.

Run by ``.ci/run`` with the Python of a virtualenv the wheel was installed
into with no extras, and ``-I`` (the installed wheel, never the checkout):

``beside-nova NOVA_VERSION``
    nova-scheduler's environment: the wheel beside the newest Nova. Nova
    loads the filters (``image_type_filter.nova.all_filters``), and no
    module of ours imports anything of the ``cli`` extra while doing so:
    an import statement of our code that names one of its libraries (read
    from the wheel's own metadata) fails here, even of one Nova has loaded
    already, while Nova's own imports go through. Nova brings most of those
    libraries itself (cliff comes with neutronclient), so whether they are
    installed proves nothing; who imports them does.

``bare``
    the base install alone, no Nova: the scheduler side's modules import,
    and each console script says in one line which list of the release
    directory to install (``dependencies-cli.txt``), with exit code 2
    (cliff and the rest of the cli extra are not installed; oslo.config
    and keystoneauth1 bring PyYAML and requests).

One line per problem, exit 1 if any. Standard library only.
"""

import builtins
from importlib import metadata
import importlib.util
import os
import re
import subprocess
import sys

DISTRIBUTION = 'image-type-filter'
CLI_EXTRA = 'cli'
OURS = ('image_type_common', 'image_type_filter', 'virt_capabilities')
FILTERS = ['ImageTypeRebuildFilter']
#: What the scheduler side is made of, importable without Nova.
SCHEDULER_SIDE = ('image_type_filter.conf', 'image_type_filter.settings',
                  'image_type_filter.scheduler.pipeline',
                  'image_type_common.placement_client')
CONSOLE_SCRIPTS = ('virt-capabilities', 'image-type-filter')


def canonical(name):
    return re.sub(r'[-_.]+', '-', name).lower()


def cli_extra_distributions():
    """The distributions the wheel's metadata lists for the cli extra."""
    names = set()
    for line in metadata.requires(DISTRIBUTION) or ():
        requirement, _, marker = line.partition(';')
        if re.search(r'extra\s*==\s*["\']%s["\']' % CLI_EXTRA, marker):
            names.add(canonical(re.split(r'[<>=!~\[ (]', requirement.strip(),
                                         maxsplit=1)[0]))
    return names


def cli_extra_modules(distributions):
    """Top-level modules of the installed ones among ``distributions``."""
    return {top for top, dists in metadata.packages_distributions().items()
            if {canonical(d) for d in dists} & distributions}


class RefuseToOurs:
    """Wraps ``__import__``: an import statement of one of our modules that
    names one of ``modules`` fails (and is recorded), whether or not
    somebody else (Nova) has loaded it already; anybody else's goes
    through."""

    def __init__(self, modules):
        self.modules = modules
        self.refused = []
        self._import = builtins.__import__

    def __call__(self, name, globals=None, locals=None, fromlist=(),
                level=0):
        importer = (globals or {}).get('__name__', '')
        if level == 0 and importer.split('.')[0] in OURS and \
                name.split('.')[0] in self.modules:
            self.refused.append('%s imports %s' % (importer, name))
            raise ImportError('%s is the %s extra\'s' % (name, CLI_EXTRA),
                              name=name)
        return self._import(name, globals, locals, fromlist, level)

    def __enter__(self):
        builtins.__import__ = self
        return self

    def __exit__(self, *exc_info):
        builtins.__import__ = self._import


def check_files():
    problems = []
    files = [str(f) for f in metadata.files(DISTRIBUTION)]
    for package in OURS:
        spec = importlib.util.find_spec(package)
        if not spec.origin.startswith(sys.prefix):
            problems.append('%s is not the installed wheel\'s (%s)'
                            % (package, spec.origin))
    if [f for f in files if f.startswith(('tests/', 'placement_runner/',
                                          'image_type_demo/'))]:
        problems.append('the wheel installed tests or the demo')
    return problems


def beside_nova(nova_version):
    problems = check_files()
    if metadata.version('nova') != nova_version:
        problems.append('nova %s is installed, not %s'
                        % (metadata.version('nova'), nova_version))
    distributions = cli_extra_distributions()
    if not distributions:
        problems.append('the wheel\'s metadata has no %s extra' % CLI_EXTRA)
    modules = cli_extra_modules(distributions)
    try:
        with RefuseToOurs(modules) as refuse:
            from image_type_filter.nova import all_filters
            names = [f.__name__ for f in all_filters()]
    except ImportError as exc:
        names = None
        problems.append('nova-scheduler cannot load the filters without '
                        'the %s extra: %s' % (CLI_EXTRA, exc))
    if names is not None and names != FILTERS:
        problems.append('all_filters() returned %s, not %s' % (names, FILTERS))
    problems += refuse.refused
    if not problems:
        print('all_filters: %s beside nova %s; our modules import none of: %s'
              % (names, nova_version, ', '.join(sorted(modules))))
    return problems


def bare():
    problems = check_files()
    # oslo.config brings PyYAML and keystoneauth1 requests: the check of
    # the console scripts means something when the rest is missing.
    missing = sorted(d for d in cli_extra_distributions()
                     if not _installed(d))
    if not missing:
        problems.append('the base install brought all of the %s extra'
                        % CLI_EXTRA)
    for module in SCHEDULER_SIDE:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            problems.append('%s does not import from the base install: %s'
                            % (module, exc))
    bindir = os.path.dirname(sys.executable)
    for script in CONSOLE_SCRIPTS:
        proc = subprocess.run([os.path.join(bindir, script), '--help'],
                              capture_output=True, text=True, timeout=60)
        lines = proc.stderr.splitlines()
        # The release directory's list, not an index name: nothing is
        # published on the index (image_type_common/startup.py).
        wanted = 'pip install -r dependencies-%s.txt' % CLI_EXTRA
        if proc.returncode != 2 or len(lines) != 1 or wanted not in lines[0]:
            problems.append('%s --help without the %s extra: exit %d, %r'
                            % (script, CLI_EXTRA, proc.returncode,
                               proc.stderr))
    if not problems:
        print('the base install (without %s) loads the scheduler side; the '
              'console scripts ask for the %s extra'
              % (', '.join(missing), CLI_EXTRA))
    return problems


def _installed(distribution):
    try:
        metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        return False
    return True


def main(argv):
    if argv[:1] == ['beside-nova'] and len(argv) == 2:
        problems = beside_nova(argv[1])
    elif argv == ['bare']:
        problems = bare()
    else:
        print('usage: check_installed.py beside-nova NOVA_VERSION | bare',
              file=sys.stderr)
        return 2
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))

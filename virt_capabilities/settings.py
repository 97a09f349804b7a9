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

"""A compute node's configuration, read once into typed values.

Every option of ``[virt_capabilities]``, and every one of Nova's own the
reporter declares (``virt_capabilities.conf.nova``), is read here, in one
pass, and handed down as a frozen dataclass (a test holds it). A value of
the wrong type fails as the files are loaded (``loading.validate_all``),
one the reporter cannot use (a custom trait's name, an architecture)
here: either is one line naming it (exit 2). Two other modules of this
package read options by name, where they are used, and no other does (a
test holds it): ``ironic_node_traits`` (the ``[ironic]`` section: its
``auth_type`` picks the credentials, as ``[placement] auth_type`` does in
``image_type_common.connection``; keystoneauth1 loads the rest) and
``logs`` (where oslo.log writes, named when it cannot open it).
"""

import dataclasses
import difflib
import os

from image_type_common import exceptions
from image_type_common import image_metadata
from image_type_common import image_types
from image_type_common import trait_names
from image_type_common.conf import loading

STATE_FILE_NAME = 'virt_capabilities.json'
STATUS_FILE_NAME = 'virt_capabilities_status.json'


def _custom_traits(names):
    bad = sorted(n for n in names if not trait_names.is_custom(n))
    if bad:
        raise exceptions.ConfigError(
            '[virt_capabilities] custom_traits: %s not a valid custom trait '
            '(must match %s)' % (', '.join(repr(b) for b in bad),
                                 trait_names.CUSTOM_GRAMMAR))
    if image_types.VOLUME_ONLY_TRAIT in names:
        raise exceptions.ConfigError(
            '[virt_capabilities] custom_traits: %s is declared with '
            '[virt_capabilities] volume_only = True, which checks that the '
            'node boots no image' % image_types.VOLUME_ONLY_TRAIT)
    return frozenset(names)


def canonical_architecture(name):
    """``name`` as Nova's Architecture field stores it
    (``image_metadata.canonical``), or None when Nova refuses it."""
    name = image_metadata.canonical('hw_architecture', name)
    return name if name in image_metadata.ARCHITECTURES else None


def _host_architecture(value):
    if value is None or not value.strip():
        return None
    canonical = canonical_architecture(value)
    if canonical is None:
        close = difflib.get_close_matches(value.strip().lower(),
                                          image_metadata.ARCHITECTURES, 1)
        raise exceptions.ConfigError(
            '[virt_capabilities] host_architecture: %r is no architecture '
            'Nova knows%s; accepted, as uname -m prints them: %s (and %s, '
            'which Nova rewrites)'
            % (value, ' (did you mean %s?)' % close[0] if close else '',
               ', '.join(image_metadata.ARCHITECTURES),
               ', '.join(sorted(image_metadata.ARCH_ALIASES))))
    return canonical


#: The section of each of Nova's own options; every other field is a
#: ``[virt_capabilities]`` option of the same name.
_GROUPS = {'compute_driver': None, 'force_raw_images': None, 'host': None,
           'state_path': None, 'images_type': 'libvirt',
           'virt_type': 'libvirt', 'image_type_exclude_list': 'compute'}


@dataclasses.dataclass(frozen=True)
class NodeSettings:
    """Every value comes from ``from_conf``: the defaults are the options'
    own (virt_capabilities/conf/), written nowhere else."""

    compute_driver: str
    force_raw_images: bool
    host: str
    state_path: str
    images_type: str
    virt_type: str
    image_type_exclude_list: tuple
    image_type_traits_owner: str
    custom_traits: frozenset
    volume_only: bool
    #: Where ownership state is kept, or None (kept in memory only).
    state_file: str
    #: Where the last sync is recorded for monitoring, or None.
    status_file: str
    reporter_name: str
    conflict_retries: int
    image_metadata_traits: bool
    #: ``[virt_capabilities] host_architecture`` as Nova spells it (one of
    #: its Architecture names), or None: this machine's
    #: (``NodePlan.host_architecture``).
    host_architecture: str

    @classmethod
    def from_conf(cls, conf):
        value = {field.name: loading.read(
            conf, field.name, _GROUPS.get(field.name, 'virt_capabilities'))
            for field in dataclasses.fields(cls)}
        state_path = value['state_path']
        for name, file_name in (('state_file', STATE_FILE_NAME),
                                ('status_file', STATUS_FILE_NAME)):
            if not value[name]:
                value[name] = (os.path.join(state_path, file_name)
                               if state_path else None)
        return cls(**dict(
            value,
            image_type_exclude_list=tuple(value['image_type_exclude_list']),
            custom_traits=_custom_traits(value['custom_traits']),
            reporter_name=value['reporter_name'].strip() or value['host'],
            host_architecture=_host_architecture(
                value['host_architecture'])))

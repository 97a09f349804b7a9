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

"""candidates' tables of what Nova reads, against the installed Nova."""

import pytest

pytest.importorskip('nova')

from nova import objects  # noqa: E402
from nova.objects import fields  # noqa: E402

from image_type_common import image_metadata  # noqa: E402
from image_type_filter.diagnostics.nova_side import nova_input  # noqa: E402


def test_every_image_meta_props_field_is_known():
    objects.register_all()
    missing = set(objects.ImageMetaProps.fields) - \
        nova_input.IMAGE_META_PROPS_FIELDS
    assert missing == set()


def test_the_legacy_property_table_is_novas():
    objects.register_all()
    assert dict(image_metadata.LEGACY_PROPERTIES) == \
        objects.ImageMetaProps._legacy_property_map
    # The one legacy name read outside the map.
    props = objects.ImageMetaProps.from_dict(
        {image_metadata.VMWARE_ADAPTERTYPE: 'lsilogic'})
    assert (props.hw_disk_bus, props.hw_scsi_model) == ('scsi', 'lsilogic')
    assert image_metadata.VMWARE_ADAPTERTYPE in nova_input.KNOWN


def test_no_glance_disk_format_is_unknown_to_nova_and_os_traits():
    # Nova's own list has two of its image backends (rbd, lvm) besides.
    assert set(nova_input.GLANCE_DISK_FORMATS) - set(
        fields.DiskFormat.ALL) <= {'ami', 'ari', 'aki', 'vhdx'}

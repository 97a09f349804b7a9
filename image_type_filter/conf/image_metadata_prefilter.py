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

"""[image_metadata_prefilter] options: image properties Placement checks."""

from oslo_config import cfg
from oslo_config import types

from image_type_common import image_metadata

image_metadata_prefilter_group = cfg.OptGroup(
    'image_metadata_prefilter', title='Image-metadata prefilter',
    help='Ask Placement only for hosts whose driver reports the traits an '
         'image\'s hardware properties need (disk and CD-ROM bus, VIF '
         'model, video model, architecture, emulated architecture, vIOMMU '
         'model). Unlike Nova\'s own ``[scheduler] image_metadata_prefilter``'
         ', each property is checked on its own: a value with no os-traits '
         'trait adds no constraint and leaves the others in place, and an '
         'i686 image may land on x86_64 hosts. Do not turn Nova\'s option '
         'on beside this one.')

_FAMILY_HELP = {
    'storage_bus': '``hw_disk_bus`` and ``hw_cdrom_bus`` require '
                   '``COMPUTE_STORAGE_BUS_*``',
    'vif_model': '``hw_vif_model`` requires ``COMPUTE_NET_VIF_MODEL_*``',
    'graphics_model': '``hw_video_model`` requires '
                      '``COMPUTE_GRAPHICS_MODEL_*``',
    'architecture': '``hw_architecture`` (or the legacy ``architecture``) '
                    'forbids every other host CPU\'s ``HW_ARCH_*`` (i686 '
                    'images also go to ``HW_ARCH_X86_64`` hosts); a host '
                    'with no ``HW_ARCH_*`` trait (ironic, z/VM) is left to '
                    'Nova\'s ImagePropertiesFilter, whatever the '
                    'architecture',
    'emulation_architecture': '``hw_emulation_architecture`` requires '
                              '``COMPUTE_ARCH_*`` (os-traits has it for '
                              'aarch64, mipsel, ppc64le, s390x, x86_64)',
    'viommu_model': '``hw_viommu_model`` requires '
                    '``COMPUTE_VIOMMU_MODEL_*``',
}

image_metadata_prefilter_opts = [
    cfg.ListOpt(
        'families',
        item_type=types.String(choices=image_metadata.NAMES),
        default=[],
        help='The property families to check; empty (the default) turns '
             'the prefilter off. ' + '; '.join(
                 '``%s``: %s' % (name, _FAMILY_HELP[name])
                 for name in image_metadata.NAMES) + '. Upgrade rule: '
             'enable a family only once ``image-type-filter status`` is '
             'clean for it; a host that reports none of a family\'s traits '
             '(but ``architecture``\'s) would receive no boot of an image '
             'that sets the property.'),
]


def list_opts():
    return {image_metadata_prefilter_group: image_metadata_prefilter_opts}

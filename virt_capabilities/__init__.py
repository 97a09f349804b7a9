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

"""Compute-side half: the traits a compute node carries that nova-compute
does not keep itself.

Reads a compute node's nova.conf and works out which disk image formats its
virt driver boots, as nova-compute does. Under the default
``image_type_traits_owner = nova-compute``, nova-compute keeps those
``COMPUTE_IMAGE_TYPE_*`` traits itself and the reporter keeps on the node's
resource provider only what nova-compute never writes: its configured custom
traits and the driver's image-metadata traits (``metadata_traits``). With
``image_type_traits_owner = reporter`` it keeps the image-type traits too.
``virt-capabilities show`` says, per node, which are whose.
"""

"""Issue 21: the image-metadata prefilter against Nova's own, on Nova's code.

The parity table (``tests/nova/image_metadata_parity.md``, made by
``tests/nova/parity.py``): what Nova's ``transform_image_metadata`` and ours
put in a Nova ``RequestSpec`` for each image-property combination, and why
they differ.
"""

import os
import types

import pytest

pytest.importorskip('nova')

from nova.virt.libvirt import driver as libvirt_driver  # noqa: E402

from image_type_common import image_metadata  # noqa: E402
from tests.nova import parity  # noqa: E402

# -- the table -------------------------------------------------------------


def test_the_checked_in_table_is_what_nova_and_ours_do():
    fresh = parity.render()
    if os.environ.get(parity.REGENERATE_ENV):
        parity.write_table(fresh)
    assert parity.read_table() == fresh, (
        '%s is out of date; regenerate it: %s=1 python -m pytest %s, or '
        'python -m tests.nova.parity' % (parity.TABLE, parity.REGENERATE_ENV,
                                         __file__))


def test_every_difference_is_explained_without_our_code():
    unexplained = ['%s: %s' % (row.given, text) for row in parity.rows()
                   for kind, text in row.reasons
                   if kind == parity.UNEXPLAINED]
    assert unexplained == []
    assert sum(1 for row in parity.rows() if not row.rejected) > 150


def test_every_enum_value_of_every_property_is_a_row():
    given = [row.given for row in parity.rows()]
    for prop in parity.PROPERTIES:
        values = parity.enum_values(prop)
        assert len(values) > 3
        for value in values:
            assert {prop: value} in given


def test_the_catalogue_accepts_exactly_the_installed_novas_values():
    for prop in parity.PROPERTIES:
        family = image_metadata.FAMILY_BY_PROPERTY[prop]
        assert sorted(family.values) == sorted(parity.enum_values(prop)), prop


def _libvirt(dom_caps=(), cpu_arch='x86_64'):
    """Just enough of a libvirt host for two of Nova's trait methods."""
    cpu = types.SimpleNamespace(arch=cpu_arch)
    host = types.SimpleNamespace(
        get_domain_capabilities=lambda: dict.fromkeys(dom_caps, {}),
        has_min_version=lambda version: True,
        get_capabilities=lambda: types.SimpleNamespace(
            host=types.SimpleNamespace(cpu=cpu)))
    return types.SimpleNamespace(_host=host)


def test_the_renamed_traits_are_what_novas_libvirt_driver_reports():
    # Nova's own libvirt driver names vIOMMU traits COMPUTE_VIOMMU_MODEL_X,
    # which its prefilter asks for as COMPUTE_VIOMMU_X.
    reported = libvirt_driver.LibvirtDriver._get_iommu_model_traits(
        _libvirt(dom_caps=('x86_64', 'aarch64')))
    assert all(reported.values())
    table = {next(iter(parity.fact('hw_viommu_model', v).required))
             for v in parity.enum_values('hw_viommu_model')}
    assert set(reported) == table
    # On an armv7l host the same driver computes HW_ARCH_ARMV7L, finds it
    # is no trait and reports no HW_ARCH_* at all.
    assert libvirt_driver.LibvirtDriver._get_cpu_arch_traits(
        _libvirt(cpu_arch='armv7l')) == {'HW_ARCH_ARMV7L': False}

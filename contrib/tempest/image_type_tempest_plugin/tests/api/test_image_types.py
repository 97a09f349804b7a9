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

"""Servers land only on hosts whose traits Placement says fit the image."""

from tempest import config
from tempest.common import waiters
from tempest.lib import decorators

from image_type_tempest_plugin import expectations
from image_type_tempest_plugin import scheduler_log
from image_type_tempest_plugin.tests.api import base

CONF = config.CONF


class ImageFormatTest(base.ImageTypeFilterTest):
    """Each disk_format boots only where a host reports its trait."""

    @decorators.idempotent_id('6c0f2d5e-1b7a-4f43-9a55-0e3f0c2b8d11')
    def test_each_format_boots_only_on_a_host_that_reports_it(self):
        every = self.fleet.hosts(
            forbidden=[self.reserved] if self.reserved else [])
        tried = []
        for disk_format in self.formats():
            hosts = self.untagged_hosts(disk_format)
            if not hosts:
                continue
            # A format every host boots shows nothing about the filter:
            # once is enough. One some hosts lack: several boots, so that
            # landing right by chance is unlikely.
            count = (1 if hosts == every
                     else CONF.image_type_filter.boots_per_format)
            image_id = self.image(disk_format)
            servers = [self.boot(image_id)[0] for _ in range(count)]
            for server_id in servers:
                self.wait_active(server_id)
                self.assert_lands_in(server_id, hosts,
                                     'a %s server' % disk_format)
            self.delete(servers)
            tried.append((disk_format, hosts != every))
        if not tried:
            raise self.skipException('no configured format boots anywhere')
        if not any(restricted for _, restricted in tried):
            raise self.skipException(
                'every configured bootable format (%s) boots on every '
                'host: nothing here tells a filter from none' % ', '.join(
                    f for f, _ in tried))

    @decorators.idempotent_id('0d8e52b4-7f1c-4c39-8f8a-6b1e5d4a3c22')
    def test_a_format_no_host_boots_ends_in_error_naming_it(self):
        nowhere = [f for f in self.formats()
                   if not self.fleet.hosts(
                       [expectations.trait_for_format(f)])]
        if not nowhere:
            raise self.skipException('every configured format boots on '
                                     'some host')
        boots = self.fleet.bootable_formats()
        for disk_format in nowhere:
            server_id, _ = self.boot(self.image(disk_format))
            server = self.wait_settled(server_id)
            # The fault names the format, its trait and what the cloud
            # boots.
            self.assert_no_valid_host(
                server, disk_format,
                expectations.trait_for_format(disk_format), *boots)


class ImageMetadataFamilyTest(base.ImageTypeFilterTest):
    """An image property no host satisfies fails the boot, saying why."""

    @classmethod
    def skip_checks(cls):
        super().skip_checks()
        if not CONF.image_type_filter.image_metadata_family:
            raise cls.skipException('[image_type_filter] '
                                    'image_metadata_family is unset')

    @decorators.idempotent_id('a3d9c8f1-5e2b-4d67-b0c4-2f8e1a9d7e33')
    def test_property_no_host_satisfies_ends_in_error_naming_it(self):
        family = CONF.image_type_filter.image_metadata_family
        found = self.fleet.unsatisfied_property(family)
        if found is None:
            raise self.skipException('some host carries every trait of '
                                     'family %s' % family)
        prop, value, trait = found
        image_id = self.image(self.bootable_untagged_format(),
                              **{prop: value})
        server_id, _ = self.boot(image_id)
        self.assert_no_valid_host(self.wait_settled(server_id), trait, prop,
                                  family)


class ReservedHostTest(base.ImageTypeFilterTest):
    """trait:<reserved>=required lands on a reserved host; no other does."""

    @classmethod
    def skip_checks(cls):
        super().skip_checks()
        if not CONF.image_type_filter.reserved_trait:
            raise cls.skipException('[image_type_filter] reserved_trait '
                                    'is empty')

    @decorators.idempotent_id('e51b7c2a-9d3f-4a86-8c17-4b2f6e0d9a44')
    def test_reserved_image_lands_on_the_reserved_host(self):
        self.boot_tagged()

    @decorators.idempotent_id('7f2c4e9b-3a1d-4b58-9e60-1c8d5a2f6b55')
    def test_untagged_boots_never_land_on_the_reserved_host(self):
        if not self.fleet.hosts([self.reserved]):
            raise self.skipException('no host carries %s' % self.reserved)
        disk_format = self.bootable_untagged_format()
        hosts = self.untagged_hosts(disk_format)
        image_id = self.image(disk_format)

        def check(server_id, request_id):
            self.assert_lands_in(server_id, hosts, 'an untagged image')

        self.boot_in_waves(image_id, CONF.image_type_filter.untagged_boots,
                           check)


class RebuildTest(base.ImageTypeFilterTest):
    """A rebuild to an image the server's host cannot boot is refused."""

    @classmethod
    def resource_setup(cls):
        super().resource_setup()
        cls.first_format = cls.bootable_untagged_format()

    def boot_first(self):
        server_id, _ = self.boot(self.image(self.first_format))
        self.wait_active(server_id)
        host = self.assert_lands_in(
            server_id, self.untagged_hosts(self.first_format),
            'a %s server' % self.first_format)
        return server_id, host

    @decorators.idempotent_id('2b6e8d1c-4f7a-4e39-a2d5-9c0b3e7f1a66')
    def test_rebuild_to_an_image_the_host_cannot_boot_is_refused(self):
        server_id, host = self.boot_first()
        traits = self.fleet.traits_by_host[host]
        lacking = [f for f in self.formats()
                   if expectations.trait_for_format(f) not in traits]
        if not lacking:
            raise self.skipException('host %s boots every configured '
                                     'format' % host)
        # Prefer a format some other host boots: the refusal is then about
        # this host, not the cloud.
        lacking.sort(key=lambda f: not self.fleet.hosts(
            [expectations.trait_for_format(f)]))
        new_format = lacking[0]
        new_image = self.image(new_format)
        log = (scheduler_log.SchedulerLog(CONF.image_type_filter.
                                          scheduler_log)
               if CONF.image_type_filter.scheduler_log else None)
        self.servers_client.rebuild_server(server_id, new_image)
        server = self.wait_settled(server_id)
        # Nova puts a server whose rebuild found no host in ERROR.
        self.assert_no_valid_host(server)
        self.assertEqual(host, server['OS-EXT-SRV-ATTR:hypervisor_hostname'])
        if log is None:
            return
        reasons = scheduler_log.lines_with(
            log.new_lines(), server_id, new_image,
            expectations.trait_for_format(new_format))
        self.assertNotEqual([], reasons, 'no line of %s names server %s, '
                            'image %s and %s' % (
                                log.path, server_id, new_image,
                                expectations.trait_for_format(new_format)))

    @decorators.idempotent_id('c4a1f7e2-8b3d-4c95-b6e0-5d2a9f1c8b77')
    def test_rebuild_to_a_bootable_image_succeeds(self):
        server_id, host = self.boot_first()
        traits = self.fleet.traits_by_host[host]
        bootable = [f for f in self.formats()
                    if expectations.trait_for_format(f) in traits]
        # A second image: a rebuild to the same one proves nothing.
        new_image = self.image(bootable[-1], image_type_test='rebuild')
        self.servers_client.rebuild_server(server_id, new_image)
        waiters.wait_for_server_status(self.servers_client, server_id,
                                       'ACTIVE')
        server = self.admin_servers_client.show_server(server_id)['server']
        self.assertEqual(new_image, server['image']['id'])
        self.assertEqual(host, server['OS-EXT-SRV-ATTR:hypervisor_hostname'])


class SchedulerWorkersTest(base.ImageTypeFilterTest):
    """Every nova-scheduler worker runs the filters."""

    @classmethod
    def skip_checks(cls):
        super().skip_checks()
        if not CONF.image_type_filter.scheduler_log:
            raise cls.skipException('[image_type_filter] scheduler_log is '
                                    'unset')

    @decorators.idempotent_id('f8d3b2a5-6c1e-4f70-8a49-3e7c0b5d2f88')
    def test_every_worker_runs_the_filters(self):
        workers = CONF.image_type_filter.scheduler_workers
        log = scheduler_log.SchedulerLog(CONF.image_type_filter.scheduler_log)
        disk_format = self.bootable_untagged_format()
        hosts = self.untagged_hosts(disk_format)
        pids = set()

        def check(server_id, request_id):
            self.assert_lands_in(server_id, hosts, 'a %s server'
                                 % disk_format)
            # nova-scheduler logs each request filter that added a
            # constraint (Nova's trace_request_filter, at debug), with the
            # boot's request id and its own pid.
            ran = {scheduler_log.pid_of(line) for line in
                   scheduler_log.lines_with(log.new_lines(), request_id,
                                            'image_type_filter')}
            ran.discard(None)
            self.assertEqual(1, len(ran), 'boot %s (%s): the scheduler '
                             'processes that ran image_type_filter for it, '
                             'by %s: %s (is [DEFAULT] debug on?)' % (
                                 server_id, request_id, log.path,
                                 sorted(ran)))
            pids.update(ran)
            return len(pids) >= workers

        booted = self.boot_in_waves(self.image(disk_format),
                                    CONF.image_type_filter.worker_boots,
                                    check)
        self.assertEqual(workers, len(pids), 'after %d boots, only '
                         'scheduler process(es) %s ran the filters' % (
                             booted, sorted(pids)))

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

"""Errors with the exit code an operator sees for them.

0 ok; 1 runtime failure (Placement error after retries, traits Placement
lacks); 2 bad configuration or usage.
"""


class Error(Exception):
    """Base for errors that end a command with a one-line message."""

    exit_code = 1


class ConfigError(Error):
    """The configuration or the command line is wrong; nothing was sent."""

    exit_code = 2


class CredentialsRefused(ConfigError):
    """Keystone or Placement refused the credentials (401 or 403): exit 2
    for a one-shot command; a service retries with back-off, re-reading its
    configuration (the rotated password, the role granted later)."""


class PlacementError(Error):
    """Placement answered with an error, or could not be reached."""


class PlacementUnavailable(PlacementError):
    """No answer from Placement after the configured retries."""


class KeystoneUnavailable(PlacementUnavailable):
    """Placement cannot be asked because Keystone, which hands out the
    token and the catalogue, could not be reached or did not answer. A
    PlacementUnavailable too, so whatever waits for Placement waits for
    it, but its message names Keystone and its URL."""


class PlacementTooOld(PlacementError):
    """Placement is older than nova-scheduler needs (``negotiate``)."""


class ProviderNotFound(PlacementError):
    """No resource provider with that name or uuid."""


class ConcurrentUpdate(PlacementError):
    """409: the provider generation moved between our read and our write."""


class UnknownTraits(PlacementError):
    """Placement does not know these traits (older than our os-traits)."""

    def __init__(self, traits, message=None):
        self.traits = frozenset(traits)
        super().__init__(message or 'Placement does not know trait(s) %s; '
                         'it is older than the installed os-traits'
                         % ', '.join(sorted(self.traits)))

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

"""Image-property isolation: reserved hosts get only the requests meant for
them. What asks for a reserved trait and what the others get is
doc/source/admin/isolation.rst's; the trait tags are read in Nova's own
spelling (``trait_grammar``).

Works on plain dicts and Nova's objects alike; nothing in a request
raises. A reserved trait Placement does not know yet is forbidden nowhere
(naming it would make every query a 400).
"""

import dataclasses
import re

from image_type_common import exceptions
from image_type_common import text
from image_type_common import trait_names
from image_type_filter import exceptions as filter_exceptions
from image_type_filter.scheduler import spec_fields
from image_type_filter.scheduler import trait_grammar

RULE = re.compile(r'^(?P<key>[^=:]+?)\s*(?:=\s*(?P<value>[^:]*?))?\s*:\s*'
                  r'(?P<trait>[^:]+)$')


@dataclasses.dataclass(frozen=True)
class Rule:
    """A reserved trait, and the image property that asks for it if any."""

    trait: str
    key: str = None
    value: str = None

    def matches(self, properties):
        if self.key is None:
            return False
        found = spec_fields.field(properties, self.key)
        if found is None:
            return False
        return self.value is None or str(found).strip().lower() == \
            self.value.lower()

    def __str__(self):
        if self.key is None:
            return self.trait
        key = self.key if self.value is None else '%s=%s' % (self.key,
                                                              self.value)
        return '%s:%s' % (key, self.trait)


def parse_rules(entries, property_names=None):
    """Parse ``[image_isolation] rules``; ConfigError naming the bad one,
    or one keyed on an image property not in ``property_names`` (those
    Nova keeps)."""
    rules = []
    for entry in entries:
        entry = entry.strip()
        if trait_names.is_custom(entry):
            rules.append(Rule(entry))
            continue
        match = RULE.match(entry)
        trait = match.group('trait').strip() if match else ''
        if not match or not trait_names.is_custom(trait):
            raise exceptions.ConfigError(
                '[image_isolation] rules: %s is not CUSTOM_TRAIT or '
                'KEY[=VALUE]:CUSTOM_TRAIT' % text.safe_repr(entry))
        rule = Rule(trait, match.group('key').strip(), match.group('value'))
        if property_names is not None and rule.key not in property_names:
            raise exceptions.ConfigError(
                '[image_isolation] rules: %s keys on image property %s, '
                'which Nova drops before scheduling; tag the image (or '
                'flavor) with trait:%s=required and make the rule %s'
                % (text.safe_repr(str(rule)), text.safe_repr(rule.key),
                   trait, trait))
        rules.append(rule)
    return tuple(rules)


class IsolateImageProperties:
    """The isolation filter, image-property isolation's request filter
    (configured in ``[image_isolation]``; the pipeline's log names it
    ``isolate_image_properties``): require or forbid each reserved trait,
    per request."""

    name = 'isolate_image_properties'

    def __init__(self, settings, catalog=None, image_property_names=None):
        self.enabled = settings.isolation_enabled
        self.rules = parse_rules(settings.isolation_rules,
                                 image_property_names)
        self.traits = sorted({r.trait for r in self.rules})
        self.catalog = catalog
        if self.catalog is not None and self.enabled:
            # Known from the first request on: "!CUSTOM_X" is then always
            # a valid query, whichever service starts first.
            self.catalog.ensure(self.traits)

    def asked_for(self, request_spec):
        """The reserved traits this request asks for: by a rule on an image
        property, or by a trait tag on the image or flavor, each in its own
        grammar as Nova reads it (``trait_grammar``)."""
        properties = spec_fields.image_properties(request_spec)
        asked = {r.trait for r in self.rules if r.matches(properties)}
        tagged = (trait_grammar.image_required_traits(properties)
                  | trait_grammar.flavor_required_traits(
                      spec_fields.extra_specs(request_spec)))
        return asked | (tagged & set(self.traits))

    def __call__(self, ctxt, request_spec):
        if not self.enabled or not self.rules:
            return False
        asked = self.asked_for(request_spec)
        known = (self.catalog.known(self.traits) if self.catalog
                 else set(self.traits))
        if asked - known and self.catalog is not None:
            # Refuse only on a fresh answer: the reporter may have just
            # created the trait.
            known |= self.catalog.known(asked - known, fresh=True)
        unknown = sorted(asked - known)
        if unknown:
            raise filter_exceptions.NoValidHost(
                'the request asks for reserved trait(s) %s, which Placement '
                'does not know yet, so no host carries them'
                % ', '.join(unknown))
        nobody = sorted((self.catalog.uncarried(asked) or ())
                        if self.catalog is not None and asked else ())
        if nobody:
            raise filter_exceptions.NoValidHost(
                'No compute host carries reserved trait(s) %s, which the '
                'image or flavor requires (%s).'
                % (', '.join(nobody), '; '.join(
                    self.describe_trait(t) for t in nobody)))
        for trait in self.traits:
            if trait in asked:
                request_spec.root_required.add(trait)
            elif trait in known:
                request_spec.root_forbidden.add(trait)
        return True

    def describe_trait(self, trait, request_spec=None):
        rules = [str(r) for r in self.rules if r.trait == trait]
        if not rules:
            return None
        return 'image_isolation rule %s' % ', '.join(rules)

"""Image-property isolation: reserved hosts get only their images.

Each rule maps an image property to a CUSTOM trait. A matching image
requires the trait on the root provider; every other image forbids it. So
tagged images go only to tagged hosts, and nothing else lands there, which
AggregateImagePropertiesIsolation (an untagged image matches anything) and
flavor extra specs cannot do.
"""

import dataclasses
import re

from image_type_common import exceptions
from image_type_common import trait_names

RULE = re.compile(r'^(?P<key>[^=:]+?)\s*(?:=\s*(?P<value>[^:]*?))?\s*:\s*'
                  r'(?P<trait>[^:]+)$')


@dataclasses.dataclass(frozen=True)
class Rule:
    key: str
    value: str
    trait: str

    def matches(self, properties):
        found = _property(properties, self.key)
        if found is None:
            return False
        return self.value is None or str(found).strip().lower() == \
            self.value.lower()

    def __str__(self):
        key = self.key if self.value is None else '%s=%s' % (self.key,
                                                              self.value)
        return '%s:%s' % (key, self.trait)


def _property(properties, key):
    if properties is None:
        return None
    if hasattr(properties, 'get'):
        return properties.get(key)
    return getattr(properties, key, None)  # Nova's ImageMetaProps


def parse_rules(entries):
    rules = []
    for entry in entries:
        match = RULE.match(entry.strip())
        trait = match.group('trait').strip() if match else ''
        if not match or not trait_names.is_custom(trait):
            raise exceptions.ConfigError(
                '[image_isolation] rules: %r is not KEY[=VALUE]:CUSTOM_TRAIT'
                % entry)
        rules.append(Rule(match.group('key').strip(), match.group('value'),
                          trait))
    return tuple(rules)


class IsolateImageProperties:
    """Request filter: require or forbid each rule's trait, per image."""

    name = 'isolate_image_properties'

    def __init__(self, conf):
        self.conf = conf
        self.enabled = conf.image_isolation.enabled
        self.rules = parse_rules(conf.image_isolation.rules)
        self.traits = sorted({r.trait for r in self.rules})

    def __call__(self, ctxt, request_spec):
        if not self.enabled or not self.rules:
            return False
        image = getattr(request_spec, 'image', None)
        properties = getattr(image, 'properties', None) if image else None
        matched = {r.trait for r in self.rules if r.matches(properties)}
        for trait in self.traits:
            if trait in matched:
                request_spec.root_required.add(trait)
            else:
                request_spec.root_forbidden.add(trait)
        return True

    def describe_trait(self, trait):
        rules = [str(r) for r in self.rules if r.trait == trait]
        if not rules:
            return None
        return 'image_isolation rule %s' % ', '.join(rules)

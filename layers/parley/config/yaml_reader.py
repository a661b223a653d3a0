"""The operator configuration's YAML reader: PyYAML's safe loader, refusing a key written twice (a second
value would silently win). PyYAML is imported when there is text to read, not at import."""

from __future__ import annotations

import functools
from typing import Any

from parley.errors import ParleyError


class NotYaml(ParleyError, ValueError):
    """The text is not YAML; the message is PyYAML's."""


def read_yaml(text: str) -> Any:
    import yaml  # imported when there is text to read

    try:
        return yaml.load(text, Loader=strict_loader())
    except yaml.YAMLError as exc:
        raise NotYaml(str(exc)) from exc


@functools.cache
def strict_loader() -> Any:
    """PyYAML's safe loader, refusing duplicate keys (a second value would silently win)."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        pass

    def construct_mapping(loader: StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        keys: set[Any] = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            if key in keys:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            keys.add(key)
        return dict(loader.construct_mapping(node, deep=deep))

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return StrictLoader


__all__ = ["NotYaml", "read_yaml", "strict_loader"]

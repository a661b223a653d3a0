"""The model providers' secrets (``http-api.md``, "Model providers").

On AWS a provider's key is never in the operator configuration: the value is a reference in the form of a
CloudFormation dynamic reference, as a tool server's header value is (``parley.tools.servers``)::

    models:
      providers:
        anthropic: { ANTHROPIC_API_KEY: "{{resolve:secretsmanager:anthropic-key}}" }
      gateways:
        - { name: internal, base_url: "https://llm.example/v1",
            api_key: "{{resolve:secretsmanager:llm-keys:SecretString:internal}}" }

:func:`resolver_for` gives the ``resolve`` that the provider adapters call on each configured value when
they send (``call_model``, ``list_provider_models``): a reference is read through the runtime's Secrets
Manager client and kept five minutes; any other value comes back unchanged. The reading and the keeping are
the tool servers' own (:class:`~parley.tools.servers.HeaderSecrets`). A secret that cannot be read raises
:class:`~parley.tools.servers.SecretUnavailable`, whose words name the secret (its name or ARN, and its
key), never a value.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from parley.tools.servers import HeaderSecrets, SecretUnavailable

if TYPE_CHECKING:
    from parley.ports.runtime import Runtime

__all__ = ["SecretUnavailable", "resolver_for"]

#: How a value is named in the words of :class:`SecretUnavailable`.
WHERE: Final = "a model provider's setting"
#: The Secrets Manager clients whose secrets are kept: one per runtime in a function; a few in tests.
_MOST_CLIENTS: Final = 16

_readers: OrderedDict[Any, HeaderSecrets] = OrderedDict()
_lock = threading.Lock()


def resolver_for(runtime: Runtime) -> Callable[[str], str]:
    """The provider settings' resolver of ``runtime``: a value holding ``{{resolve:secretsmanager:<name or
    ARN>[:SecretString:<key>]}}`` comes back with the secret in the reference's place (read through
    ``runtime.secretsmanager``, kept five minutes across calls); any other value comes back unchanged.
    :class:`SecretUnavailable` when a referenced secret cannot be read."""
    secrets = _reader(runtime.secretsmanager)

    def resolve(value: str) -> str:
        resolved, _ = secrets.expand(value, WHERE)
        return resolved

    return resolve


def _reader(client: Any) -> HeaderSecrets:
    """The one reader of ``client``, so that what it read is kept from one call (one run, one list) to the
    next; a client that cannot be a key gets a reader of its own."""
    try:
        hash(client)
    except TypeError:
        return HeaderSecrets(client)
    with _lock:
        reader = _readers.get(client)
        if reader is None:
            reader = _readers[client] = HeaderSecrets(client)
            while len(_readers) > _MOST_CLIENTS:
                _readers.popitem(last=False)
        else:
            _readers.move_to_end(client)
        return reader

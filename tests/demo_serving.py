"""``parley serve`` with ``examples/operator-demo.yaml`` as shipped, the demo chat and the demo model
beside it (in this process, on free ports, the configuration's URLs moved to them): what ``make demo``
serves, for the tests of the examples and of the README's walk-throughs that use them (issue 29)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from tool_serving import serving_manually

from parley.demo.chat import Chat
from parley.demo.model import DemoModelOptions
from parley.demo.model import running as demo_model
from parley.demo.server import DemoChatOptions
from parley.demo.server import running as demo_chat

ROOT = Path(__file__).resolve().parents[1]
DEMO_CONFIG = ROOT / "examples" / "operator-demo.yaml"


@dataclass
class Demo:
    url: str
    """Parley's address."""
    chat: Chat
    """The demo chat's messages."""
    log: Path
    chat_port: int = 0
    """The demo chat's port (what ``parley demo-chat reply --port`` takes)."""


def demo_config(chat_url: str, model_url: str) -> str:
    """``examples/operator-demo.yaml`` as shipped, its chat and model moved to where they listen."""
    text = DEMO_CONFIG.read_text(encoding="utf-8")
    assert "http://127.0.0.1:9001/mcp" in text and "http://127.0.0.1:9100/v1" in text
    return text.replace("http://127.0.0.1:9001", chat_url).replace("http://127.0.0.1:9100", model_url)


@contextmanager
def serving_demo(tmp: Path) -> Iterator[Demo]:
    """The demo: Parley (``--clock manual``, no data kept), the chat and the model."""
    with ExitStack() as stack:
        chat = stack.enter_context(demo_chat(DemoChatOptions(port=0)))
        model = stack.enter_context(demo_model(DemoModelOptions(port=0)))
        config = tmp / "operator-demo.yaml"
        config.write_text(demo_config(chat.url, model.url), encoding="utf-8")
        url = stack.enter_context(serving_manually(config, tmp / "serve.log"))
        yield Demo(url, chat.chat, tmp / "serve.log", chat.port)

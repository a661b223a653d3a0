"""``GET /docs``: one static page that renders ``openapi.json`` for a browser.

No third-party origin and no build step: its script and style are inline, allowed by their hashes in a
strict Content-Security-Policy; it fetches the description from the same origin (a relative URL, so it
works under an API Gateway stage) and builds the page with DOM calls only (no HTML from the
description is ever parsed). Its colors, light and dark, keep text at WCAG AA contrast (4.5:1); the
browser tests check the page with axe-core.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from collections.abc import Mapping
from typing import Final

_STYLE: Final = """
:root { color-scheme: light dark; --bg: #ffffff; --text: #1f2328; --muted: #5b636e; --line: #d1d5db;
  --link: #1d4ed8; --get: #1d4ed8; --post: #047857; --put: #b45309; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #111418; --text: #e6e9ee; --muted: #a3acb9; --line: #3a424d; --link: #8ab4ff;
    --get: #8ab4ff; --post: #4cd49a; --put: #f5b454; }
}
html { background: var(--bg); color: var(--text); }
body { font: 15px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 62rem; padding: 1rem; }
a { color: var(--link); }
h1 { margin-bottom: .25rem; } h2 { margin-top: 2rem; border-bottom: 1px solid var(--line); }
p.intro { white-space: pre-wrap; color: var(--muted); }
details { border: 1px solid var(--line); border-radius: .4rem; margin: .5rem 0; padding: .4rem .7rem; }
summary { cursor: pointer; } summary code { font-size: .95em; }
.method { display: inline-block; min-width: 3.5rem; font-weight: 700; }
.GET { color: var(--get); } .POST { color: var(--post); } .PUT { color: var(--put); }
table { border-collapse: collapse; width: 100%; margin: .5rem 0; }
th, td { text-align: left; border-top: 1px solid var(--line); padding: .25rem .4rem; vertical-align: top; }
pre { overflow-x: auto; background: rgba(127, 127, 127, .12); padding: .5rem; border-radius: .3rem; }
.muted { color: var(--muted); }
"""

_SCRIPT: Final = """
"use strict";
const main = document.getElementById("main");
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  for (const child of children) node.append(child instanceof Node ? child : String(child));
  return node;
}
function json(value) { return el("pre", {}, JSON.stringify(value, null, 2)); }
function resolve(doc, schema) {
  if (schema && schema.$ref) return resolve(doc, schema.$ref.split("/").slice(1).reduce((o, k) => o[k], doc));
  return schema;
}
function operation(doc, path, method, op) {
  const box = el("details", {id: op.operationId});
  box.append(el("summary", {}, el("span", {class: "method " + method.toUpperCase()}, method.toUpperCase()),
    el("code", {}, path), " ", el("span", {class: "muted"}, op.operationId + ": " + op.summary)));
  box.append(el("p", {}, op.description || ""));
  if (op.parameters && op.parameters.length) {
    const table = el("table", {}, el("tr", {}, el("th", {}, "Parameter"), el("th", {}, "In"),
      el("th", {}, "Schema"), el("th", {}, "Description")));
    for (const p of op.parameters) {
      table.append(el("tr", {}, el("td", {}, el("code", {}, p.name + (p.required ? "" : "?"))),
        el("td", {}, p.in), el("td", {}, el("code", {}, JSON.stringify(p.schema))),
        el("td", {}, p.description || "")));
    }
    box.append(table);
  }
  if (op.requestBody) {
    box.append(el("h4", {}, "Body" + (op.requestBody.required ? "" : " (optional)")));
    box.append(json(op.requestBody.content["application/json"].schema));
  }
  box.append(el("h4", {}, "Responses"));
  const table = el("table", {}, el("tr", {}, el("th", {}, "Status"), el("th", {}, "What")));
  for (const [status, response] of Object.entries(op.responses)) {
    const row = el("tr", {}, el("td", {}, status), el("td", {}, response.description || ""));
    table.append(row);
  }
  box.append(table);
  const success = Object.entries(op.responses).find(([status]) => status.startsWith("2"));
  if (success && success[1].content) {  // a 204 (remove_connection) has no body
    box.append(el("h4", {}, "Success body"));
    box.append(json(resolve(doc, success[1].content["application/json"].schema)));
  }
  return box;
}
fetch("openapi.json", {headers: {Accept: "application/json"}})
  .then((response) => {
    if (!response.ok) throw new Error("HTTP " + response.status);
    return response.json();
  })
  .then((doc) => {
    main.replaceChildren();
    document.title = doc.info.title + " API";
    main.append(el("h1", {}, doc.info.title + " API"), el("p", {class: "muted"}, "OpenAPI " + doc.openapi +
      ", version " + doc.info.version + " · ", el("a", {href: "openapi.json"}, "openapi.json")));
    main.append(el("p", {class: "intro"}, doc.info.description || ""));
    const byTag = new Map((doc.tags || []).map((t) => [t.name, []]));
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const tag = (op.tags || ["Other"])[0];
        if (!byTag.has(tag)) byTag.set(tag, []);
        byTag.get(tag).push([path, method, op]);
      }
    }
    for (const [tag, ops] of byTag) {
      main.append(el("h2", {}, tag));
      for (const [path, method, op] of ops) main.append(operation(doc, path, method, op));
    }
  })
  .catch((error) => {
    main.replaceChildren(el("p", {}, "The description could not be read: " + error.message));
  });
"""

_PAGE: Final = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Parley API</title>
<style>{style}</style>
</head>
<body>
<main id="main"><p>Reading <a href="openapi.json">openapi.json</a>…</p></main>
<script>{script}</script>
</body>
</html>
"""


def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


@functools.cache
def docs_page() -> tuple[str, Mapping[str, str]]:
    """The page and its headers (a Content-Security-Policy allowing only its own script and style)."""
    policy = "; ".join(
        [
            "default-src 'none'",
            f"script-src {_digest(_SCRIPT)}",
            f"style-src {_digest(_STYLE)}",
            "connect-src 'self'",
            "img-src 'self'",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        ]
    )
    headers = {
        "Content-Security-Policy": policy,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-cache",
    }
    return _PAGE.format(style=_STYLE, script=_SCRIPT), headers

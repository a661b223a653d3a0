"""The demo chat's page: plain HTML and a little JavaScript, no build step and nothing fetched from
elsewhere. It reads ``GET /api/channels`` every two seconds and posts replies with ``POST /api/reply``."""

from __future__ import annotations

from typing import Final

PAGE: Final = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Parley demo chat</title>
<style>
  body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #f5f5f7; }
  header { background: #1d1d1f; color: #fff; padding: .6rem 1rem; }
  header small { color: #aaa; margin-left: .6rem; }
  main { display: flex; gap: 1rem; padding: 1rem; align-items: flex-start; }
  #channels { flex: 2; }
  #composer { flex: 1; position: sticky; top: 1rem; background: #fff; border-radius: 8px; padding: 1rem;
              box-shadow: 0 1px 3px #0002; }
  .channel { background: #fff; border-radius: 8px; padding: .5rem 1rem 1rem; margin-bottom: 1rem;
             box-shadow: 0 1px 3px #0002; }
  .channel h2 { font-size: 1.05rem; margin: .4rem 0; }
  .thread { border-left: 3px solid #ccd; padding: .2rem .6rem; margin: .6rem 0; }
  .thread.selected { border-color: #0a66c2; background: #eef5fd; }
  .msg { margin: .25rem 0; }
  .msg .text p { margin: .2rem 0; }
  .msg .user { font-weight: 600; }
  .msg .ts { color: #888; font-size: .8rem; margin-left: .4rem; }
  .replies { margin-left: 1.2rem; }
  button { cursor: pointer; }
  label { display: block; margin: .5rem 0 .2rem; font-weight: 600; }
  input, textarea { width: 100%; box-sizing: border-box; font: inherit; padding: .3rem; }
  #status { color: #a00; min-height: 1.4em; }
  .empty { color: #777; }
</style>
</head>
<body>
<header>Parley demo chat <small>MCP endpoint: <code id="mcp"></code></small></header>
<main>
  <section id="channels"><p class="empty">Loading…</p></section>
  <aside id="composer">
    <strong>Reply in a thread</strong>
    <p id="target" class="empty">Choose “Reply” under a message.</p>
    <form id="form">
      <label for="user">As user</label>
      <input id="user" name="user" value="maria" autocomplete="off" required>
      <label for="text">Reply</label>
      <textarea id="text" name="text" rows="4" placeholder="approve, looks good" required></textarea>
      <p><button id="send" type="submit" disabled>Send reply</button></p>
      <p id="status"></p>
    </form>
  </aside>
</main>
<script src="/markdown-it.min.js"></script>
<script>
"use strict";
// Messages are Markdown, rendered as the web inbox does: raw HTML off, so a message never runs a script.
const markdown = window.markdownit({html: false, linkify: false});
let selected = null;   // {channel, ts}
let shown = "";
const $ = (id) => document.getElementById(id);
$("mcp").textContent = location.origin + "/mcp";
$("user").value = localStorage.getItem("demo-chat-user") || "maria";

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function message(m) {
  const node = el("div", "msg");
  const text = el("div", "text");
  text.innerHTML = markdown.render(m.text);
  node.append(el("span", "user", m.user), el("span", "ts", m.ts), text);
  return node;
}

function render(channels) {
  const root = $("channels");
  root.replaceChildren();
  if (channels.length === 0) {
    root.append(el("p", "empty", "No messages yet. A delivery through post_message shows up here."));
  }
  for (const c of channels) {
    const box = el("div", "channel");
    box.append(el("h2", "", "#" + c.channel));
    for (const t of c.threads) {
      const thread = el("div", "thread");
      const chosen = selected && selected.channel === c.channel && selected.ts === t.ts;
      if (chosen) thread.classList.add("selected");
      thread.append(message(t));
      const replies = el("div", "replies");
      for (const r of t.replies) replies.append(message(r));
      thread.append(replies);
      const button = el("button", "", "Reply");
      button.type = "button";
      button.onclick = () => { selected = {channel: c.channel, ts: t.ts}; shown = ""; refresh(); choose(); };
      thread.append(button);
      box.append(thread);
    }
    root.append(box);
  }
}

function choose() {
  $("target").textContent = selected ? "#" + selected.channel + ", thread " + selected.ts : "";
  $("send").disabled = !selected;
  $("text").focus();
}

async function refresh() {
  try {
    const response = await fetch("/api/channels", {cache: "no-store"});
    const text = await response.text();
    if (text !== shown) { shown = text; render(JSON.parse(text).channels); }
  } catch (error) {
    $("status").textContent = "The demo chat does not answer: " + error;
  }
}

$("form").onsubmit = async (event) => {
  event.preventDefault();
  if (!selected) return;
  const user = $("user").value.trim();
  localStorage.setItem("demo-chat-user", user);
  const response = await fetch("/api/reply", {
    method: "POST",
    headers: {"Content-Type": "application/json"},
    body: JSON.stringify({channel: selected.channel, thread: selected.ts, user, text: $("text").value}),
  });
  const body = await response.json();
  if (response.ok) { $("text").value = ""; $("status").textContent = ""; shown = ""; refresh(); }
  else { $("status").textContent = body.error || response.statusText; }
};

refresh();
setInterval(refresh, 2000);
</script>
</body>
</html>
"""

/* Parley inbox (http-api.md, "The web inbox"): the open requests of the playbooks the signed-in principal
 * may read, newest first, each with a form made from its answer_schema (or its question, or its approval).
 *
 * No build step, no framework, no third-party origin: plain DOM calls. The only HTML ever parsed is
 * markdown-it's output for a message, rendered with raw HTML off (so a <script> in a message is text), and
 * the page's Content-Security-Policy runs no script but this origin's files anyway.
 *
 * Every URL is relative to the page (…/inbox), so the page works under an API Gateway stage (/dev/inbox).
 *
 * What it reads, with the person's token only: GET v1/me (the grants), list_interactions (the requests),
 * get_definition once per function (its description titles the card), list_playbook_events with
 * run_id and type=activity_updated, limit 1 (an agent run's latest progress) and get_run (why a request
 * left); it sends answer_interaction. A request that arrives after the first listing is marked New and
 * counted in the tab's title until the person moves into it; an answer is checked before it is sent
 * (see "forms"), and the answered card says the decision in words (see "the decision, in words"), then
 * leaves.
 *
 * A second view, #connections (issue 32; see "connections"), shows the MCP servers people added to the
 * orgs of the person's grants, and adds, approves, authorizes and removes them. */
"use strict";

(() => {
  const TOKEN_KEY = "parley.inbox.token";
  const PKCE_KEY = "parley.inbox.pkce";
  const MAX_PAGES = 10;
  const SHORT_TEXT = 200;
  const BUTTON_ENUM_MAX = 5;
  // How long an answered card shows its decision before it leaves.
  const LEAVE_MS = 4000;
  const TITLE = "Parley inbox";

  const base = new URL(".", location.href);
  const pageUrl = location.origin + location.pathname;

  const markdown = window.markdownit({ html: false, linkify: false, typographer: false });
  const renderLinkOpen =
    markdown.renderer.rules.link_open ||
    ((tokens, index, options, env, self) => self.renderToken(tokens, index, options));
  markdown.renderer.rules.link_open = (tokens, index, options, env, self) => {
    tokens[index].attrSet("target", "_blank");
    tokens[index].attrSet("rel", "noopener noreferrer nofollow");
    return renderLinkOpen(tokens, index, options, env, self);
  };

  const state = {
    config: { cognito: null, refresh_seconds: 5 },
    token: null,
    me: null,
    cards: new Map(),
    // The functions' descriptions, by "org/playbook/type/name" (null: the definition has none).
    descriptions: new Map(),
    timer: null,
    refreshing: false,
    listed: false,
    // Which view shows: "requests" or "connections" (the address's #requests, #connections).
    view: "requests",
  };

  // --- small helpers ---------------------------------------------------------------------------------

  const $ = (id) => document.getElementById(id);
  let counter = 0;
  const uid = (prefix) => `${prefix}-${++counter}`;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === false || value === null || value === undefined) continue;
      node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  function describe(control, id) {
    const ids = (control.getAttribute("aria-describedby") || "").split(/\s+/).filter(Boolean);
    if (!ids.includes(id)) ids.push(id);
    control.setAttribute("aria-describedby", ids.join(" "));
  }

  function undescribe(control, id) {
    const ids = (control.getAttribute("aria-describedby") || "").split(/\s+/).filter((each) => each && each !== id);
    if (ids.length) control.setAttribute("aria-describedby", ids.join(" "));
    else control.removeAttribute("aria-describedby");
  }

  const escapeToken = (key) => String(key).replace(/~/g, "~0").replace(/\//g, "~1");
  const pointerOf = (parent, key) => `${parent}/${escapeToken(key)}`;
  const enc = encodeURIComponent;

  function humanize(name) {
    const words = String(name).replace(/[_-]+/g, " ").replace(/([a-z])([A-Z])/g, "$1 $2").trim();
    return words ? words[0].toUpperCase() + words.slice(1) : String(name);
  }

  function hash(text) {
    let value = 5381;
    for (let i = 0; i < text.length; i++) value = ((value << 5) + value + text.charCodeAt(i)) | 0;
    return (value >>> 0).toString(36);
  }

  const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  const relativeFormat = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

  /* "in 2 days", "3 minutes ago"; a time that should be past (``past``) but is ahead of this device's
   * clock (the two clocks differ) is "just now". */
  function relative(iso, past) {
    const seconds = (Date.parse(iso) - Date.now()) / 1000;
    if (past && seconds > -5) return "just now";
    const units = [
      ["year", 31536000],
      ["month", 2592000],
      ["week", 604800],
      ["day", 86400],
      ["hour", 3600],
      ["minute", 60],
    ];
    for (const [unit, size] of units) {
      if (Math.abs(seconds) >= size) return relativeFormat.format(Math.round(seconds / size), unit);
    }
    return relativeFormat.format(Math.round(seconds), "second");
  }

  function timeElement(iso, past) {
    const at = Date.parse(iso);
    if (Number.isNaN(at)) return el("span", {}, String(iso));
    return el("time", { datetime: iso, title: dateFormat.format(at) }, `${relative(iso, past)} (${dateFormat.format(at)})`);
  }

  function status(text) {
    $("status").textContent = text;
  }

  function announce(text) {
    const region = $("announce");
    region.textContent = "";
    // A change the screen reader hears even when the same words come twice.
    setTimeout(() => {
      region.textContent = text;
    }, 50);
  }

  function codePoints(text) {
    return Array.from(text).length;
  }

  // --- calls -----------------------------------------------------------------------------------------

  async function call(method, path, body) {
    const headers = { Accept: "application/json, application/problem+json" };
    if (state.token) headers.Authorization = `Bearer ${state.token}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await fetch(new URL(path, base), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: "no-store",
        credentials: "omit",
      });
    } catch (error) {
      return { ok: false, status: 0, body: { detail: "The server could not be reached; check your connection." } };
    }
    let data = null;
    try {
      data = await response.json();
    } catch (error) {
      data = null;
    }
    if (response.status === 401 && state.me) {
      signedOut("Your sign-in has ended: sign in again.");
    }
    return { ok: response.ok, status: response.status, body: data || {} };
  }

  const playbookPath = (org, playbook) => `v1/orgs/${enc(org)}/playbooks/${enc(playbook)}`;

  // --- signing in ------------------------------------------------------------------------------------

  function base64url(bytes) {
    let text = "";
    for (const byte of new Uint8Array(bytes)) text += String.fromCharCode(byte);
    return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function randomString(size) {
    const bytes = new Uint8Array(size);
    crypto.getRandomValues(bytes);
    return base64url(bytes);
  }

  async function beginHostedSignIn() {
    const cognito = state.config.cognito;
    const verifier = randomString(48);
    const nonce = randomString(24);
    // The view (#connections) is kept across the sign-in, whose redirect URI is the page without it.
    sessionStorage.setItem(PKCE_KEY, JSON.stringify({ verifier, state: nonce, view: location.hash }));
    const challenge = base64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
    const url = new URL("/oauth2/authorize", cognito.domain);
    url.search = new URLSearchParams({
      response_type: "code",
      client_id: cognito.client_id,
      redirect_uri: pageUrl,
      scope: (cognito.scopes || ["openid"]).join(" "),
      state: nonce,
      code_challenge: challenge,
      code_challenge_method: "S256",
    }).toString();
    location.assign(url.toString());
  }

  /* Back from the hosted sign-in with ?code=…&state=… (or ?error=…): exchange the code for tokens at the
   * domain's /oauth2/token with the PKCE verifier, and keep the ID token for this tab. */
  async function finishHostedSignIn(params) {
    const saved = JSON.parse(sessionStorage.getItem(PKCE_KEY) || "null");
    const view = saved && typeof saved.view === "string" && viewOf(saved.view) ? saved.view : "";
    history.replaceState(null, "", pageUrl + view);
    sessionStorage.removeItem(PKCE_KEY);
    if (params.has("error")) {
      return `The sign-in did not complete: ${params.get("error_description") || params.get("error")}.`;
    }
    if (!saved || saved.state !== params.get("state")) {
      return "The sign-in could not be checked (it was not started from this tab); sign in again.";
    }
    const cognito = state.config.cognito;
    let response;
    try {
      response = await fetch(new URL("/oauth2/token", cognito.domain), {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          client_id: cognito.client_id,
          code: params.get("code") || "",
          redirect_uri: pageUrl,
          code_verifier: saved.verifier,
        }).toString(),
        credentials: "omit",
        cache: "no-store",
      });
    } catch (error) {
      return "The sign-in service could not be reached; try again.";
    }
    const tokens = await response.json().catch(() => ({}));
    if (!response.ok || typeof tokens.id_token !== "string") {
      return `The sign-in was refused${tokens.error ? ` (${tokens.error})` : ""}; sign in again.`;
    }
    sessionStorage.setItem(TOKEN_KEY, tokens.id_token);
    return null;
  }

  /* The claims of a JWT (the hosted sign-in's ID token), only to show whom the page signed in; null for
   * any other token. The API checks the token; the page trusts nothing it reads here. */
  function tokenClaims(token) {
    const parts = String(token || "").split(".");
    if (parts.length !== 3) return null;
    try {
      const text = atob(parts[1].replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(parts[1].length / 4) * 4, "="));
      const claims = JSON.parse(new TextDecoder().decode(Uint8Array.from(text, (c) => c.charCodeAt(0))));
      return claims && typeof claims === "object" ? claims : null;
    } catch (error) {
      return null;
    }
  }

  function showSignIn(message) {
    stopRefreshing();
    $("inbox").hidden = true;
    $("connections-view").hidden = true;
    $("account").hidden = true;
    $("sign-in").hidden = false;
    const hosted = Boolean(state.config.cognito);
    $("hosted").hidden = !hosted;
    $("token-form").hidden = hosted;
    const error = hosted ? $("hosted-error") : $("token-error");
    error.hidden = !message;
    error.textContent = message || "";
    if (!hosted) {
      const input = $("token");
      if (message) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
      input.focus();
    } else {
      $("hosted-sign-in").focus();
    }
    status(hosted ? "Sign in to see what waits for you." : "Sign in with your bearer token.");
  }

  function signedOut(message) {
    sessionStorage.removeItem(TOKEN_KEY);
    state.token = null;
    state.me = null;
    state.listed = false;
    clearCards();
    clearConnections();
    showSignIn(message);
  }

  async function enter() {
    status("Signing in…");
    const reply = await call("GET", "v1/me");
    if (!reply.ok) {
      const words =
        reply.status === 401 ? "That token is not valid." : reply.body.detail || `The server answered ${reply.status}.`;
      signedOut(words);
      return;
    }
    state.me = reply.body;
    $("sign-in").hidden = true;
    $("account").hidden = false;
    state.view = viewOf(location.hash) || "requests";
    showView(state.view, false);
    const claims = tokenClaims(state.token);
    const shown = claims && (claims.email || claims["cognito:username"]);
    $("who").textContent = `Signed in as ${shown || state.me.id}`;
    $("who").title = `Principal ${state.me.id}`;
    await refresh();
    startRefreshing();
    // From the sign-in, the next Tab goes to the first request (or, in the connections' view, its title).
    if (!document.activeElement || document.activeElement === document.body) {
      (state.view === "connections" ? $("connections-title") : $("requests")).focus();
    }
  }

  function signOut() {
    const cognito = state.config.cognito;
    signedOut(null);
    announce("Signed out.");
    if (cognito) {
      const url = new URL("/logout", cognito.domain);
      url.search = new URLSearchParams({ client_id: cognito.client_id, logout_uri: pageUrl }).toString();
      location.assign(url.toString());
    }
  }

  // --- listing ---------------------------------------------------------------------------------------

  function playbooks() {
    const seen = new Map();
    for (const grant of (state.me && state.me.grants) || []) {
      if (!grant.playbook) continue; // an org's admin grant (connections) names no playbook
      const key = `${grant.org}/${grant.playbook}`;
      if (!seen.has(key) || grant.role === "write") seen.set(key, grant);
    }
    return [...seen.values()];
  }

  async function listPlaybook(grant) {
    const items = [];
    let cursor = null;
    for (let page = 0; page < MAX_PAGES; page++) {
      const query = new URLSearchParams({ limit: "100" });
      if (cursor) query.set("cursor", cursor);
      const reply = await call("GET", `${playbookPath(grant.org, grant.playbook)}/interactions?${query}`);
      if (!reply.ok) return { grant, ok: false, reply };
      items.push(...(reply.body.interactions || []));
      cursor = reply.body.next_cursor;
      if (!cursor) break;
    }
    return { grant, ok: true, items };
  }

  async function refresh() {
    if (state.refreshing || !state.me) return;
    state.refreshing = true;
    try {
      const results = await Promise.all(playbooks().map(listPlaybook));
      if (!state.me) return; // signed out meanwhile
      const entries = [];
      const failures = [];
      for (const result of results) {
        const { org, playbook, role } = result.grant;
        if (!result.ok) {
          if (result.reply.status === 401) return;
          failures.push(`${org}/${playbook}: ${result.reply.body.detail || `answered ${result.reply.status}`}`);
          continue;
        }
        for (const item of result.items) entries.push({ org, playbook, role, item });
      }
      // Complete lists only: a playbook that failed keeps its cards as they are.
      const failed = new Set(results.filter((r) => !r.ok).map((r) => `${r.grant.org}/${r.grant.playbook}`));
      await describeFunctions(entries);
      if (!state.me) return;
      reconcile(entries, failed);
      await updateProgress();
      const time = new Date().toLocaleTimeString();
      status(failures.length ? `Updated ${time}; could not list ${failures.join("; ")}` : `Updated ${time}.`);
    } finally {
      state.refreshing = false;
    }
  }

  const functionKey = (entry) => `${entry.org}/${entry.playbook}/${entry.item.type}/${entry.item.function}`;

  /* The card is titled by its function's description: get_definition (a reader may call it), once per
   * function and sign-in; a function whose definition cannot be read now is asked again next time. */
  async function describeFunctions(entries) {
    const wanted = new Map();
    for (const entry of entries) {
      const key = functionKey(entry);
      if (!state.descriptions.has(key)) wanted.set(key, entry);
    }
    await Promise.all(
      [...wanted].map(async ([key, entry]) => {
        const { org, playbook, item } = entry;
        const reply = await call("GET", `${playbookPath(org, playbook)}/definitions/${enc(item.type)}/${enc(item.function)}`);
        if (!reply.ok) return;
        const text = typeof reply.body.description === "string" ? reply.body.description.trim() : "";
        state.descriptions.set(key, text || null);
      })
    );
  }

  /* An agent run's latest progress (agent-runs.md, "Progress"): its newest activity_updated event, read
   * with list_playbook_events (newest first, one), each time the list is read. */
  async function updateProgress() {
    const agents = [...state.cards.values()].filter((card) => card.entry.item.type === "reasoning" && !card.gone);
    await Promise.all(
      agents.map(async (card) => {
        const { org, playbook, item } = card.entry;
        const query = new URLSearchParams({ run_id: item.run_id, type: "activity_updated", limit: "1" });
        const reply = await call("GET", `${playbookPath(org, playbook)}/events?${query}`);
        const event = reply.ok && (reply.body.events || [])[0];
        if (!event || !event.data || typeof event.data.message !== "string") return;
        card.progress.hidden = false; // drawn again each time, so that "2 minutes ago" stays true
        card.progress.replaceChildren(
          el("span", { class: "progress-label" }, "Latest progress: "),
          event.data.message,
          " ",
          el("time", { class: "progress-when", datetime: event.at, title: dateFormat.format(Date.parse(event.at)) }, relative(event.at, true))
        );
      })
    );
  }

  function startRefreshing() {
    stopRefreshing();
    const seconds = Math.max(2, Number(state.config.refresh_seconds) || 5);
    // A hidden tab lists less often (every third time), still enough for its title to tell of new requests.
    let ticks = 0;
    state.timer = setInterval(() => {
      ticks += 1;
      if (!document.hidden || ticks % 3 === 0) refresh();
      // The connections' view lists again every third time, while it shows (an approval made elsewhere).
      if (!document.hidden && state.view === "connections" && ticks % 3 === 0) refreshConnections();
    }, seconds * 1000);
  }

  function stopRefreshing() {
    if (state.timer) clearInterval(state.timer);
    state.timer = null;
  }

  function keyOf(org, playbook, item) {
    const asked = JSON.stringify(item.question || item.approval || null);
    return [org, playbook, item.run_id, item.requested_at, hash(`${item.message}\u0000${asked}`)].join("|");
  }

  function reconcile(entries, failed) {
    entries.sort((a, b) => String(b.item.requested_at).localeCompare(String(a.item.requested_at)));
    const seen = new Set();
    const arrived = [];
    for (const entry of entries) {
      const key = keyOf(entry.org, entry.playbook, entry.item);
      seen.add(key);
      const known = state.cards.get(key);
      if (known) {
        known.entry = entry;
        updateMeta(known);
      } else {
        // A request that comes after the first listing is new: marked, and counted in the tab's title.
        const card = buildCard(entry, key, state.listed);
        state.cards.set(key, card);
        insertCard(card);
        arrived.push(card.title);
      }
    }
    if (state.listed && arrived.length) {
      announce(`${arrived.length === 1 ? "A new request" : `${arrived.length} new requests`}: ${arrived.join(", ")}.`);
    }
    state.listed = true;
    for (const [key, card] of [...state.cards]) {
      if (seen.has(key) || failed.has(`${card.entry.org}/${card.entry.playbook}`)) continue;
      if (card.done) {
        if (!card.li.contains(document.activeElement)) removeCard(card);
      } else if (!card.gone) {
        markGone(card);
      }
    }
    updateCount();
  }

  function insertCard(card) {
    const list = $("requests");
    const at = card.entry.item.requested_at;
    for (const node of list.children) {
      const other = state.cards.get(node.dataset.key);
      if (other && String(other.entry.item.requested_at) < String(at)) {
        list.insertBefore(card.li, node);
        return;
      }
    }
    list.append(card.li);
  }

  function removeCard(card) {
    card.li.remove();
    state.cards.delete(card.key);
    updateCount();
  }

  function clearCards() {
    state.cards.clear();
    $("requests").replaceChildren();
    updateCount();
  }

  /* The heading counts the requests still waiting (an answered card or one no longer waiting does not
   * count); the tab's title counts the new ones, those that came while the page was open and that the
   * person has not yet looked at (moved into, clicked or answered). */
  function updateCount() {
    const open = [...state.cards.values()].filter((card) => !card.done && !card.gone);
    $("count").textContent = open.length ? `(${open.length})` : "";
    $("empty").hidden = state.cards.size > 0;
    const fresh = open.filter((card) => card.fresh).length;
    document.title = fresh ? `(${fresh}) ${TITLE}` : TITLE;
  }

  function markSeen(card) {
    if (!card.fresh) return;
    card.fresh = false;
    card.li.classList.remove("is-new");
    if (card.newMark) card.newMark.remove();
    updateCount();
  }

  /* A card whose request left the list (answered elsewhere, expired, cancelled, or a notification
   * delivered) says so; it stays, with what was typed, until dismissed, except a notification, which has
   * nothing to keep and leaves after a moment. */
  async function markGone(card) {
    card.gone = true;
    card.li.classList.add("is-gone");
    card.setEnabled(false);
    updateCount();
    const item = card.entry.item;
    const notification = card.kind === "notification";
    let words = notification ? "It left the inbox." : "It was answered elsewhere.";
    if (Date.parse(item.expires_at) <= Date.now()) {
      words = "It expired.";
    } else {
      const reply = await call("GET", `${playbookPath(card.entry.org, card.entry.playbook)}/runs/${enc(item.run_id)}`);
      const run = reply.ok ? reply.body : {};
      const rejection = run.rejection;
      if (rejection && rejection.reason === "cancelled") words = "Its run was cancelled.";
      else if (rejection && rejection.reason === "unanswered") words = "It expired.";
      else if (notification && run.status === "succeeded") words = "It was delivered.";
      else if (notification && rejection) words = "It could not be delivered.";
    }
    const notice = el("p", { class: "gone", role: "status" }, `No longer waiting: ${words} `);
    if (notification) {
      setTimeout(() => leave(card), LEAVE_MS);
    } else {
      const dismiss = el("button", { type: "button", class: "dismiss" }, "Dismiss");
      dismiss.addEventListener("click", () => {
        const next = card.li.nextElementSibling || card.li.previousElementSibling;
        removeCard(card);
        focusCard(next);
      });
      notice.append(dismiss);
    }
    card.article.append(notice);
    announce(`${card.title}: no longer waiting. ${words}`);
  }


  function focusCard(li) {
    if (!li) {
      $("requests").focus();
      return;
    }
    const target = li.querySelector("input:not(:disabled), textarea:not(:disabled), select:not(:disabled), button");
    (target || $("requests")).focus();
  }

  // --- a card ----------------------------------------------------------------------------------------

  const STANDINGS = {
    in_inbox: "in the inbox",
    to_deliver: "to be delivered",
    delivering: "being delivered",
    delivered: "delivered",
    retrying: "delivery retrying",
    undelivered: "not delivered",
    cancelling: "being cancelled",
  };

  function kindOf(item) {
    if (!item.takes_answer) return "notification";
    if (item.approval) return "approval";
    if (item.question) return "question";
    return "request";
  }

  function metaLines(entry) {
    const item = entry.item;
    const who = el(
      "p",
      { class: "meta" },
      el("code", { class: "name" }, item.function),
      el("span", {}, item.type === "reasoning" ? "Agent run" : "Interaction function"),
      el("span", {}, `version ${item.version}`),
      el("span", {}, `${entry.org}/${entry.playbook}`),
      item.to ? el("span", {}, `to ${item.to}`) : null
    );
    const standing = el(
      "span",
      { class: `standing standing-${item.standing}` },
      STANDINGS[item.standing] || String(item.standing).replace(/_/g, " ")
    );
    const when = el(
      "p",
      { class: "meta" },
      el("span", {}, "asked ", timeElement(item.requested_at, true)),
      el("span", {}, "expires ", timeElement(item.expires_at)),
      standing,
      item.delivery ? el("span", {}, `through ${item.delivery.server}/${item.delivery.tool}`) : null,
      item.attempts ? el("span", {}, `${item.attempts} attempt${item.attempts === 1 ? "" : "s"}`) : null
    );
    return [who, when];
  }

  function updateMeta(card) {
    const [who, when] = metaLines(card.entry);
    card.who.replaceWith(who);
    card.when.replaceWith(when);
    card.who = who;
    card.when = when;
  }

  /* A card: the function's description as its title (its name when it has none), the name beneath with
   * who asked, when and how the delivery stands, an agent run's latest progress, the message, and the
   * form. */
  function buildCard(entry, key, fresh) {
    const item = entry.item;
    const kind = kindOf(item);
    const titleId = uid("title");
    const li = el("li", { "data-key": key, "data-run-id": item.run_id, "data-kind": kind, class: fresh ? "is-new" : null });
    const article = el("article", { class: "card", "aria-labelledby": titleId });
    const labels = { notification: "Notification", approval: "Approval", question: "Question", request: "Request" };
    const heading = state.descriptions.get(functionKey(entry)) || item.function;
    const newMark = fresh ? el("span", { class: "new" }, "New") : null;
    const title = el("h3", { id: titleId }, el("span", { class: "kind" }, labels[kind]), newMark, el("span", { class: "title" }, heading));
    const [who, when] = metaLines(entry);
    const progress = el("p", { class: "progress", hidden: true });
    const message = el("div", { class: "message" });
    message.innerHTML = markdown.render(String(item.message || ""));
    article.append(el("header", {}, title, who, when, progress), message);
    li.append(article);
    const card = {
      key, entry, li, article, who, when, progress, kind, fresh, newMark,
      title: heading, done: false, gone: false, setEnabled: () => {},
    };
    li.addEventListener("focusin", () => markSeen(card));
    li.addEventListener("pointerdown", () => markSeen(card));
    if (kind === "notification") {
      article.append(el("p", { class: "info" }, "For your information: nothing to answer."));
    } else {
      buildAnswerForm(card, kind);
    }
    return card;
  }

  // --- forms -----------------------------------------------------------------------------------------
  //
  // Each field is {node, read(problems)}: read() gives the value (undefined leaves the member out) and
  // adds to `problems` ({pointer, detail}) what the answer schema would refuse, in words for a person, so
  // that nothing is sent before it passes the same checks the server makes (required, enum, bounds,
  // lengths, patterns, formats). What the page cannot check the server still does; its 422 is shown
  // beside the field its pointer names.

  const numberFormat = new Intl.NumberFormat();
  const fmt = (value) => numberFormat.format(value);

  /* "Verdict" → "verdict" (a title's first letter lowered unless it starts an acronym). */
  function nounOf(title) {
    const text = String(title);
    return /^[A-Z][a-z]/.test(text) ? text[0].toLowerCase() + text.slice(1) : text;
  }

  const withArticle = (noun) => `${/^[aeiou]/i.test(noun) ? "an" : "a"} ${noun}`;

  /* "channels" → "channel", "categories" → "category": for "Choose at least one channel". */
  function singular(noun) {
    if (/ies$/.test(noun)) return `${noun.slice(0, -3)}y`;
    if (/(ss|us|is)$/.test(noun)) return noun;
    if (/s$/.test(noun)) return noun.slice(0, -1);
    return noun;
  }

  /* Inputs for a string's format: a date picker, a date and time in the person's time zone, an email
   * address, a web address. Any other format is a one-line text field. */
  const FORMATS = {
    date: { type: "date", words: "A date, such as 2026-03-03", missing: "Choose a date" },
    "date-time": { type: "datetime-local", words: "A date and time", missing: "Choose a date and time" },
    email: { type: "email", words: "An email address, such as maria@example.com", autocomplete: "email" },
    uri: { type: "url", words: "A full web address, with its https: at the start", autocomplete: "url" },
  };

  /* datetime-local gives "2026-03-03T10:00" in the device's time zone; the answer is RFC 3339 in UTC. */
  function isoFromLocal(value) {
    const at = new Date(value);
    return Number.isNaN(at.getTime()) ? value : at.toISOString().replace(/\.000Z$/, "Z");
  }

  function localFromIso(value) {
    const at = new Date(value);
    if (Number.isNaN(at.getTime())) return "";
    const pad = (n) => String(n).padStart(2, "0");
    return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
  }

  /* The server's words for what its checks refused (the answer schema's validator, in
   * parley.documents.json_schema), said as the page says its own: "Expected at least 1000" → "At least
   * 1,000", "Expected at least 1 properties" → "Fill in at least one field", a blank text refused by its
   * "\S" pattern → "Write something, not only spaces". Anything else is shown as the server wrote it. */
  function inWords(detail) {
    const text = String(detail);
    const number = (value) => (Number.isFinite(Number(value)) ? fmt(Number(value)) : value);
    let found = text.match(/^Expected (at least|at most) (\d+) properties$/);
    if (found) {
      const count = Number(found[2]);
      return `Fill in ${found[1]} ${count === 1 ? "one field" : `${fmt(count)} fields`}`;
    }
    found = text.match(/^Expected (at least|at most) (\d+) (characters|items)$/);
    if (found) {
      const what = found[3] === "items" ? "choices" : "characters";
      return `${found[1] === "at least" ? "At least" : "At most"} ${fmt(Number(found[2]))} ${what}`;
    }
    found = text.match(/^Expected (at least|at most|more than|less than|a multiple of) (-?[\d.eE+-]+)$/);
    if (found) return `${found[1][0].toUpperCase()}${found[1].slice(1)} ${number(found[2])}`;
    found = text.match(/^Expected one of (.+)$/);
    if (found) return `Choose one of ${found[1]}`;
    if (/^Missing required property /.test(text)) return "This is needed";
    if (text === "Expected items that are all different") return "Choose each one once";
    if (/ does not match '\\{1,2}S'$/.test(text)) return "Write something, not only spaces";
    return text;
  }

  /* Where a problem's pointer is shown: each field registers its pointer; an error goes to the field with
   * the longest pointer that is the error's or one of its parents, else to the form as a whole. Changing
   * a field takes its problem away. */
  class Slots {
    constructor(formError) {
      this.slots = [];
      this.formError = formError;
    }

    add(pointer, control, container) {
      const message = el("p", { class: "field-error", id: uid("error"), hidden: true });
      container.append(message);
      const slot = { pointer, control, message };
      this.slots.push(slot);
      const forget = () => this.clearSlot(slot);
      container.addEventListener("input", forget);
      container.addEventListener("change", forget);
      container.addEventListener("click", (event) => {
        if (event.target.closest && event.target.closest("button")) forget();
      });
      return slot;
    }

    /* A field that left the form (a header's row removed). */
    drop(slot) {
      this.clearSlot(slot);
      this.slots = this.slots.filter((each) => each !== slot);
    }

    find(pointer, detail) {
      let best = null;
      for (const slot of this.slots) {
        if (pointer === slot.pointer || pointer.startsWith(`${slot.pointer}/`)) {
          if (!best || slot.pointer.length > best.pointer.length) best = slot;
        }
      }
      if (best && best.pointer === pointer) return best;
      // A missing member is reported at its parent ("/answer": required property "decision"): when the
      // words quote exactly one field right under the pointer, that field is where it belongs.
      const quoted = this.slots.filter((slot) => {
        if (!slot.pointer.startsWith(`${pointer}/`)) return false;
        const rest = slot.pointer.slice(pointer.length + 1);
        if (rest.includes("/")) return false;
        const name = rest.replace(/~1/g, "/").replace(/~0/g, "~");
        return [`"${name}"`, `'${name}'`, `\`${name}\``].some((form) => String(detail).includes(form));
      });
      return quoted.length === 1 ? quoted[0] : best;
    }

    clearSlot(slot) {
      if (slot.message.hidden) return;
      slot.message.hidden = true;
      slot.message.textContent = "";
      slot.control.removeAttribute("aria-invalid");
      undescribe(slot.control, slot.message.id);
    }

    clear() {
      for (const slot of this.slots) this.clearSlot(slot);
      this.formError.hidden = true;
      this.formError.textContent = "";
    }

    show(errors, detail) {
      const shown = [];
      const general = [];
      for (const error of errors || []) {
        const slot = typeof error.pointer === "string" ? this.find(error.pointer, error.detail) : null;
        if (!slot) {
          general.push(inWords(error.detail));
          continue;
        }
        const words = inWords(error.detail);
        slot.message.hidden = false;
        slot.message.textContent = slot.message.textContent ? `${slot.message.textContent}\n${words}` : words;
        slot.control.setAttribute("aria-invalid", "true");
        describe(slot.control, slot.message.id);
        shown.push(slot);
      }
      if (general.length || (!shown.length && detail)) {
        this.formError.hidden = false;
        this.formError.textContent = general.length ? general.join("\n") : detail;
      }
      const first = shown
        .map((slot) => slot.control)
        .sort((a, b) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1))[0];
      if (general.length || !first) {
        this.formError.focus();
      } else {
        first.focus();
      }
    }
  }

  function labelFor(id, text, required) {
    return el("label", { for: id }, text, required ? el("span", { class: "required" }, " (required)") : null);
  }

  function legendFor(text, required) {
    return el("legend", {}, text, required ? el("span", { class: "required" }, " (required)") : null);
  }

  function hintFor(control, text) {
    if (!text) return null;
    const hint = el("p", { class: "hint", id: uid("hint") }, text);
    describe(control, hint.id);
    return hint;
  }

  function schemaKind(schema) {
    if (!schema || typeof schema !== "object") return "json";
    if (Array.isArray(schema.enum) && schema.enum.length) return "enum";
    if (Object.prototype.hasOwnProperty.call(schema, "const")) return "const";
    let type = schema.type;
    if (Array.isArray(type)) type = type.find((each) => each !== "null") || type[0];
    if (!type) {
      if (schema.properties) type = "object";
      else if (schema.items) type = "array";
    }
    if (type === "array") {
      const items = schema.items;
      return items && typeof items === "object" && Array.isArray(items.enum) && items.enum.length ? "enum-array" : "json";
    }
    if (type === "object") return schema.properties && typeof schema.properties === "object" ? "object" : "json";
    if (["string", "boolean", "integer", "number"].includes(type)) return type;
    return "json";
  }

  const titleOf = (schema, name) => (schema && typeof schema.title === "string" && schema.title) || (name === null ? "Your answer" : humanize(name));

  /* A field for one schema at one pointer. */
  function schemaField(schema, pointer, name, required, slots, top) {
    const kind = schemaKind(schema);
    const title = titleOf(schema, name);
    const description = schema && typeof schema.description === "string" ? schema.description : null;
    switch (kind) {
      case "object":
        return objectField(schema, pointer, title, description, required, slots, top);
      case "enum":
        return enumField(schema, pointer, title, description, required, slots);
      case "enum-array":
        return enumArrayField(schema, pointer, title, description, required, slots);
      case "boolean":
        return booleanField(schema, pointer, title, description, slots);
      case "integer":
      case "number":
        return numberField(schema, pointer, title, description, required, slots, kind);
      case "string":
        return stringField(schema, pointer, title, description, required, slots);
      case "const":
        return { node: null, read: () => schema.const };
      default:
        return jsonField(pointer, title, description, required, slots);
    }
  }

  function objectField(schema, pointer, title, description, required, slots, top) {
    const needed = new Set(Array.isArray(schema.required) ? schema.required : []);
    const fields = Object.entries(schema.properties).map(([key, sub]) =>
      schemaField(sub, pointerOf(pointer, key), key, needed.has(key), slots, false)
    );
    const members = Object.keys(schema.properties);
    const least = Number.isInteger(schema.minProperties) ? schema.minProperties : 0;
    const read = (problems) => {
      const value = {};
      fields.forEach((field, index) => {
        const got = field.read(problems);
        if (got !== undefined) value[members[index]] = got;
      });
      const given = Object.keys(value).length;
      if (!given && !top && !required) return undefined;
      if (given < least) {
        problems.push({ pointer, detail: least === 1 ? "Fill in at least one field" : `Fill in at least ${fmt(least)} fields` });
      }
      return value;
    };
    const children = fields.map((field) => field.node).filter(Boolean);
    if (top) return { node: el("div", { class: "group" }, children), read };
    const node = el("fieldset", { class: "group", tabindex: "-1" }, legendFor(title, required));
    if (description) node.append(el("p", { class: "hint" }, description));
    node.append(...children);
    slots.add(pointer, node, node);
    return { node, read };
  }

  function enumField(schema, pointer, title, description, required, slots) {
    const values = schema.enum;
    const shown = values.map((value) => (typeof value === "string" ? value : JSON.stringify(value)));
    const missing = `Choose ${withArticle(nounOf(title))}`;
    if (values.length <= BUTTON_ENUM_MAX && shown.every((text) => text.length <= 24)) {
      // A few short values: a row of toggle buttons (each a tab stop; Enter or Space picks it).
      const buttons = [];
      const row = el("div", { class: "segmented" });
      shown.forEach((text, index) => {
        const picked = schema.default !== undefined && JSON.stringify(schema.default) === JSON.stringify(values[index]);
        const button = el("button", { type: "button", "aria-pressed": picked ? "true" : "false", "data-index": index }, text);
        button.addEventListener("click", () => {
          for (const other of buttons) other.setAttribute("aria-pressed", other === button ? "true" : "false");
        });
        buttons.push(button);
        row.append(button);
      });
      const node = el("fieldset", { class: "field enum" }, legendFor(title, required));
      if (description) node.append(el("p", { class: "hint" }, description));
      node.append(row);
      slots.add(pointer, buttons[0], node);
      const read = (problems) => {
        const chosen = buttons.find((button) => button.getAttribute("aria-pressed") === "true");
        if (!chosen && required) problems.push({ pointer, detail: missing });
        return chosen ? values[Number(chosen.dataset.index)] : undefined;
      };
      return { node, read };
    }
    const id = uid("field");
    const select = el("select", { id }, el("option", { value: "" }, "Choose…"));
    shown.forEach((text, index) => {
      const option = el("option", { value: String(index) }, text);
      if (schema.default !== undefined && JSON.stringify(schema.default) === JSON.stringify(values[index])) {
        option.selected = true;
      }
      select.append(option);
    });
    const node = el("div", { class: "field" }, labelFor(id, title, required), hintFor(select, description), select);
    slots.add(pointer, select, node);
    const read = (problems) => {
      if (select.value === "" && required) problems.push({ pointer, detail: missing });
      return select.value === "" ? undefined : values[Number(select.value)];
    };
    return { node, read };
  }

  function enumArrayField(schema, pointer, title, description, required, slots) {
    const values = schema.items.enum;
    const boxes = values.map((value, index) => el("input", { type: "checkbox", value: String(index) }));
    const node = el("fieldset", { class: "field options" }, legendFor(title, required));
    if (description) node.append(el("p", { class: "hint" }, description));
    values.forEach((value, index) => {
      const text = typeof value === "string" ? value : JSON.stringify(value);
      node.append(el("label", { class: "option" }, boxes[index], el("span", {}, text)));
    });
    slots.add(pointer, boxes[0], node);
    const plural = nounOf(title);
    const one = singular(plural);
    const least = Number.isInteger(schema.minItems) ? schema.minItems : 0;
    const most = Number.isInteger(schema.maxItems) ? schema.maxItems : null;
    const read = (problems) => {
      const chosen = boxes.filter((box) => box.checked).map((box) => values[Number(box.value)]);
      if (!chosen.length && !required) return undefined;
      if (chosen.length < least) {
        problems.push({ pointer, detail: least === 1 ? `Choose at least one ${one}` : `Choose at least ${fmt(least)} ${plural}` });
      } else if (most !== null && chosen.length > most) {
        problems.push({ pointer, detail: most === 1 ? `Choose at most one ${one}` : `Choose at most ${fmt(most)} ${plural}` });
      }
      return chosen;
    };
    return { node, read };
  }

  function booleanField(schema, pointer, title, description, slots) {
    const id = uid("field");
    const input = el("input", { id, type: "checkbox", role: "switch" });
    input.checked = schema.default === true;
    const words = el("span", { class: "state", "aria-hidden": "true" }, input.checked ? "Yes" : "No");
    input.addEventListener("change", () => {
      words.textContent = input.checked ? "Yes" : "No";
    });
    const node = el(
      "div",
      { class: "field" },
      el("label", { class: "switch", for: id }, input, el("span", {}, title), words),
      hintFor(input, description)
    );
    slots.add(pointer, input, node);
    return { node, read: () => input.checked };
  }

  function numberField(schema, pointer, title, description, required, slots, kind) {
    const id = uid("field");
    const num = (key) => (typeof schema[key] === "number" ? schema[key] : null);
    const [minimum, maximum, above, below, step] = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"].map(num);
    const input = el("input", {
      id,
      type: "number",
      inputmode: kind === "integer" ? "numeric" : "decimal",
      min: minimum,
      max: maximum,
      step: step !== null ? step : kind === "integer" ? 1 : "any",
    });
    if (typeof schema.default === "number") input.value = String(schema.default);
    const bounds = [];
    if (minimum !== null) bounds.push(`at least ${fmt(minimum)}`);
    else if (above !== null) bounds.push(`more than ${fmt(above)}`);
    if (maximum !== null) bounds.push(`at most ${fmt(maximum)}`);
    else if (below !== null) bounds.push(`less than ${fmt(below)}`);
    const words = [kind === "integer" ? "A whole number" : "A number", bounds.join(" and ")].filter(Boolean).join(", ");
    const node = el(
      "div",
      { class: "field" },
      labelFor(id, title, required),
      hintFor(input, [description, `${words}.`].filter(Boolean).join(" ")),
      input
    );
    slots.add(pointer, input, node);
    const problem = (value) => {
      if (kind === "integer" && !Number.isInteger(value)) return "A whole number";
      if (minimum !== null && value < minimum) return `At least ${fmt(minimum)}`;
      if (above !== null && value <= above) return `More than ${fmt(above)}`;
      if (maximum !== null && value > maximum) return `At most ${fmt(maximum)}`;
      if (below !== null && value >= below) return `Less than ${fmt(below)}`;
      if (step !== null && step > 0) {
        const ratio = value / step;
        if (Math.abs(ratio - Math.round(ratio)) > 1e-9) return `A multiple of ${fmt(step)}`;
      }
      return null;
    };
    const read = (problems) => {
      if (input.validity.badInput) {
        problems.push({ pointer, detail: kind === "integer" ? "A whole number, such as 1,500" : "A number, such as 12.5" });
        return undefined;
      }
      if (input.value.trim() === "") {
        if (required) problems.push({ pointer, detail: `Enter ${withArticle(nounOf(title))}` });
        return undefined;
      }
      const value = Number(input.value);
      const detail = problem(value);
      if (detail) problems.push({ pointer, detail });
      return value;
    };
    return { node, read };
  }

  /* A string with a live count: a one-line field when it is short, a text area when it is long (see
   * isLongText). */
  function textControl(id, max, longText) {
    const control = longText ? el("textarea", { id, rows: 4 }) : el("input", { id, type: "text", autocomplete: "off" });
    const count = el("span", { class: "counter", id: uid("count") });
    const update = () => {
      const size = codePoints(control.value);
      count.textContent = max === null ? `${size} character${size === 1 ? "" : "s"}` : `${size} / ${max}`;
      count.classList.toggle("over", max !== null && size > max);
    };
    control.addEventListener("input", update);
    update();
    describe(control, count.id);
    return { control, count };
  }

  /* The rule for "short": a string is one line when its maxLength is at most SHORT_TEXT (200) characters,
   * or when it has a pattern (other than "\S", the non-blank check), since a pattern describes a value
   * rather than prose; it is a text area when its maxLength is over 200 or it has none. */
  function isLongText(schema) {
    const max = Number.isInteger(schema.maxLength) ? schema.maxLength : null;
    if (max !== null && max <= SHORT_TEXT) return false;
    if (typeof schema.pattern === "string" && schema.pattern !== "\\S") return false;
    return true;
  }

  function stringField(schema, pointer, title, description, required, slots, missing) {
    const id = uid("field");
    const max = Number.isInteger(schema.maxLength) ? schema.maxLength : null;
    const least = Number.isInteger(schema.minLength) ? schema.minLength : 0;
    const format = typeof schema.format === "string" ? FORMATS[schema.format] : undefined;
    let pattern = null;
    if (typeof schema.pattern === "string") {
      try {
        pattern = new RegExp(schema.pattern, "u");
      } catch (error) {
        pattern = null; // a pattern this browser cannot read: the server checks it
      }
    }
    let control;
    let count = null;
    if (format) {
      control = el("input", { id, type: format.type, autocomplete: format.autocomplete || "off", spellcheck: "false" });
      if (typeof schema.default === "string") {
        control.value = format.type === "datetime-local" ? localFromIso(schema.default) : schema.default;
      }
    } else {
      ({ control, count } = textControl(id, max, isLongText(schema)));
      if (typeof schema.default === "string") {
        control.value = schema.default;
        control.dispatchEvent(new Event("input"));
      }
    }
    const hints = [description];
    if (format && format.type === "datetime-local") hints.push("In your time zone.");
    if (format && !description && format.type !== "date" && format.type !== "datetime-local") hints.push(`${format.words}.`);
    const node = el(
      "div",
      { class: "field" },
      labelFor(id, title, required),
      hintFor(control, hints.filter(Boolean).join(" ")),
      control,
      count
    );
    slots.add(pointer, control, node);
    const noun = nounOf(title);
    const emptyWords = missing || (format && format.missing) || `Write ${withArticle(noun)}`;
    const read = (problems) => {
      if (control.validity.badInput) {
        problems.push({ pointer, detail: format ? format.words : "This cannot be read" });
        return undefined;
      }
      let value = control.value;
      if (value === "") {
        if (required) problems.push({ pointer, detail: emptyWords });
        return undefined;
      }
      if (format && format.type === "datetime-local") value = isoFromLocal(value);
      const size = codePoints(value);
      if (format && control.validity.typeMismatch) {
        problems.push({ pointer, detail: format.words });
      } else if (value.trim() === "" && pattern && !pattern.test(value)) {
        problems.push({ pointer, detail: "Write something, not only spaces" });
      } else if (max !== null && size > max) {
        problems.push({ pointer, detail: `At most ${fmt(max)} characters (this has ${fmt(size)})` });
      } else if (size < least) {
        problems.push({ pointer, detail: `At least ${fmt(least)} character${least === 1 ? "" : "s"}` });
      } else if (pattern && !pattern.test(value)) {
        problems.push({ pointer, detail: description ? `Not in the form asked for: ${description}` : "Not in the form asked for" });
      }
      return value;
    };
    return { node, read };
  }

  function jsonField(pointer, title, description, required, slots) {
    const id = uid("field");
    const control = el("textarea", { id, rows: 4, spellcheck: "false" });
    const node = el(
      "div",
      { class: "field" },
      labelFor(id, title, required),
      hintFor(control, [description, "Write the answer as JSON."].filter(Boolean).join(" ")),
      control
    );
    slots.add(pointer, control, node);
    const read = (problems) => {
      const text = control.value.trim();
      if (!text) {
        if (required) problems.push({ pointer, detail: "Write the answer as JSON" });
        return undefined;
      }
      try {
        return JSON.parse(text);
      } catch (error) {
        problems.push({ pointer, detail: `This is not JSON: ${error.message}` });
        return undefined;
      }
    };
    return { node, read };
  }

  /* A choice (agent-runs.md): radios for a single choice, checkboxes for a multiple one, the recommended
   * options marked, and the person's own words where allow_custom. */
  function choiceField(question, pointer, legend, required, slots) {
    const name = uid("choice");
    const multiple = Boolean(question.multiple);
    const node = el("fieldset", { class: "field options", tabindex: "-1" }, legendFor(legend, required));
    const inputs = [];
    for (const option of question.options || []) {
      const input = el("input", { type: multiple ? "checkbox" : "radio", name, value: option.id });
      inputs.push(input);
      node.append(
        el(
          "label",
          { class: "option" },
          input,
          el("span", {}, option.label, option.recommended ? [" ", el("span", { class: "recommended" }, "Recommended")] : null)
        )
      );
    }
    let other = null;
    let custom = null;
    const customPointer = pointerOf(pointer, "custom");
    if (question.allow_custom) {
      const id = uid("custom");
      if (!multiple) {
        other = el("input", { type: "radio", name, value: "", "aria-label": "My own answer" });
        node.append(el("label", { class: "option" }, other, el("span", {}, "Something else")));
      }
      const built = textControl(id, null, false);
      custom = built.control;
      const box = el(
        "div",
        { class: "custom" },
        el("label", { for: id }, multiple ? "Your own answer (optional)" : "Your own answer"),
        custom,
        built.count
      );
      if (other) custom.addEventListener("input", () => (other.checked = custom.value !== "" || other.checked));
      node.append(box);
      slots.add(customPointer, custom, box);
    }
    slots.add(pointer, inputs[0] || node, node);
    const none = multiple
      ? `Choose at least one option${custom ? " or write your own" : ""}`
      : `Choose an option${custom ? " or write your own" : ""}`;
    const read = (problems) => {
      const answer = {};
      const written = custom ? custom.value : "";
      if (written !== "" && written.trim() === "") {
        problems.push({ pointer: customPointer, detail: "Write something, not only spaces" });
        return undefined;
      }
      if (multiple) {
        answer.selected = inputs.filter((input) => input.checked).map((input) => input.value);
        if (written !== "") answer.custom = written;
        if (!answer.selected.length && answer.custom === undefined) {
          if (required) problems.push({ pointer, detail: none });
          return undefined;
        }
        return answer;
      }
      if (other && other.checked) {
        if (written === "") problems.push({ pointer: customPointer, detail: "Write your own answer" });
        answer.custom = written;
        return answer;
      }
      const chosen = inputs.find((input) => input.checked);
      if (!chosen) {
        if (required) problems.push({ pointer, detail: none });
        return undefined;
      }
      answer.selected = [chosen.value];
      return answer;
    };
    return { node, read };
  }

  function questionFields(card, slots) {
    const item = card.entry.item;
    const question = item.question;
    const schema = item.answer_schema || {};
    if (question.kind === "choice") {
      const legend = question.multiple ? "Choose one or more" : "Choose one";
      return choiceField(question, "/answer", legend, true, slots);
    }
    if (question.kind === "form") {
      const answersSchema = (schema.properties && schema.properties.answers) || {};
      const properties = answersSchema.properties || {};
      const fields = (question.questions || []).map((each) => {
        const pointer = pointerOf("/answer/answers", each.id);
        const required = each.required !== false;
        if (each.kind === "choice") return { id: each.id, ...choiceField(each, pointer, each.prompt, required, slots) };
        const sub = properties[each.id] && schemaKind(properties[each.id]) === "string" ? properties[each.id] : {};
        return { id: each.id, ...stringField(sub, pointer, each.prompt, null, required, slots, "Write an answer") };
      });
      const node = el("div", { class: "group" }, fields.map((field) => field.node));
      const read = (problems) => {
        const answers = {};
        for (const field of fields) {
          const got = field.read(problems);
          if (got !== undefined) answers[field.id] = got;
        }
        return { answers };
      };
      return { node, read };
    }
    const textSchema = schemaKind(schema) === "string" ? schema : { type: "string" };
    return stringField(textSchema, "/answer", "Your answer", null, true, slots, "Write your answer");
  }

  function approvalSection(item) {
    const call = item.approval;
    const args = JSON.stringify(call.arguments === undefined ? {} : call.arguments, null, 2);
    return el(
      "section",
      { class: "call", "aria-label": "The call to approve" },
      el("h4", {}, "The call"),
      el("p", {}, "Tool ", el("code", {}, `${call.server}/${call.tool}`), " with the arguments:"),
      el("pre", { tabindex: "0", "aria-label": "The call's arguments, as JSON" }, el("code", {}, args))
    );
  }

  function buildAnswerForm(card, kind) {
    const item = card.entry.item;
    const formError = el("p", { class: "form-error", role: "alert", tabindex: "-1", hidden: true });
    const slots = new Slots(formError);
    const body = el("fieldset", { class: "body" }, el("legend", { class: "visually-hidden" }, `Answer: ${card.title}`));
    // No name on the form itself: a named form is a landmark, and two cards of one function would make two
    // landmarks of the same name. Its fieldset's legend names it.
    const form = el("form", { class: "answer", novalidate: true }, body);
    const actions = el("div", { class: "actions" });
    let read;
    if (kind === "approval") {
      card.article.append(approvalSection(item));
      const note = stringField({ type: "string", maxLength: 2000 }, "/answer/note", "Note (optional)", null, false, slots);
      body.append(note.node);
      const approve = el("button", { type: "submit", class: "primary", value: "approve" }, "Approve");
      const reject = el("button", { type: "submit", class: "danger", value: "reject" }, "Reject");
      actions.append(approve, reject);
      read = (submitter, problems) => {
        const answer = { approved: !(submitter && submitter.value === "reject") };
        const text = note.read(problems);
        if (text !== undefined && text.trim() !== "") answer.note = text;
        return answer;
      };
    } else {
      const field =
        kind === "question"
          ? questionFields(card, slots)
          : schemaField(item.answer_schema, "/answer", null, true, slots, true);
      if (field.node) body.append(field.node);
      read = (submitter, problems) => field.read(problems);
      actions.append(el("button", { type: "submit", class: "primary" }, "Submit"));
      const question = item.question;
      if (question && question.kind === "choice" && question.allow_skip) {
        const skip = el("button", { type: "button", class: "skip-button" }, question.skip_label || "Skip");
        skip.addEventListener("click", () => send(card, { selected: [], skipped: true }));
        actions.append(skip);
      }
    }
    body.append(formError, actions);
    form.append(body);
    card.article.append(form);
    card.form = form;
    card.slots = slots;
    card.buttons = () => [...actions.querySelectorAll("button")];
    card.setEnabled = (enabled) => {
      body.disabled = !enabled;
    };
    if (card.entry.role !== "write") {
      card.setEnabled(false);
      card.article.append(
        el("p", { class: "readonly" }, `You may read ${card.entry.org}/${card.entry.playbook} but not answer in it.`)
      );
    }
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (card.busy || card.done || card.gone) return;
      slots.clear();
      const problems = [];
      const answer = read(event.submitter, problems);
      if (problems.length) {
        slots.show(problems);
        announce(problems.length === 1 ? "One answer needs your attention." : `${problems.length} answers need your attention.`);
        return;
      }
      send(card, answer);
    });
    // Enter submits from any control but a text area (where Ctrl+Enter does) and a button (which it
    // presses); on a radio not chosen yet, Enter first chooses it.
    form.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" || event.isComposing) return;
      const target = event.target;
      if (target.tagName === "TEXTAREA") {
        if (event.ctrlKey || event.metaKey) {
          event.preventDefault();
          form.requestSubmit();
        }
        return;
      }
      if (target.tagName === "INPUT" && target.type === "radio" && !target.checked) {
        event.preventDefault();
        target.checked = true;
        target.dispatchEvent(new Event("change", { bubbles: true }));
        return;
      }
      if (target.tagName === "SELECT" || (target.tagName === "INPUT" && ["radio", "checkbox"].includes(target.type))) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
  }

  function setBusy(card, busy) {
    card.busy = busy;
    card.form.setAttribute("aria-busy", busy ? "true" : "false");
    for (const button of card.buttons()) {
      if (busy) button.setAttribute("aria-disabled", "true");
      else button.removeAttribute("aria-disabled");
    }
  }

  async function send(card, answer) {
    if (card.busy || card.done || card.gone) return;
    const { org, playbook, item } = card.entry;
    card.slots.clear();
    setBusy(card, true);
    const body = answer === undefined ? {} : { answer };
    const reply = await call("POST", `${playbookPath(org, playbook)}/runs/${enc(item.run_id)}/answer`, body);
    setBusy(card, false);
    if (reply.ok) {
      answered(card, answer);
      return;
    }
    if (reply.status === 401) return;
    if (reply.status === 422) {
      card.slots.show(reply.body.errors || [], reply.body.detail || "The answer was refused.");
      announce("The answer was refused: see the problems beside the fields.");
      return;
    }
    if (reply.status === 409) {
      card.slots.show([], `${reply.body.detail || "This request is no longer open."}`);
      markGone(card);
      return;
    }
    card.slots.show([], reply.body.detail || `The server answered ${reply.status}; try again.`);
  }

  // --- the decision, in words ------------------------------------------------------------------------
  //
  // After an answer the card says what was decided, then leaves (LEAVE_MS). The words come from the answer
  // and its schema:
  // - an approval: "Approved" or "Rejected", then ": " and the note when there is one;
  // - an agent's choice: "Skipped", or "Answered: " and the chosen options' labels (and the person's own
  //   words, quoted); a text question: "Answered: " and the text; a form: "Answered";
  // - an interaction function's answer: its decision is the value of the first enum field the answer
  //   gives (the schema's required fields first, then in the schema's order; an answer that is itself an
  //   enum value is its own decision), said in the past for a few verdict words (approve → "Approved",
  //   revise → "Revision asked", reject → "Rejected": VERDICTS) and as "<Field>: <value>" otherwise;
  //   then ": " and the first text the person wrote in a text area (a note, a reason), cut at 120
  //   characters. An answer without an enum field is "Answered".

  const VERDICTS = {
    approve: "Approved",
    approved: "Approved",
    accept: "Accepted",
    accepted: "Accepted",
    confirm: "Confirmed",
    confirmed: "Confirmed",
    reject: "Rejected",
    rejected: "Rejected",
    decline: "Declined",
    declined: "Declined",
    revise: "Revision asked",
    cancel: "Cancelled",
    escalate: "Escalated",
    yes: "Yes",
    no: "No",
  };

  function cut(text, size = 120) {
    const chars = Array.from(String(text).trim());
    return chars.length > size ? `${chars.slice(0, size - 1).join("")}…` : chars.join("");
  }

  function verdict(title, value) {
    const known = typeof value === "string" ? VERDICTS[value.toLowerCase()] : undefined;
    return known || `${title}: ${typeof value === "string" ? value : JSON.stringify(value)}`;
  }

  function choiceWords(question, answer) {
    if (!answer || answer.skipped) return "Skipped";
    const labels = new Map((question.options || []).map((option) => [option.id, option.label]));
    const chosen = (answer.selected || []).map((id) => labels.get(id) || id);
    if (typeof answer.custom === "string") chosen.push(`“${cut(answer.custom, 80)}”`);
    return `Answered: ${chosen.join(", ")}`;
  }

  function decisionWords(card, answer) {
    const item = card.entry.item;
    if (card.kind === "approval") {
      const words = answer && answer.approved ? "Approved" : "Rejected";
      return answer && answer.note ? `${words}: ${cut(answer.note)}` : words;
    }
    if (card.kind === "question") {
      const question = item.question;
      if (question.kind === "choice") return choiceWords(question, answer);
      if (question.kind === "form") return "Answered";
      return `Answered: ${cut(answer)}`;
    }
    const schema = item.answer_schema || {};
    if (schemaKind(schema) === "enum") return verdict("Answer", answer);
    if (schemaKind(schema) !== "object" || !answer || typeof answer !== "object") return "Answered";
    const properties = schema.properties;
    const needed = new Set(Array.isArray(schema.required) ? schema.required : []);
    const keys = Object.keys(properties);
    const ordered = [...keys.filter((key) => needed.has(key)), ...keys.filter((key) => !needed.has(key))];
    const decision = ordered.find((key) => schemaKind(properties[key]) === "enum" && answer[key] !== undefined);
    const note = ordered.find(
      (key) =>
        schemaKind(properties[key]) === "string" &&
        !properties[key].format &&
        isLongText(properties[key]) &&
        typeof answer[key] === "string" &&
        answer[key].trim() !== ""
    );
    const words = decision === undefined ? "Answered" : verdict(titleOf(properties[decision], decision), answer[decision]);
    return note === undefined ? words : `${words}: ${cut(answer[note])}`;
  }

  function answered(card, answer) {
    markSeen(card);
    card.done = true;
    card.li.classList.add("is-done");
    card.form.hidden = true;
    const words = decisionWords(card, answer);
    const done = el("p", { class: "done", tabindex: "-1", role: "status" }, words);
    card.article.append(done);
    done.focus();
    announce(`${card.title}: ${words}.`);
    updateCount();
    setTimeout(() => leave(card), LEAVE_MS);
  }

  /* An answered card leaves; the focus, if it was in the card, goes to the next request. */
  function leave(card) {
    if (state.cards.get(card.key) !== card) return;
    const focused = card.li.contains(document.activeElement);
    const next = card.li.nextElementSibling || card.li.previousElementSibling;
    removeCard(card);
    if (focused) focusCard(next);
  }

  // --- views -----------------------------------------------------------------------------------------
  //
  // Two views, named by the address's fragment so that a link (or the OAuth callback, which sends the
  // person back to …/inbox#connections) opens the right one: #requests (the default) and #connections.
  // Any other fragment (the skip link's #main) leaves the view as it is.

  function viewOf(hash) {
    if (hash === "#connections" || hash.startsWith("#connections?") || hash.startsWith("#connections/")) {
      return "connections";
    }
    if (hash === "#requests") return "requests";
    return null;
  }

  function showView(view, focus) {
    state.view = view;
    $("inbox").hidden = view !== "requests";
    $("connections-view").hidden = view !== "connections";
    for (const [name, link] of [["requests", $("view-requests")], ["connections", $("view-connections")]]) {
      if (name === view) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    if (view === "connections") refreshConnections();
    if (focus) (view === "connections" ? $("connections-title") : $("requests")).focus();
  }

  // --- connections -----------------------------------------------------------------------------------
  //
  // http-api.md, "Connections": the MCP servers people add to an org, one section per org the person's
  // grants name (the orgs of the playbooks they read or write, and those they are admin of). Each section
  // lists the org's connections (list_connections), each with its status in words and what to do about
  // it, how it signs in, the playbooks it serves, and, for an active one, its tools (search on a playbook
  // of the person's that it serves, without terms: every tool of every server, of which the page keeps
  // this connection's). Its buttons: Approve (a pending one; a person without the org's admin grant is
  // told in words when the API answers 403), Authorize (an OAuth one: authorize_connection, then the
  // browser goes to its authorization_url and comes back to #connections), Remove (after a confirmation).
  // Below the list, the form that adds one (add_connection) for a writer of one of the org's playbooks;
  // a 422 shows each problem beside the field its pointer names, keeping what was typed.
  //
  // The view lists again when it is opened, after each change the person makes, on Refresh, when the tab
  // comes back into view and every third time the requests are listed; only a connection whose record
  // changed is drawn again (the focus kept on the same button), so nothing else moves under the hand.

  const SERVER_NAME = /^[a-z][a-z0-9-]{0,31}$/;
  const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
  const DESCRIPTION_CHARS = 300;

  const STATUS_LABELS = { pending: "Pending", active: "Active", broken: "Broken", not_allowed: "Not allowed" };
  const AUTH_WORDS = {
    none: "no credential",
    headers: "sends headers (kept secret)",
    oauth: "signs in with OAuth",
  };

  const conn = {
    // By org: {org, playbooks: [{playbook, role}], writes, admin, section, list, empty, problem, cards}.
    orgs: new Map(),
    listing: false,
  };

  const connectionsPath = (org) => `v1/orgs/${enc(org)}/connections`;
  const connectionPath = (org, name) => `${connectionsPath(org)}/${enc(name)}`;

  /* The orgs of the person's grants, in their order, each with the playbooks the person reads there. */
  function grantedOrgs() {
    const orgs = new Map();
    for (const grant of (state.me && state.me.grants) || []) {
      if (!orgs.has(grant.org)) orgs.set(grant.org, { org: grant.org, playbooks: [], writes: false, admin: false });
      const info = orgs.get(grant.org);
      if (grant.role === "admin") {
        info.admin = true;
      } else if (grant.playbook) {
        const known = info.playbooks.find((each) => each.playbook === grant.playbook);
        if (!known) info.playbooks.push({ playbook: grant.playbook, role: grant.role });
        else if (grant.role === "write") known.role = "write";
        if (grant.role === "write") info.writes = true;
      }
    }
    return [...orgs.values()];
  }

  function clearConnections() {
    conn.orgs.clear();
    $("orgs").replaceChildren();
  }

  async function refreshConnections() {
    if (!state.me || conn.listing) return;
    conn.listing = true;
    try {
      const orgs = grantedOrgs();
      $("no-orgs").hidden = orgs.length > 0;
      for (const info of orgs) {
        if (conn.orgs.has(info.org)) continue;
        const block = buildOrg(info);
        conn.orgs.set(info.org, block);
        $("orgs").append(block.section);
      }
      await Promise.all(orgs.map((info) => listConnections(conn.orgs.get(info.org))));
    } finally {
      conn.listing = false;
    }
  }

  async function listConnections(block) {
    const reply = await call("GET", connectionsPath(block.org));
    if (!state.me || conn.orgs.get(block.org) !== block) return; // signed out meanwhile
    if (!reply.ok) {
      if (reply.status === 401) return;
      block.problem.hidden = false;
      block.problem.textContent = `The connections of ${block.org} could not be listed: ${
        reply.body.detail || `the server answered ${reply.status}`
      }`;
      return;
    }
    block.problem.hidden = true;
    const connections = [...(reply.body.connections || [])].sort((a, b) => String(a.name).localeCompare(String(b.name)));
    reconcileConnections(block, connections);
  }

  /* The org's list as the API gave it: a connection whose record changed is drawn again (the focus, when it
   * was on one of its buttons, goes to the same button of the new card), one that left is taken away. */
  function reconcileConnections(block, connections) {
    const seen = new Set();
    let previous = null;
    for (const connection of connections) {
      seen.add(connection.name);
      let card = block.cards.get(connection.name);
      const signature = JSON.stringify(connection);
      if (!card || card.signature !== signature) {
        const fresh = buildConnection(block, connection);
        if (card) replaceConnection(card, fresh);
        block.cards.set(connection.name, fresh);
        card = fresh;
      }
      const after = previous ? previous.li : null;
      if (!card.li.isConnected || card.li.previousElementSibling !== after) {
        if (after) after.after(card.li);
        else block.list.prepend(card.li);
      }
      previous = card;
    }
    for (const [name, card] of [...block.cards]) {
      if (seen.has(name)) continue;
      card.li.remove();
      block.cards.delete(name);
    }
    showEmpty(block);
  }

  function showEmpty(block) {
    block.empty.hidden = block.cards.size > 0;
    block.list.hidden = block.cards.size === 0;
  }

  function replaceConnection(old, fresh) {
    const focused = old.li.contains(document.activeElement) ? document.activeElement : null;
    const action = focused && focused.dataset ? focused.dataset.action : null;
    old.li.replaceWith(fresh.li);
    if (focused) {
      const same = action && fresh.li.querySelector(`[data-action="${action}"]`);
      (same || fresh.explain).focus();
    }
  }

  function buildOrg(info) {
    const titleId = uid("org");
    const heading = el("h3", { id: titleId, tabindex: "-1" }, info.org);
    const problem = el("p", { class: "form-error", role: "status" , hidden: true });
    const empty = el("p", { class: "empty" }, `${info.org} has no connection yet.`);
    const list = el("ul", { class: "connections", "aria-label": `Connections of ${info.org}`, hidden: true });
    const section = el("section", { class: "org", "aria-labelledby": titleId, "data-org": info.org }, heading, problem, list, empty);
    const block = { ...info, section, heading, list, empty, problem, cards: new Map() };
    if (info.writes) {
      section.append(buildAddForm(block));
    } else {
      section.append(
        el(
          "p",
          { class: "readonly" },
          info.admin
            ? `You approve and remove the connections of ${info.org}; a writer of one of its playbooks adds them.`
            : `You may see the connections of ${info.org}; a writer of one of its playbooks adds them.`
        )
      );
    }
    return block;
  }

  function playbookWords(block, connection) {
    if (!Array.isArray(connection.playbooks)) return `for every playbook of ${block.org}`;
    return `only for ${connection.playbooks.join(", ")}`;
  }

  /* The status, in words, with what to do about it. */
  function statusWords(block, connection) {
    const oauth = connection.auth === "oauth";
    switch (connection.status) {
      case "pending":
        return (
          `Waiting for approval: its tools cannot be used until an admin of ${block.org} approves it. ` +
          (block.admin ? "You are one: approve it if you trust this server." : "Ask one to approve it.")
        );
      case "active":
        return (
          `Active: the functions of ${Array.isArray(connection.playbooks) ? connection.playbooks.join(", ") : block.org} can use its tools.`
        );
      case "broken":
        return `Broken: the credential kept for it can no longer be read${oauth ? " or refreshed" : ""}, so its tools cannot be used. Remove it and add it again${
          oauth ? ", then authorize it" : connection.auth === "headers" ? " with its headers" : ""
        }.`;
      case "not_allowed":
        return "Not allowed: a rule of the operator no longer allows its URL, so its tools cannot be used. Ask the operator to allow it again, or remove it.";
      default:
        return `Its status is ${connection.status}.`;
    }
  }

  function buildConnection(block, connection) {
    const { name } = connection;
    const titleId = uid("connection");
    const li = el("li", { "data-name": name, "data-status": connection.status });
    const article = el("article", { class: `card connection status-${connection.status}`, "aria-labelledby": titleId });
    const heading = el(
      "h4",
      { id: titleId },
      el("span", { class: `kind state state-${connection.status}` }, STATUS_LABELS[connection.status] || connection.status),
      el("span", { class: "title" }, name)
    );
    const where = el(
      "p",
      { class: "meta" },
      el("code", { class: "name" }, connection.url),
      el("span", {}, AUTH_WORDS[connection.auth] || `signs in with ${connection.auth}`),
      el("span", {}, playbookWords(block, connection))
    );
    const who = el(
      "p",
      { class: "meta" },
      el("span", {}, `added by ${connection.added_by} `, timeElement(connection.added_at, true)),
      connection.approved_by ? el("span", {}, `approved by ${connection.approved_by} `, timeElement(connection.approved_at, true)) : null
    );
    const explain = el("p", { class: "explain", tabindex: "-1" }, statusWords(block, connection));
    const tools = el("section", { class: "tools", "aria-label": `Tools of ${name}`, hidden: true });
    const problem = el("p", { class: "form-error", role: "alert", tabindex: "-1", hidden: true });
    const actions = el("div", { class: "actions" });
    const card = { block, connection, name, li, article, explain, tools, problem, actions, busy: false, signature: JSON.stringify(connection) };
    const button = (action, words, className, handler) => {
      // The visible word, then the connection's name for a screen reader ("Approve notes").
      const node = el("button", { type: "button", class: className, "data-action": action }, words, el("span", { class: "visually-hidden" }, ` ${name}`));
      node.addEventListener("click", () => handler(card, node));
      return node;
    };
    // A reader of the org's playbooks (no write role, not its admin) may do nothing to a connection: no
    // buttons. Anyone else sees them all, and a 403 (only an admin approves; only the one who added it or an
    // admin authorizes or removes it) is said in words.
    const acts = block.writes || block.admin;
    if (acts && connection.status === "pending") actions.append(button("approve", "Approve", "primary", approveConnection));
    // OAuth: a connection becomes "oauth" once authorized; before that, one without headers may need it,
    // which only its server knows (it answers 401), so the button is offered with a word of why.
    let signInHint = null;
    if (acts && connection.auth !== "headers" && connection.status !== "not_allowed" && connection.status !== "broken") {
      const authorize = button("authorize", "Authorize", null, authorizeConnection);
      signInHint = el(
        "p",
        { class: "hint", id: uid("hint") },
        connection.auth === "oauth"
          ? "Authorize it again if its server asks for a new sign-in: you sign in there, then come back here."
          : "If its server asks people to sign in (OAuth), authorize it: you sign in there, then come back here."
      );
      describe(authorize, signInHint.id);
      actions.append(authorize);
    }
    if (acts) actions.append(button("remove", "Remove", "danger", confirmRemoval));
    article.append(...[el("header", {}, heading, where, who), explain, tools, signInHint, problem, acts ? actions : null].filter(Boolean));
    li.append(article);
    if (connection.status === "active") listTools(card);
    return card;
  }

  function cardProblem(card, words) {
    card.problem.hidden = !words;
    card.problem.textContent = words || "";
    if (words) card.problem.focus();
  }

  function setCardBusy(card, busy) {
    card.busy = busy;
    card.article.setAttribute("aria-busy", busy ? "true" : "false");
    for (const node of card.article.querySelectorAll("button")) {
      if (busy) node.setAttribute("aria-disabled", "true");
      else node.removeAttribute("aria-disabled");
    }
  }

  /* A connection's tools, through search on the first playbook of the person's that it serves. */
  async function listTools(card) {
    const { block, connection } = card;
    const shown = (...children) => {
      card.tools.hidden = false;
      card.tools.replaceChildren(el("h5", {}, "Tools"), ...children);
    };
    const readable = block.playbooks.filter(
      (each) => !Array.isArray(connection.playbooks) || connection.playbooks.includes(each.playbook)
    );
    if (!readable.length) {
      shown(el("p", { class: "hint" }, "None of the playbooks you read uses it, so its tools are not listed here."));
      return;
    }
    shown(el("p", { class: "hint" }, "Listing its tools…"));
    const playbook = readable[0].playbook;
    const reply = await call("GET", `${playbookPath(block.org, playbook)}/tool-servers/search`);
    if (block.cards.get(card.name) !== card) return; // drawn again meanwhile
    if (!reply.ok) {
      if (reply.status === 401) return;
      shown(el("p", { class: "hint" }, `Its tools could not be listed: ${reply.body.detail || `the server answered ${reply.status}`}`));
      return;
    }
    const entry = (reply.body.servers || []).find((each) => each.server === connection.name);
    if (!entry) {
      shown(el("p", { class: "hint" }, `Its tools are not offered to ${block.org}/${playbook} yet.`));
      return;
    }
    if (entry.because) {
      shown(el("p", { class: "hint" }, `Its tools could not be listed: ${entry.detail || String(entry.because).replace(/_/g, " ")}.`));
      return;
    }
    const tools = entry.tools || [];
    if (!tools.length) {
      shown(el("p", { class: "hint" }, "It offers no tool."));
      return;
    }
    shown(
      el(
        "ul",
        { class: "tool-list" },
        tools.map((tool) =>
          el(
            "li",
            {},
            el("code", {}, `${connection.name}/${tool.tool}`),
            tool.read_only ? el("span", { class: "kind" }, "read only") : null,
            tool.description ? el("span", { class: "hint tool-description" }, cut(tool.description, DESCRIPTION_CHARS)) : null
          )
        )
      )
    );
  }

  async function approveConnection(card) {
    if (card.busy) return;
    const { block, name } = card;
    cardProblem(card, null);
    setCardBusy(card, true);
    const reply = await call("POST", `${connectionPath(block.org, name)}/approve`);
    setCardBusy(card, false);
    if (reply.ok) {
      const fresh = buildConnection(block, reply.body);
      replaceConnection(card, fresh);
      block.cards.set(name, fresh);
      fresh.explain.focus();
      announce(`${name} is approved: ${statusWords(block, reply.body)}`);
      return;
    }
    if (reply.status === 401) return;
    if (reply.status === 403) {
      cardProblem(card, `Only an admin of ${block.org} may approve a connection: ask one to approve ${name}.`);
    } else if (reply.status === 404) {
      cardProblem(card, `${name} is no longer there: someone removed it.`);
      listConnections(block);
    } else {
      cardProblem(card, reply.body.detail || `The server answered ${reply.status}; try again.`);
    }
  }

  /* authorize_connection gives the server's sign-in page; the browser goes there, and the callback sends it
   * back to this view. */
  async function authorizeConnection(card) {
    if (card.busy) return;
    const { block, name } = card;
    cardProblem(card, null);
    setCardBusy(card, true);
    const reply = await call("POST", `${connectionPath(block.org, name)}/authorize`);
    setCardBusy(card, false);
    if (reply.ok) {
      let target = null;
      try {
        target = new URL(String(reply.body.authorization_url || ""));
      } catch (error) {
        target = null;
      }
      if (target && (target.protocol === "https:" || target.protocol === "http:")) {
        announce(`Going to the sign-in of ${name}.`);
        location.assign(target.toString());
        return;
      }
      cardProblem(card, "The server gave no address to sign in at; try again.");
      return;
    }
    if (reply.status === 401) return;
    if (reply.status === 403) {
      cardProblem(card, `You may not authorize ${name}: ${reply.body.detail || "ask an admin of " + block.org + "."}`);
    } else {
      cardProblem(card, reply.body.detail || `The server answered ${reply.status}; try again.`);
    }
  }

  /* Remove asks first, in the card: the question, "Remove <name>" and "Keep it" (focused, so that an Enter
   * too many removes nothing). */
  function confirmRemoval(card) {
    if (card.busy || card.confirming) return;
    const { block, name } = card;
    cardProblem(card, null);
    const questionId = uid("confirm");
    const question = el(
      "p",
      { class: "confirm-question", id: questionId },
      `Remove ${name}? The functions of ${block.org} lose its tools, and what is kept for it (its headers, its tokens) is deleted.`
    );
    const yes = el("button", { type: "button", class: "danger", "data-action": "confirm-remove", "aria-describedby": questionId }, `Remove ${name}`);
    const no = el("button", { type: "button", "data-action": "keep" }, "Keep it");
    const box = el("div", { class: "confirm", role: "group", "aria-labelledby": questionId }, question, el("div", { class: "actions" }, yes, no));
    card.confirming = box;
    card.actions.hidden = true;
    card.actions.after(box);
    const close = () => {
      box.remove();
      card.confirming = null;
      card.actions.hidden = false;
    };
    no.addEventListener("click", () => {
      close();
      card.actions.querySelector('[data-action="remove"]').focus();
    });
    yes.addEventListener("click", async () => {
      if (card.busy) return;
      setCardBusy(card, true);
      const reply = await call("DELETE", connectionPath(block.org, name));
      setCardBusy(card, false);
      if (reply.ok || reply.status === 404) {
        const next = card.li.nextElementSibling || card.li.previousElementSibling;
        card.li.remove();
        if (block.cards.get(name) === card) block.cards.delete(name);
        showEmpty(block);
        const target = next && next.querySelector("button");
        (target || block.heading).focus();
        announce(reply.ok ? `${name} was removed.` : `${name} was already removed.`);
        return;
      }
      if (reply.status === 401) return;
      close();
      cardProblem(
        card,
        reply.status === 403
          ? `Only an admin of ${block.org} may remove a connection someone else added: ask one to remove ${name}.`
          : reply.body.detail || `The server answered ${reply.status}; try again.`
      );
    });
    no.focus();
  }

  // --- adding a connection ---------------------------------------------------------------------------

  function buildAddForm(block) {
    const { org } = block;
    const titleId = uid("add");
    const formError = el("p", { class: "form-error", role: "alert", tabindex: "-1", hidden: true });
    const slots = new Slots(formError);
    const form = el("form", { class: "card add", novalidate: true, "aria-labelledby": titleId });
    const textField = (label, type, pointer, hint, attrs) => {
      const id = uid("field");
      const input = el("input", { id, name: pointer.slice(1), type, autocomplete: "off", spellcheck: "false", autocapitalize: "none", ...attrs });
      const field = el("div", { class: "field" }, labelFor(id, label, true), input);
      field.append(hintFor(input, hint));
      slots.add(pointer, input, field);
      return { field, input };
    };
    const name = textField(
      "Name",
      "text",
      "/name",
      "1 to 32 of a–z, 0–9 and -, starting with a letter. Functions name its tools as name/tool.",
      { maxlength: "32" }
    );
    const url = textField(
      "URL",
      "url",
      "/url",
      "The full address of the MCP server (streamable HTTP), with its https: at the start.",
      { inputmode: "url" }
    );

    // Headers: rows of a name and a value (a password field: the value is a secret, never shown again).
    const rows = el("div", { class: "header-rows" });
    const addRow = el("button", { type: "button", "data-action": "add-header" }, "Add a header");
    const headersHint = el(
      "p",
      { class: "hint", id: uid("hint") },
      "Sent with each call to the server, such as an API key. Kept secret: never shown again, not even to you."
    );
    const headers = el(
      "fieldset",
      { class: "headers", tabindex: "-1", "aria-describedby": headersHint.id },
      el("legend", {}, "Headers ", el("span", { class: "required" }, "(optional)")),
      headersHint,
      rows,
      el("div", { class: "actions" }, addRow)
    );
    slots.add("/headers", headers, headers);
    const headerRows = [];
    const relabel = () =>
      headerRows.forEach((row, index) => {
        for (const number of row.numbers) number.textContent = ` ${index + 1}`;
      });
    const newRow = () => {
      const nameId = uid("header-name");
      const valueId = uid("header-value");
      const numbers = [el("span", { class: "visually-hidden" }), el("span", { class: "visually-hidden" }), el("span", { class: "visually-hidden" })];
      const headerName = el("input", { id: nameId, type: "text", autocomplete: "off", spellcheck: "false", autocapitalize: "none" });
      const headerValue = el("input", { id: valueId, type: "password", autocomplete: "new-password", spellcheck: "false" });
      const remove = el("button", { type: "button", "data-action": "remove-header" }, "Remove", el("span", { class: "visually-hidden" }, " header"), numbers[2]);
      const node = el(
        "div",
        { class: "header-row" },
        el("div", { class: "field" }, el("label", { for: nameId }, "Header name", numbers[0]), headerName),
        el("div", { class: "field" }, el("label", { for: valueId }, "Header value", numbers[1]), headerValue),
        remove
      );
      rows.append(node);
      const row = { node, headerName, headerValue, numbers, slot: null };
      // A header's problem (from the page or the API's /headers/<name>) is marked on its name, which the
      // pointer names; its words say when it is the value that is wrong.
      row.slot = slots.add(`/headers/#${nameId}`, headerName, node);
      const point = () => {
        const key = headerName.value.trim();
        row.slot.pointer = key ? pointerOf("/headers", key) : `/headers/#${nameId}`;
      };
      headerName.addEventListener("input", point);
      remove.addEventListener("click", () => {
        const at = headerRows.indexOf(row);
        slots.drop(row.slot);
        headerRows.splice(at, 1);
        node.remove();
        relabel();
        const next = headerRows[at] || headerRows[at - 1];
        (next ? next.headerName : addRow).focus();
      });
      headerRows.push(row);
      relabel();
      return row;
    };
    addRow.addEventListener("click", () => newRow().headerName.focus());

    // Playbooks: the org's that the person knows of; none ticked serves every playbook of the org.
    const playbooksHint = el(
      "p",
      { class: "hint", id: uid("hint") },
      `Leave all unticked for every playbook of ${org}, now and later.`
    );
    const boxes = block.playbooks.map((each) => {
      const id = uid("playbook");
      const box = el("input", { id, type: "checkbox", value: each.playbook });
      return { box, node: el("label", { class: "option", for: id }, box, el("span", {}, each.playbook)) };
    });
    const playbooks = el(
      "fieldset",
      { class: "options", tabindex: "-1", "aria-describedby": playbooksHint.id },
      el("legend", {}, "Playbooks ", el("span", { class: "required" }, "(optional)")),
      playbooksHint,
      boxes.map((each) => each.node)
    );
    slots.add("/playbooks", playbooks, playbooks);

    const submit = el("button", { type: "submit", class: "primary" }, "Add connection");
    form.append(
      el("h4", { id: titleId }, `Add a connection to ${org}`),
      name.field,
      url.field,
      headers,
      playbooks,
      formError,
      el("div", { class: "actions" }, submit)
    );

    const read = (problems) => {
      const body = { name: name.input.value.trim(), url: url.input.value.trim() };
      if (!body.name) problems.push({ pointer: "/name", detail: "Write a name for it" });
      else if (!SERVER_NAME.test(body.name)) {
        problems.push({ pointer: "/name", detail: "Use 1 to 32 of a–z, 0–9 and -, starting with a letter" });
      }
      if (!body.url) problems.push({ pointer: "/url", detail: "Write the server's address" });
      else {
        try {
          new URL(body.url);
        } catch (error) {
          problems.push({ pointer: "/url", detail: "Write a full address, with its https: at the start" });
        }
      }
      const sent = {};
      const names = new Set();
      for (const row of headerRows) {
        const key = row.headerName.value.trim();
        const value = row.headerValue.value;
        if (!key && !value) continue;
        const pointer = row.slot.pointer;
        if (!key) problems.push({ pointer, detail: "Write the header's name" });
        else if (!HEADER_NAME.test(key)) problems.push({ pointer, detail: "A header's name is letters, digits and -, such as X-Api-Key" });
        else if (names.has(key.toLowerCase())) problems.push({ pointer, detail: "Each header once" });
        else if (!value.trim()) problems.push({ pointer, detail: "Write the header's value" });
        names.add(key.toLowerCase());
        sent[key] = value;
      }
      if (Object.keys(sent).length) body.headers = sent;
      const chosen = boxes.filter((each) => each.box.checked).map((each) => each.box.value);
      if (chosen.length) body.playbooks = chosen;
      return body;
    };

    const reset = () => {
      name.input.value = "";
      url.input.value = "";
      for (const row of [...headerRows]) {
        slots.drop(row.slot);
        row.node.remove();
      }
      headerRows.length = 0;
      for (const each of boxes) each.box.checked = false;
    };

    let busy = false;
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (busy) return;
      slots.clear();
      const problems = [];
      const body = read(problems);
      if (problems.length) {
        slots.show(problems);
        announce(problems.length === 1 ? "One field needs your attention." : `${problems.length} fields need your attention.`);
        return;
      }
      busy = true;
      form.setAttribute("aria-busy", "true");
      submit.setAttribute("aria-disabled", "true");
      const reply = await call("POST", connectionsPath(org), body);
      busy = false;
      form.setAttribute("aria-busy", "false");
      submit.removeAttribute("aria-disabled");
      if (reply.ok) {
        reset();
        await listConnections(block);
        let card = block.cards.get(body.name);
        if (!card && reply.body && reply.body.name) {
          // Listed before it could be read back: shown from the answer.
          card = buildConnection(block, reply.body);
          block.cards.set(card.name, card);
          block.list.append(card.li);
          showEmpty(block);
        }
        if (card) card.explain.focus();
        const added = reply.body && reply.body.status ? reply.body : card ? card.connection : { status: "pending" };
        announce(`Added ${body.name}. ${statusWords(block, added)}`);
        return;
      }
      if (reply.status === 401) return;
      if (reply.status === 422 || reply.status === 400) {
        slots.show(reply.body.errors || [], reply.body.detail || "The connection was refused.");
        announce("The connection was refused: see the problems beside the fields.");
      } else if (reply.status === 409) {
        const errors = reply.body.errors && reply.body.errors.length ? reply.body.errors : [{ pointer: "/name", detail: reply.body.detail || `${body.name} is taken: choose another name` }];
        slots.show(errors, reply.body.detail);
        announce("The name is taken: see the problem beside it.");
      } else if (reply.status === 403) {
        slots.show([], `You may not add a connection to ${org}: ${reply.body.detail || "a writer of one of its playbooks adds them."}`);
      } else {
        slots.show([], reply.body.detail || `The server answered ${reply.status}; try again.`);
      }
    });
    return form;
  }

  // --- start -----------------------------------------------------------------------------------------

  async function start() {
    $("token-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const token = $("token").value.trim();
      if (!token) {
        showSignIn("Enter your bearer token.");
        return;
      }
      sessionStorage.setItem(TOKEN_KEY, token);
      state.token = token;
      $("token").value = "";
      enter();
    });
    $("hosted-sign-in").addEventListener("click", () => beginHostedSignIn());
    $("sign-out").addEventListener("click", signOut);
    $("refresh").addEventListener("click", () => {
      refresh();
      if (state.view === "connections") refreshConnections();
    });
    window.addEventListener("hashchange", () => {
      const view = viewOf(location.hash);
      if (view && state.me) showView(view, true);
    });
    document.addEventListener("visibilitychange", () => {
      if (!document.hidden && state.me) refresh();
      if (!document.hidden && state.me && state.view === "connections") refreshConnections();
    });

    try {
      const response = await fetch(new URL("inbox/config.json", base), { cache: "no-store", credentials: "omit" });
      if (response.ok) state.config = await response.json();
    } catch (error) {
      /* keep the defaults: a bearer token */
    }
    let problem = null;
    const params = new URLSearchParams(location.search);
    if (state.config.cognito && (params.has("code") || params.has("error"))) {
      problem = await finishHostedSignIn(params);
    }
    state.token = sessionStorage.getItem(TOKEN_KEY);
    if (state.token && !problem) {
      await enter();
    } else {
      showSignIn(problem);
    }
  }

  start();
})();

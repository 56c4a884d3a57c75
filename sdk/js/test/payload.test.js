// Payload building: meta from the page, identity persistence, the exact body
// and headers that reach the server.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  buildEvent, campaignOf, createEngage, uuid, ANONYMOUS_ID_KEY, USER_ID_KEY, CLICK_ID_KEY,
} from "../dist/engage.js";
import { memoryStorage, startServer } from "./server.js";

const ctx = {
  url: "https://app.example/swap/osmo?utm_source=wallet&utm_medium=banner&utm_campaign=cl_q4&ref=x#top",
  referrer: "https://news.example/post/1",
  title: "Swap",
  userAgent: "Mozilla/5.0 test",
  language: "de-CH",
  platform: "Linux x86_64",
  locale: "de-CH",
  timezone: "Europe/Zurich",
  screenWidth: 1280,
  screenHeight: 720,
};

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test("buildEvent fills meta exactly as /sdk/track expects", () => {
  const ev = buildEvent({
    name: "trade_made", attributes: { amount_usd: 12.5 }, ctx, anonymousId: "anon-1", userId: "osmo1abc",
    messageId: "m-1", timestamp: 1763726400000, clickId: "clk_1",
  });
  assert.deepEqual(ev, {
    name: "trade_made",
    attributes: { amount_usd: 12.5 },
    meta: {
      app: "app.example",
      campaign: { source: "wallet", medium: "banner", campaign: "cl_q4" },
      page: {
        path: "/swap/osmo",
        referrer: "https://news.example/post/1",
        search: "?utm_source=wallet&utm_medium=banner&utm_campaign=cl_q4&ref=x",
        title: "Swap",
        url: ctx.url,
      },
      browser: {
        userAgent: "Mozilla/5.0 test", screenWidth: 1280, screenHeight: 720, language: "de-CH",
        platform: "Linux x86_64", locale: "de-CH", timezone: "Europe/Zurich",
      },
      messageId: "m-1",
      click_id: "clk_1",
    },
    timestamp: 1763726400000,
    anonymousId: "anon-1",
    userId: "osmo1abc",
  });
});

test("buildEvent without user, utm, click or screen leaves those members out", () => {
  const bare = { ...ctx, url: "https://app.example/", screenWidth: undefined, screenHeight: undefined };
  const ev = buildEvent({ name: "page", ctx: bare, anonymousId: "a", messageId: "m", timestamp: 1, app: { name: "dapp" } });
  assert.deepEqual(Object.keys(ev), ["name", "attributes", "meta", "timestamp", "anonymousId"]);
  assert.deepEqual(ev.attributes, {});
  assert.deepEqual(Object.keys(ev.meta).sort(), ["app", "browser", "messageId", "page"]);
  assert.deepEqual(ev.meta.app, { name: "dapp" });
  assert.deepEqual(Object.keys(ev.meta.browser).sort(), ["language", "locale", "platform", "timezone", "userAgent"]);
  assert.equal(ev.meta.page.search, "");
});

test("campaignOf keeps utm_* only, first value wins, decoded", () => {
  const cases = [
    ["", undefined],
    ["?ref=1&utm_=x", undefined],
    ["?utm_source=a%20b&utm_source=second&utm_term=t&x=1", { source: "a b", term: "t" }],
    ["utm_content=c", { content: "c" }],
    ["?utm_constructor=k&utm___proto__=p", Object.fromEntries([["constructor", "k"], ["__proto__", "p"]])],
  ];
  for (const [search, want] of cases) assert.deepEqual(campaignOf(search), want, search);
});

test("uuid is version 4", () => {
  const seen = new Set();
  for (let i = 0; i < 100; i++) {
    const u = uuid();
    assert.match(u, UUID_V4);
    seen.add(u);
  }
  assert.equal(seen.size, 100);
});

test("createEngage sends text/plain JSON with the key, persists ids, keeps the click", async (t) => {
  const srv = await startServer([{ status: 200, body: '{"ok":true,"id":"evt_1"}' }]);
  t.after(srv.close);
  const local = memoryStorage();
  const session = memoryStorage();
  let page = { ...ctx, url: "https://app.example/landing?click_id=clk_9&utm_source=wallet" };
  const opts = {
    apiKey: "pk_test", baseUrl: srv.url + "/", storage: local, sessionStorage: session,
    context: () => page, now: () => 1763726400123,
  };
  const sdk = createEngage(opts);
  const anon = sdk.anonymousId;
  assert.match(anon, UUID_V4);
  assert.equal(local.getItem(ANONYMOUS_ID_KEY), anon);
  assert.equal(sdk.userId, undefined);

  assert.deepEqual(await sdk.page(), { ok: true, id: "evt_1", status: 200, attempts: 1 });
  assert.equal(session.getItem(CLICK_ID_KEY), "clk_9");
  page = { ...ctx, url: "https://app.example/pool/1" }; // a later page of the visit, no click_id in the URL
  assert.equal((await sdk.identify("osmo1user", { plan: "pro" })).ok, true);
  assert.equal((await sdk.track("trade_made", { tokens: [{ amount: 1.5, denom: "uosmo" }] })).ok, true);
  assert.equal((await sdk.walletConnected("0xAbC")).ok, true);
  assert.equal((await sdk.alias("0xdef")).ok, true);
  assert.equal(local.getItem(USER_ID_KEY), "0xAbC");

  // A new instance (a reload) keeps both ids.
  const again = createEngage(opts);
  assert.equal(again.anonymousId, anon);
  assert.equal(again.userId, "0xAbC");
  assert.equal((await again.track("x")).ok, true);

  assert.equal(srv.requests.length, 6);
  for (const r of srv.requests) {
    assert.equal(r.method, "POST");
    assert.equal(r.url, "/sdk/track");
    assert.equal(r.headers["content-type"], "text/plain;charset=UTF-8");
    assert.equal(r.headers.authorization, "Bearer pk_test");
  }
  const bodies = srv.requests.map((r) => JSON.parse(r.body));
  assert.deepEqual(
    bodies.map((b) => [b.name, b.userId, b.anonymousId, b.timestamp, b.meta.click_id, b.meta.page.path, b.meta.campaign]),
    [
      ["page", undefined, anon, 1763726400123, "clk_9", "/landing", { source: "wallet" }],
      ["identify", "osmo1user", anon, 1763726400123, "clk_9", "/pool/1", undefined],
      ["trade_made", "osmo1user", anon, 1763726400123, "clk_9", "/pool/1", undefined],
      ["wallet_connected", "0xAbC", anon, 1763726400123, "clk_9", "/pool/1", undefined],
      ["alias", "0xAbC", anon, 1763726400123, "clk_9", "/pool/1", undefined],
      ["x", "0xAbC", anon, 1763726400123, "clk_9", "/pool/1", undefined],
    ],
  );
  assert.deepEqual(bodies.map((b) => b.attributes), [
    {}, { id: "osmo1user", traits: { plan: "pro" } }, { tokens: [{ amount: 1.5, denom: "uosmo" }] }, {},
    { newIdentity: "0xdef" }, {},
  ]);
  const ids = new Set(bodies.map((b) => b.meta.messageId));
  assert.equal(ids.size, 6, "one messageId per event");

  // reset forgets the user and starts a new anonymous id.
  again.reset();
  assert.equal(again.userId, undefined);
  assert.notEqual(again.anonymousId, anon);
  assert.equal(local.getItem(USER_ID_KEY), null);
  assert.equal(local.getItem(ANONYMOUS_ID_KEY), again.anonymousId);
});

test("createEngage rejects missing options and empty user ids without sending", async () => {
  assert.throws(() => createEngage({ baseUrl: "http://127.0.0.1:1" }), /apiKey/);
  assert.throws(() => createEngage({ apiKey: "pk_x" }), /baseUrl/);
  let calls = 0;
  const sdk = createEngage({
    apiKey: "pk_x", baseUrl: "http://127.0.0.1:1", storage: memoryStorage(), sessionStorage: memoryStorage(),
    context: () => ctx, fetch: () => { calls++; throw new Error("unexpected"); },
  });
  assert.deepEqual(await sdk.identify(""), { ok: false, status: 0, attempts: 0, error: "a non-empty user id is required" });
  assert.deepEqual(await sdk.walletConnected("  "), { ok: false, status: 0, attempts: 0, error: "a non-empty user id is required" });
  assert.equal(calls, 0);
});

test("storage that throws falls back to memory", async () => {
  const broken = { getItem() { throw new Error("denied"); }, setItem() { throw new Error("denied"); }, removeItem() { throw new Error("denied"); } };
  const sdk = createEngage({ apiKey: "pk_x", baseUrl: "http://127.0.0.1:1", storage: broken, sessionStorage: broken, context: () => ctx });
  assert.match(sdk.anonymousId, UUID_V4);
});

test("fetch options: POST, keepalive, CORS without credentials, text/plain", async () => {
  const calls = [];
  const sdk = createEngage({
    apiKey: "pk_opts", baseUrl: "https://engage.example/base//", storage: memoryStorage(), sessionStorage: memoryStorage(),
    context: () => ctx, now: () => 5,
    fetch: async (url, init) => {
      calls.push([url, init]);
      return new Response('{"ok":true,"id":"evt_9"}', { status: 200, headers: { "Content-Type": "application/json" } });
    },
  });
  assert.deepEqual(await sdk.track("a"), { ok: true, id: "evt_9", status: 200, attempts: 1 });
  assert.equal(calls.length, 1);
  const [url, init] = calls[0];
  assert.equal(url, "https://engage.example/base/sdk/track");
  assert.deepEqual(
    { ...init, body: undefined },
    {
      method: "POST", keepalive: true, mode: "cors", credentials: "omit", body: undefined,
      headers: { Authorization: "Bearer pk_opts", "Content-Type": "text/plain;charset=UTF-8" },
    },
  );
  assert.equal(JSON.parse(init.body).timestamp, 5);
});

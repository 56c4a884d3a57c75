// Retry policy against a loopback server: which answers are retried, the
// backoff with jitter, Retry-After, and giving up.
import { test } from "node:test";
import assert from "node:assert/strict";
import { backoffMs, createEngage, DEFAULT_RETRY, isRetryable, parseRetryAfter } from "../dist/engage.js";
import { memoryStorage, startServer } from "./server.js";

const ctx = {
  url: "https://app.example/", referrer: "", title: "", userAgent: "ua", language: "en", platform: "p",
  locale: "en-US", timezone: "UTC",
};
const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);

/** An SDK whose sleeps are recorded instead of waited. */
function sdkFor(url, extra = {}) {
  const sleeps = [];
  const sdk = createEngage({
    apiKey: "pk_test", baseUrl: url, storage: memoryStorage(), sessionStorage: memoryStorage(), context: () => ctx,
    sleep: async (ms) => { sleeps.push(ms); }, random: () => 0.5, now: () => NOW, ...extra,
  });
  return { sdk, sleeps };
}

test("isRetryable: network-ish statuses only", () => {
  const retried = [408, 413, 429, 500, 502, 503, 504, 521, 522, 524, 599];
  const final = [200, 204, 301, 400, 401, 403, 404, 409, 415, 422, 501];
  for (const s of retried) assert.equal(isRetryable(s), true, String(s));
  for (const s of final) assert.equal(isRetryable(s), false, String(s));
});

test("parseRetryAfter: seconds or HTTP date", () => {
  assert.equal(parseRetryAfter("3", NOW), 3000);
  assert.equal(parseRetryAfter(" 0 ", NOW), 0);
  assert.equal(parseRetryAfter(new Date(NOW + 7000).toUTCString(), NOW), 7000);
  assert.equal(parseRetryAfter(new Date(NOW - 7000).toUTCString(), NOW), 0);
  assert.equal(parseRetryAfter("soon", NOW), undefined);
  assert.equal(parseRetryAfter("-1", NOW), undefined);
  assert.equal(parseRetryAfter(null, NOW), undefined);
});

test("backoffMs: exponential, capped, jitter within [d/2, d)", () => {
  const opt = { ...DEFAULT_RETRY, baseDelayMs: 500, maxDelayMs: 30000 };
  const table = [
    // retry, random, want
    [0, 0, 250], [0, 0.999999, 499], [1, 0, 500], [1, 0.5, 750], [2, 0.5, 1500], [3, 0, 2000],
    [5, 0.5, 12000], [6, 0, 15000], [6, 0.5, 22500], [20, 0.5, 22500],
  ];
  for (const [n, r, want] of table) assert.equal(backoffMs(n, opt, () => r), want, `retry ${n} random ${r}`);
});

test("retries 503, 408, 429 and a dropped connection, then succeeds", async (t) => {
  const srv = await startServer([
    { status: 503, body: '{"status":503,"detail":"busy"}' },
    { status: 408 },
    { destroy: true },
    { status: 429 },
    { status: 200, body: '{"ok":true,"id":"evt_5"}' },
  ]);
  t.after(srv.close);
  const { sdk, sleeps } = sdkFor(srv.url);
  assert.deepEqual(await sdk.track("a"), { ok: true, id: "evt_5", status: 200, attempts: 5 });
  assert.deepEqual(sleeps, [375, 750, 1500, 3000]); // random 0.5: 0.75 * 500 * 2^n
  const bodies = srv.requests.map((r) => r.body);
  assert.equal(new Set(bodies).size, 1, "every retry sends the same body (same messageId)");
});

test("Retry-After is honoured instead of the backoff", async (t) => {
  const srv = await startServer([
    { status: 429, headers: { "Retry-After": "2" } },
    { status: 503, headers: { "Retry-After": new Date(NOW + 4000).toUTCString() } },
    { status: 200, body: '{"ok":true,"id":"evt_3"}' },
  ]);
  t.after(srv.close);
  const { sdk, sleeps } = sdkFor(srv.url);
  assert.deepEqual(await sdk.track("a"), { ok: true, id: "evt_3", status: 200, attempts: 3 });
  assert.deepEqual(sleeps, [2000, 4000]);
});

test("a Retry-After beyond maxRetryAfterMs ends the retries", async (t) => {
  const srv = await startServer([{ status: 503, headers: { "Retry-After": "600" } }]);
  t.after(srv.close);
  const { sdk, sleeps } = sdkFor(srv.url);
  const r = await sdk.track("a");
  assert.deepEqual([r.ok, r.status, r.attempts, sleeps], [false, 503, 1, []]);
  assert.match(r.error, /Retry-After 600000 ms/);
});

test("other 4xx (and 501) are not retried", async (t) => {
  for (const status of [400, 401, 403, 404, 415, 501]) {
    const srv = await startServer([{ status, body: `{"status":${status},"detail":"no ${status}"}` }]);
    const { sdk, sleeps } = sdkFor(srv.url);
    const r = await sdk.track("a");
    await srv.close();
    assert.deepEqual(r, { ok: false, status, attempts: 1, error: `no ${status}` }, String(status));
    assert.deepEqual(sleeps, []);
    assert.equal(srv.requests.length, 1);
  }
});

test("gives up after maxRetries with the last answer", async (t) => {
  const srv = await startServer([{ status: 502, body: "bad gateway" }]);
  t.after(srv.close);
  const { sdk, sleeps } = sdkFor(srv.url, { retry: { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 300 } });
  assert.deepEqual(await sdk.track("a"), { ok: false, status: 502, attempts: 4, error: "HTTP 502" });
  assert.deepEqual(sleeps, [75, 150, 225]); // 0.75 * min(300, 100 * 2^n)
  assert.equal(srv.requests.length, 4);
});

test("a refused connection is a network error, retried then reported", async () => {
  const srv = await startServer([{ status: 200 }]);
  await srv.close(); // nothing listens on the port any more
  const { sdk, sleeps } = sdkFor(srv.url, { retry: { maxRetries: 2 } });
  const r = await sdk.track("a");
  assert.deepEqual([r.ok, r.status, r.attempts, sleeps], [false, 0, 3, [375, 750]]);
  assert.ok(r.error.length > 0);
});

test("real timers: a retried event arrives after the backoff", async (t) => {
  const srv = await startServer([{ status: 500 }, { status: 200, body: '{"ok":true,"id":"evt_2"}' }]);
  t.after(srv.close);
  const sdk = createEngage({
    apiKey: "pk_test", baseUrl: srv.url, storage: memoryStorage(), sessionStorage: memoryStorage(), context: () => ctx,
    retry: { baseDelayMs: 40 }, random: () => 0,
  });
  const start = performance.now();
  assert.deepEqual(await sdk.track("a"), { ok: true, id: "evt_2", status: 200, attempts: 2 });
  assert.ok(performance.now() - start >= 19, "waited the 20 ms backoff");
});

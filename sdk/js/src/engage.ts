// chainlens engagement SDK: sends browser events to POST {baseUrl}/sdk/track
// with a publishable pk_ key. One ES module, no runtime dependencies.

/** A JSON value as the server stores it. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** The body of POST /sdk/track (interface: sdkTrackBody). */
export interface TrackEvent {
  name: string;
  attributes: { [key: string]: Json };
  meta: Meta;
  /** Milliseconds since the epoch. */
  timestamp: number;
  anonymousId: string;
  userId?: string;
}

/** What the SDK fills in meta. */
export interface Meta {
  app?: Json;
  /** utm_* query parameters of the page, without the utm_ prefix. */
  campaign?: { [key: string]: string };
  page: { path: string; referrer: string; search: string; title: string; url: string };
  browser: {
    userAgent: string;
    screenWidth?: number;
    screenHeight?: number;
    language: string;
    platform: string;
    locale: string;
    timezone: string;
  };
  /** Deduplication key: retries of one event carry the same messageId. */
  messageId: string;
  /** click_id of a GET /click redirect that led to this visit. */
  click_id?: string;
  [key: string]: Json | undefined;
}

/** The browser facts meta is built from (window, document, navigator, screen). */
export interface PageContext {
  url: string;
  referrer: string;
  title: string;
  userAgent: string;
  language: string;
  platform: string;
  locale: string;
  timezone: string;
  screenWidth?: number;
  screenHeight?: number;
}

/** The subset of the Web Storage API the SDK uses. */
export interface KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** Outcome of one event: never a rejected promise. */
export interface TrackResult {
  ok: boolean;
  /** Event id answered by the server ({"ok": true, "id": ...}). */
  id?: string;
  /** HTTP status of the last answer; 0 after a network error. */
  status: number;
  /** Number of requests sent. */
  attempts: number;
  error?: string;
}

/** Retry policy of the sender. */
export interface RetryOptions {
  /** Retries after the first attempt; default 5. */
  maxRetries: number;
  /** Backoff before retry n (0-based) is base * 2^n with jitter; default 500 ms. */
  baseDelayMs: number;
  /** Upper bound of one backoff; default 30 s. */
  maxDelayMs: number;
  /** A Retry-After longer than this ends the retries; default 120 s. */
  maxRetryAfterMs: number;
}

export interface EngageOptions {
  /** Publishable key (pk_...) whose allowed origins include this page's origin. */
  apiKey: string;
  /** Base address of the engagement group, e.g. https://engage.example.com. */
  baseUrl: string;
  /** meta.app; defaults to the page's host name. */
  app?: Json;
  retry?: Partial<RetryOptions>;
  /** Overrides for tests and non-browser hosts. */
  fetch?: typeof fetch;
  storage?: KeyValueStorage;
  sessionStorage?: KeyValueStorage;
  context?: () => PageContext;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  now?: () => number;
}

export interface Engage {
  /** Sends a custom (or standard) event with optional attributes. */
  track(name: string, attributes?: { [key: string]: Json }): Promise<TrackResult>;
  /** Sends a page event; meta.page describes the page. */
  page(attributes?: { [key: string]: Json }): Promise<TrackResult>;
  /** Sets the user id (a wallet address) for this and later events and sends identify {id, traits}. */
  identify(userId: string, traits?: { [key: string]: Json }): Promise<TrackResult>;
  /** Links a new identity to the current one: alias {newIdentity}. */
  alias(newIdentity: string): Promise<TrackResult>;
  /** Sets the user id to the wallet address and sends the standard wallet_connected event. */
  walletConnected(address: string): Promise<TrackResult>;
  /** Forgets the user id and starts a new anonymous id. */
  reset(): void;
  readonly anonymousId: string;
  readonly userId: string | undefined;
}

/** Storage keys (localStorage for identity, sessionStorage for the click). */
export const ANONYMOUS_ID_KEY = "chainlens.anonymousId";
export const USER_ID_KEY = "chainlens.userId";
export const CLICK_ID_KEY = "chainlens.clickId";

export const DEFAULT_RETRY: RetryOptions = {
  maxRetries: 5,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 120_000,
};

/**
 * Statuses that are retried (shapes.md lists 408, 413, 429, 500, 502, 503,
 * 504, 521, 522 and 524): timeouts, a body refused as too large (by a proxy
 * that may take it later), throttling and server errors, except 501 (never
 * implemented).
 */
export function isRetryable(status: number): boolean {
  return status === 408 || status === 413 || status === 429 || (status >= 500 && status <= 599 && status !== 501);
}

/**
 * Retry-After as milliseconds: delay-seconds or an HTTP date (relative to
 * nowMs); undefined when absent or malformed.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value == null) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  if (!/^[A-Za-z]{3}, /.test(v)) return undefined; // an HTTP date starts with the day name
  const t = Date.parse(v);
  if (Number.isNaN(t)) return undefined;
  return Math.max(0, t - nowMs);
}

/**
 * Backoff before retry n (0 = first retry): exponential, capped, with "equal
 * jitter" so the delay is in [cap/2, cap): d = min(max, base * 2^n); d/2 + random * d/2.
 */
export function backoffMs(retry: number, opt: RetryOptions, random: () => number): number {
  const d = Math.min(opt.maxDelayMs, opt.baseDelayMs * 2 ** retry);
  return Math.floor(d / 2 + random() * (d / 2));
}

/** A random RFC 4122 version 4 UUID (crypto.getRandomValues also works outside secure contexts). */
export function uuid(): string {
  const b = new Uint8Array(16);
  globalThis.crypto.getRandomValues(b);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The utm_* parameters of a query string without the prefix; undefined when none. */
export function campaignOf(search: string): { [key: string]: string } | undefined {
  const found = new Map<string, string>();
  new URLSearchParams(search).forEach((value, key) => {
    if (key.startsWith("utm_") && key.length > 4 && !found.has(key.slice(4))) found.set(key.slice(4), value);
  });
  // fromEntries defines own members, so utm___proto__ cannot reach the prototype.
  return found.size > 0 ? Object.fromEntries(found) : undefined;
}

/** Builds meta for an event sent from the page described by ctx. */
export function buildMeta(ctx: PageContext, messageId: string, app?: Json, clickId?: string): Meta {
  const u = new URL(ctx.url);
  const meta: Meta = {
    page: { path: u.pathname, referrer: ctx.referrer, search: u.search, title: ctx.title, url: ctx.url },
    browser: {
      userAgent: ctx.userAgent,
      language: ctx.language,
      platform: ctx.platform,
      locale: ctx.locale,
      timezone: ctx.timezone,
    },
    messageId,
  };
  if (ctx.screenWidth !== undefined) meta.browser.screenWidth = ctx.screenWidth;
  if (ctx.screenHeight !== undefined) meta.browser.screenHeight = ctx.screenHeight;
  meta.app = app ?? u.hostname;
  const campaign = campaignOf(u.search);
  if (campaign) meta.campaign = campaign;
  if (clickId) meta.click_id = clickId;
  return meta;
}

/** Builds the body of POST /sdk/track. */
export function buildEvent(args: {
  name: string;
  attributes?: { [key: string]: Json };
  ctx: PageContext;
  anonymousId: string;
  userId?: string;
  messageId: string;
  timestamp: number;
  app?: Json;
  clickId?: string;
}): TrackEvent {
  const ev: TrackEvent = {
    name: args.name,
    attributes: args.attributes ?? {},
    meta: buildMeta(args.ctx, args.messageId, args.app, args.clickId),
    timestamp: args.timestamp,
    anonymousId: args.anonymousId,
  };
  if (args.userId) ev.userId = args.userId;
  return ev;
}

/** The current page as a PageContext (browsers only). */
export function browserContext(): PageContext {
  const nav = globalThis.navigator;
  const scr = (globalThis as { screen?: { width: number; height: number } }).screen;
  const resolved = Intl.DateTimeFormat().resolvedOptions();
  const doc = globalThis.document;
  return {
    url: globalThis.location.href,
    referrer: doc?.referrer ?? "",
    title: doc?.title ?? "",
    userAgent: nav?.userAgent ?? "",
    language: nav?.language ?? "",
    platform: nav?.platform ?? "",
    locale: resolved.locale,
    timezone: resolved.timeZone,
    screenWidth: scr?.width,
    screenHeight: scr?.height,
  };
}

/**
 * Sends one body to url, retrying network errors, 408, 429 and 5xx (not 501)
 * with exponential backoff and jitter; a Retry-After answer is waited for
 * instead (when the server exposes it to the page). Other answers end it.
 */
export async function send(
  url: string,
  apiKey: string,
  body: string,
  opt: {
    fetch: typeof fetch;
    retry: RetryOptions;
    sleep: (ms: number) => Promise<void>;
    random: () => number;
    now: () => number;
  },
): Promise<TrackResult> {
  let status = 0;
  let error = "";
  for (let attempt = 0; ; attempt++) {
    let retryAfter: number | undefined;
    try {
      const resp = await opt.fetch(url, {
        method: "POST",
        headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "text/plain;charset=UTF-8" },
        body,
        keepalive: true,
        mode: "cors",
        credentials: "omit",
      });
      status = resp.status;
      const text = await resp.text().catch(() => "");
      if (status < 400) {
        let id: string | undefined;
        try {
          const answer = JSON.parse(text) as { id?: unknown };
          if (typeof answer.id === "string") id = answer.id;
        } catch {
          // a success without a JSON answer is still a success
        }
        return { ok: true, id, status, attempts: attempt + 1 };
      }
      error = detailOf(text) || `HTTP ${status}`;
      if (!isRetryable(status)) return { ok: false, status, attempts: attempt + 1, error };
      retryAfter = parseRetryAfter(resp.headers.get("Retry-After"), opt.now());
    } catch (e) {
      status = 0;
      error = e instanceof Error ? e.message : String(e);
    }
    if (attempt >= opt.retry.maxRetries) return { ok: false, status, attempts: attempt + 1, error };
    if (retryAfter !== undefined && retryAfter > opt.retry.maxRetryAfterMs) {
      return { ok: false, status, attempts: attempt + 1, error: `${error} (Retry-After ${retryAfter} ms)` };
    }
    await opt.sleep(retryAfter ?? backoffMs(attempt, opt.retry, opt.random));
  }
}

/** The detail of a problem+json answer, if it is one. */
function detailOf(text: string): string {
  try {
    const p = JSON.parse(text) as { detail?: unknown };
    return typeof p.detail === "string" ? p.detail : "";
  } catch {
    return "";
  }
}

/** Storage that never throws (private modes, disabled storage): falls back to memory. */
function safeStorage(get: () => KeyValueStorage | undefined): KeyValueStorage {
  const memory = new Map<string, string>();
  let s: KeyValueStorage | undefined;
  try {
    s = get();
  } catch {
    s = undefined;
  }
  return {
    getItem(k) {
      try {
        if (s) return s.getItem(k);
      } catch {
        // fall through to memory
      }
      return memory.get(k) ?? null;
    },
    setItem(k, v) {
      memory.set(k, v);
      try {
        s?.setItem(k, v);
      } catch {
        // memory keeps it for this page
      }
    },
    removeItem(k) {
      memory.delete(k);
      try {
        s?.removeItem(k);
      } catch {
        // memory forgot it
      }
    },
  };
}

/** Creates an SDK instance for one publishable key. */
export function createEngage(options: EngageOptions): Engage {
  if (!options || typeof options.apiKey !== "string" || options.apiKey === "") {
    throw new Error("createEngage: apiKey (a publishable pk_ key) is required");
  }
  if (typeof options.baseUrl !== "string" || options.baseUrl === "") {
    throw new Error("createEngage: baseUrl is required");
  }
  const endpoint = options.baseUrl.replace(/\/+$/, "") + "/sdk/track";
  const retry: RetryOptions = { ...DEFAULT_RETRY, ...options.retry };
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const local = options.storage ? safeStorage(() => options.storage) : safeStorage(() => globalThis.localStorage);
  const session = options.sessionStorage
    ? safeStorage(() => options.sessionStorage)
    : safeStorage(() => globalThis.sessionStorage);
  const context = options.context ?? browserContext;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;

  let anonymousId = local.getItem(ANONYMOUS_ID_KEY) || "";
  if (!anonymousId) {
    anonymousId = uuid();
    local.setItem(ANONYMOUS_ID_KEY, anonymousId);
  }
  let userId = local.getItem(USER_ID_KEY) || undefined;

  /** Sets the user id; false for an empty one. */
  function setUser(id: string): boolean {
    if (typeof id !== "string" || id.trim() === "") return false;
    userId = id;
    local.setItem(USER_ID_KEY, id);
    return true;
  }
  const noUser: TrackResult = { ok: false, status: 0, attempts: 0, error: "a non-empty user id is required" };

  async function track(name: string, attributes?: { [key: string]: Json }): Promise<TrackResult> {
    let body: string;
    try {
      const ctx = context();
      // A click_id in the landing URL is kept for the rest of the visit.
      let clickId = new URL(ctx.url).searchParams.get("click_id") || "";
      if (clickId) session.setItem(CLICK_ID_KEY, clickId);
      else clickId = session.getItem(CLICK_ID_KEY) || "";
      body = JSON.stringify(
        buildEvent({
          name, attributes, ctx, anonymousId, userId, messageId: uuid(), timestamp: now(),
          app: options.app, clickId: clickId || undefined,
        }),
      );
    } catch (e) {
      return { ok: false, status: 0, attempts: 0, error: e instanceof Error ? e.message : String(e) };
    }
    return send(endpoint, options.apiKey, body, { fetch: doFetch, retry, sleep, random, now });
  }

  return {
    track,
    page: (attributes) => track("page", attributes),
    identify(id, traits) {
      if (!setUser(id)) return Promise.resolve({ ...noUser });
      return track("identify", { id, traits: traits ?? {} });
    },
    alias(newIdentity) {
      return track("alias", { newIdentity });
    },
    walletConnected(address) {
      if (!setUser(address)) return Promise.resolve({ ...noUser });
      return track("wallet_connected");
    },
    reset() {
      userId = undefined;
      local.removeItem(USER_ID_KEY);
      anonymousId = uuid();
      local.setItem(ANONYMOUS_ID_KEY, anonymousId);
    },
    get anonymousId() {
      return anonymousId;
    },
    get userId() {
      return userId;
    },
  };
}

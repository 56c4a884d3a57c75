// console.mjs BASE_URL ADMIN_KEY OTHER_KEY CAMPAIGN_ID SHOT_DIR: drives the
// operator console at BASE_URL/console in headless Chromium (playwright-core
// over the machine's /usr/bin/chromium or $CHROMIUM):
//   - the page and every data call refuse a visitor without a session, and
//     the login refuses OTHER_KEY (a key without the admin scope);
//   - it logs in with ADMIN_KEY, visits Chains, Jobs, API, Campaigns and
//     campaign CAMPAIGN_ID's report, waiting for each page's data and
//     charts, and saves a screenshot of each in SHOT_DIR;
//   - it creates a key and revokes it, and pauses and resumes the campaign;
//   - it logs out, and the data calls are refused again.
// Every request must stay on BASE_URL's origin (nothing from a CDN) and
// the browser console must show no error (a CSP violation is one). Prints
// {"pages": {page: {data-k: data-v}}, "created_key": …} for the Go test to
// compare with `chainlens status`, /metrics and the campaign report;
// exits non-zero on any failure.
import { chromium } from "playwright-core";

const [base, adminKey, otherKey, campaignID, shots] = process.argv.slice(2);
const origin = new URL(base).origin;
const problems = [];
const expectedErrors = [];
const out = { pages: {} };
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

// values reads every data-k of the page.
async function values(page) {
  return page.evaluate(() => {
    const o = {};
    document.querySelectorAll("[data-k]").forEach((e) => { o[e.getAttribute("data-k")] = e.getAttribute("data-v"); });
    return o;
  });
}

// loaded waits for a page's data and, when it has charts, shows the last
// 15 minutes (the finest window: the system under test is young) and waits
// for their canvases.
async function loaded(page, charts) {
  await page.waitForSelector("main [data-loaded]", { timeout: 30000 });
  if (charts) {
    const w = page.locator("button[data-window='15m']");
    if (await w.count()) {
      if (!(await w.getAttribute("class"))?.includes("on")) await w.click();
      await page.waitForSelector("button[data-window='15m'].on", { timeout: 30000 });
    }
    await page.waitForSelector("main .uplot canvas", { timeout: 30000 });
  }
  await page.waitForTimeout(300);
}

try {
  const context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
  const page = await context.newPage();
  await page.route("**/*", (route) => {
    const u = route.request().url();
    if (u.startsWith("data:") || new URL(u).origin === origin) return route.continue();
    problems.push("request off the server: " + u);
    return route.abort();
  });
  page.on("console", (m) => {
    if (m.type() !== "error") return;
    // The browser logs each refused call (401/403) it was asked to make.
    if (/status of 40[13]/.test(m.text())) { expectedErrors.push(m.text()); return; }
    problems.push("console error: " + m.text());
  });
  page.on("pageerror", (e) => problems.push("page error: " + e.message));
  page.on("response", (r) => { if (r.status() >= 400 && !/api\/(session|chains|jobs|api|keys|campaigns)$|login$/.test(r.url())) problems.push("answer " + r.status() + " " + r.url()); });

  // No session: the login, and every data call refused.
  await page.goto(base + "/console/", { waitUntil: "load" });
  await page.waitForSelector("form#login");
  const refused = await page.evaluate(async () => {
    const r = {};
    for (const p of ["api/session", "api/chains", "api/jobs", "api/api", "api/keys", "api/campaigns"]) r[p] = (await fetch(p)).status;
    r["POST api/keys"] = (await fetch("api/keys", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" })).status;
    return r;
  });
  for (const [p, s] of Object.entries(refused)) if (s !== 401) problems.push(`without a session ${p} answered ${s}, want 401`);

  // A key without the admin scope is refused.
  await page.fill("#key", otherKey);
  await page.click("form#login button[type=submit]");
  await page.waitForSelector("form#login .error");
  const refusal = await page.textContent("form#login .error");
  if (!/admin scope/.test(refusal)) problems.push("non-admin login: " + refusal);
  if ((await context.cookies()).length) problems.push("a refused login set a cookie");

  // The admin key logs in; the cookie is HttpOnly and SameSite=Strict.
  await page.fill("#key", adminKey);
  await page.click("form#login button[type=submit]");
  await page.waitForSelector("nav:not([hidden])");
  const cookies = await context.cookies();
  if (cookies.length !== 1 || !cookies[0].httpOnly || cookies[0].sameSite !== "Strict") problems.push("session cookie: " + JSON.stringify(cookies));
  if (await page.evaluate(() => document.cookie) !== "") problems.push("the session cookie is readable by scripts");

  for (const [name, hash, charts] of [["chains", "#chains", true], ["jobs", "#jobs", true], ["api", "#api", true], ["campaigns", "#campaigns", false], ["campaign", "#campaign/" + campaignID, true]]) {
    await page.goto(base + "/console/" + hash, { waitUntil: "load" });
    await loaded(page, charts);
    out.pages[name] = await values(page);
    if (await page.locator("main .error").count()) problems.push(name + ": " + await page.textContent("main .error"));
    await page.screenshot({ path: `${shots}/console-${name}.png`, fullPage: true });
  }

  // Keys: create one (shown once), then revoke it.
  await page.goto(base + "/console/#api", { waitUntil: "load" });
  await loaded(page, true);
  await page.fill("#create-key input[name=name]", "console-made");
  await page.check("#create-key input[name=scope][value=dex]");
  await page.click("#create-key button[type=submit]");
  await page.waitForSelector("[data-k=created-key]");
  out.created_key = await page.getAttribute("[data-k=created-key]", "data-v");
  await page.screenshot({ path: `${shots}/console-key-created.png`, fullPage: true });
  await page.reload({ waitUntil: "load" }); // the session outlives the page
  await loaded(page, true);
  const made = await page.evaluate(() => [...document.querySelectorAll("[data-k$='.name']")].find((e) => e.getAttribute("data-v") === "console-made")?.getAttribute("data-k").split(".")[1]);
  if (!made) problems.push("the created key is not listed");
  page.once("dialog", (d) => d.accept());
  await page.click(`button[data-revoke='${made}']`);
  await page.waitForSelector(`[data-k='key.${made}.revoked']:not([data-v=''])`);
  out.revoked_key = made;

  // Campaigns: pause, then resume.
  await page.goto(base + "/console/#campaigns", { waitUntil: "load" });
  await loaded(page, false);
  await page.click(`button[data-action=pause][data-campaign='${campaignID}']`);
  await page.waitForSelector(`[data-k='campaign.${campaignID}.status'][data-v=paused]`);
  await page.click(`button[data-action=resume][data-campaign='${campaignID}']`);
  await page.waitForSelector(`[data-k='campaign.${campaignID}.status'][data-v=active]`);

  // Log out: the data calls are refused again.
  await page.click("#logout");
  await page.waitForSelector("form#login");
  const after = await page.evaluate(async () => (await fetch("api/chains")).status);
  if (after !== 401) problems.push("after logout api/chains answered " + after);
} catch (e) {
  problems.push("failed: " + (e.stack || e));
  try {
    const p = browser.contexts()[0].pages()[0];
    problems.push("page errors shown: " + await p.locator(".error").allTextContents());
    await p.screenshot({ path: `${shots}/console-failure.png`, fullPage: true });
  } catch (_) { /* closed */ }
} finally {
  await browser.close();
}
out.expected_errors = expectedErrors.length;
console.log(JSON.stringify(out));
if (problems.length) {
  console.error(problems.join("\n"));
  process.exit(1);
}

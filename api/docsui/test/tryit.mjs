// tryit.mjs BASE_URL KEY SCREENSHOT: opens BASE_URL/docs in headless
// Chromium (playwright-core driving the machine's /usr/bin/chromium or
// $CHROMIUM), authorizes with KEY, runs "Try it out" on GET
// /activity/active_whales and waits for its 200. Every request must stay
// on BASE_URL's origin (the page works offline) and the console must show
// no error. Prints a JSON summary; exits non-zero on any failure.
import { chromium } from "playwright-core";

const [base, key, shot] = process.argv.slice(2);
const origin = new URL(base).origin;
const problems = [];
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  const page = await browser.newPage();
  await page.route("**/*", (route) => {
    const u = route.request().url();
    if (u.startsWith("data:") || new URL(u).origin === origin) return route.continue();
    problems.push("request off the server: " + u);
    return route.abort();
  });
  page.on("console", (m) => { if (m.type() === "error") problems.push("console error: " + m.text()); });
  page.on("pageerror", (e) => problems.push("page error: " + e.message));

  await page.goto(base + "/docs", { waitUntil: "load" });
  await page.waitForSelector(".opblock", { timeout: 30000 });
  const operations = await page.locator(".opblock").count();

  await page.click("button.authorize");
  await page.fill(".modal-ux input[type=text], .modal-ux input[type=password]", key);
  await page.click(".modal-ux button.authorize");
  await page.click(".modal-ux button.btn-done");

  const op = page.locator("#operations-dex-get_activity_active_whales, .opblock-get:has(.opblock-summary-path[data-path='/activity/active_whales'])").first();
  await op.locator(".opblock-summary").click();
  const tryOut = op.locator("button.try-out__btn");
  if (await tryOut.count() > 0 && (await tryOut.textContent()).includes("Try it out")) await tryOut.click();
  await op.locator("button.execute").click();
  const status = op.locator(".live-responses-table tbody .response-col_status").first();
  await status.waitFor({ timeout: 30000 });
  const code = (await status.textContent()).trim();
  if (!code.startsWith("200")) problems.push("try-it answered " + code);
  const body = await op.locator(".live-responses-table .microlight").first().textContent();
  if (!body.includes("wallet")) problems.push("try-it body without the answer: " + body.slice(0, 200));
  if (shot) await page.screenshot({ path: shot, fullPage: false });
  console.log(JSON.stringify({ operations, status: code, problems }));
} finally {
  await browser.close();
}
process.exit(problems.length ? 1 : 0);

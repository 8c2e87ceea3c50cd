// page.mjs: headless Chromium, driven by puppeteer-core (pinned in
// package-lock.json; it downloads no browser), uses the page specd serve
// shows at /.
//
//   CHROMIUM=/usr/bin/chromium SCREENSHOT=/tmp/specd-page.png node page.mjs [BASE_URL]
//
// (PROFILE_DIR: Chromium's profile directory, default a temporary one;
// BROWSER_PID_FILE: where to write Chromium's process id.)
// BASE_URL defaults to http://127.0.0.1:8080. Prints one line per check,
// "PASS name — detail" or "FAIL name — why", and exits 1 if any failed:
//   load     the page loads (HTTP 200, title, the form and the stats)
//   send     a prompt typed into the box and sent with the Send button
//            streams to body[data-state=done] (bounded); #out has
//            .draft and .target spans with text, #acc a percentage, #tps
//            a rate, #ntok the token count, a finish reason; the spans'
//            text equals the greedy /v1/completions text of the same
//            request; no script errors; a screenshot is saved to SCREENSHOT
//   chat     the same with the chat box ticked (/v1/chat/completions)
//   autorun  ?prompt=...&autorun=1 sends at once and ends in state done
import { writeFileSync } from "node:fs";
import puppeteer from "puppeteer-core";

const base = (process.argv[2] || process.env.SPECD_URL || "http://127.0.0.1:8080").replace(/\/$/, "");
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const shot = process.env.SCREENSHOT || "/tmp/specd-page.png";
const waitMS = +(process.env.PAGE_TIMEOUT_MS || 30_000);

let fails = 0;
const pass = (name, detail) => console.log(`PASS ${name} — ${detail}`);
const fail = (name, why) => {
  fails++;
  console.log(`FAIL ${name} — ${why}`);
};
function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}
const q = (s) => JSON.stringify(s);

const browser = await puppeteer.launch({
  executablePath,
  headless: true,
  // page.sh gives a profile directory it removes (puppeteer's own temporary
  // one would stay behind if this process were killed).
  userDataDir: process.env.PROFILE_DIR || undefined,
  // root in CI: no sandbox; small /dev/shm in containers.
  args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run", "--window-size=1000,800"],
  defaultViewport: { width: 1000, height: 800 },
  timeout: 30_000,
  protocolTimeout: 60_000,
});
// page.sh kills Chromium's process group (puppeteer starts it detached, in
// its own) if this process dies before it could close it.
if (process.env.BROWSER_PID_FILE) {
  writeFileSync(process.env.BROWSER_PID_FILE, `${browser.process()?.pid ?? ""}\n`);
}
// Whatever happens, the browser goes (and with it its processes).
const watchdog = setTimeout(() => {
  console.log("FAIL page.mjs — over 150 s; stopping");
  browser.process()?.kill("SIGKILL");
  process.exit(1);
}, 150_000);

const errors = []; // script errors and failed requests of the page
async function open(url) {
  const page = await browser.newPage();
  page.setDefaultTimeout(waitMS);
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console.error: ${m.text()}`);
  });
  page.on("requestfailed", (r) => errors.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on("response", (r) => {
    if (r.status() >= 400) errors.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
  });
  const res = await page.goto(url, { waitUntil: "load" });
  assert(res && res.status() === 200, `GET ${url}: ${res && res.status()}`);
  return page;
}

// finished waits (bounded) until the page says done or error.
async function finished(page) {
  await page.waitForFunction(() => ["done", "error"].includes(document.body.dataset.state), { timeout: waitMS });
  return page.evaluate(() => ({
    state: document.body.dataset.state,
    error: document.getElementById("error").textContent,
    drafts: [...document.querySelectorAll("#out .draft")].map((s) => s.textContent),
    targets: [...document.querySelectorAll("#out .target")].map((s) => s.textContent),
    generated: [...document.querySelectorAll("#out .draft, #out .target")].map((s) => s.textContent).join(""),
    prompt: [...document.querySelectorAll("#out .prompt")].map((s) => s.textContent).join(""),
    acc: document.getElementById("acc").textContent,
    tps: document.getElementById("tps").textContent,
    ntok: document.getElementById("ntok").textContent,
    nblk: document.getElementById("nblk").textContent,
    ttft: document.getElementById("ttft").textContent,
    finish: document.getElementById("finish").textContent,
  }));
}

// greedy is the whole (not streamed) text of the request the page sends.
async function greedy(prompt, chat, maxTokens) {
  const body = { max_tokens: maxTokens, temperature: 0 };
  if (chat) body.messages = [{ role: "user", content: prompt }];
  else body.prompt = prompt;
  const r = await fetch(`${base}/v1/${chat ? "chat/completions" : "completions"}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(waitMS),
  });
  assert(r.ok, `POST ${chat ? "chat/completions" : "completions"}: ${r.status}`);
  const j = await r.json();
  return { text: chat ? j.choices[0].message.content : j.choices[0].text, tokens: j.usage.completion_tokens };
}

// checkRun checks what a finished run left on the page.
function checkRun(r, want) {
  assert(r.state === "done", `data-state ${r.state}: ${r.error}`);
  assert(r.drafts.filter((t) => t.length > 0).length >= 1, `no #out .draft span with text (${r.drafts.length} spans)`);
  assert(r.targets.filter((t) => t.length > 0).length >= 1, `no #out .target span with text (${r.targets.length} spans)`);
  assert(/^\d+(\.\d+)?%$/.test(r.acc), `#acc ${q(r.acc)}, want a percentage`);
  assert(/^\d+(\.\d+)?$/.test(r.tps) && +r.tps > 0, `#tps ${q(r.tps)}, want a rate`);
  assert(+r.ntok === want.tokens, `#ntok ${q(r.ntok)}, the greedy completion has ${want.tokens} tokens`);
  assert(/^finished: (length|stop)$/.test(r.finish), `#finish ${q(r.finish)}`);
  assert(r.generated === want.text, `the spans' text ${q(r.generated)} is not the greedy completion ${q(want.text)}`);
  assert(errors.length === 0, `page errors: ${errors.join("; ")}`);
  return `${r.drafts.length} .draft and ${r.targets.length} .target spans, acceptance ${r.acc}, ${r.tps} tokens/s, ${r.ntok} tokens in ${r.nblk} blocks, TTFT ${r.ttft}, ${r.finish}; text = the greedy completion`;
}

async function check(name, fn) {
  errors.length = 0;
  try {
    pass(name, await fn());
  } catch (e) {
    fail(name, e && e.message ? e.message.split("\n")[0] : String(e));
  }
}

const prompt = "The jury said that the";
let page;
await check("load", async () => {
  page = await open(`${base}/`);
  const title = await page.title();
  assert(/specd/.test(title), `title ${q(title)}`);
  for (const sel of ["#prompt", "#send", "#out", "#acc", "#tps", "#ntok"]) assert(await page.$(sel), `no ${sel}`);
  return `GET ${base}/: 200, title ${q(title)}, Chromium ${await browser.version()}`;
});

if (page) {
  await check("send", async () => {
    const max = +(await page.$eval("#max", (e) => e.value));
    const want = await greedy(prompt, false, max);
    await page.$eval("#prompt", (e) => (e.value = ""));
    await page.type("#prompt", prompt);
    await page.click("#send");
    const r = await finished(page);
    await page.screenshot({ path: shot, fullPage: true });
    assert(r.prompt === prompt, `#out .prompt ${q(r.prompt)}, typed ${q(prompt)}`);
    return `typed ${q(prompt)}, clicked Send: ${checkRun(r, want)}; screenshot ${shot}`;
  });

  await check("chat", async () => {
    const max = 48;
    const want = await greedy(prompt, true, max);
    await page.click("#chat");
    await page.$eval("#max", (e) => (e.value = ""));
    await page.type("#max", String(max));
    // The state of the previous run must not count: clear it first.
    await page.evaluate(() => delete document.body.dataset.state);
    await page.click("#send");
    const r = await finished(page);
    return `chat ticked, max tokens ${max}: ${checkRun(r, want)}`;
  });
}

await check("autorun", async () => {
  const p = "Once upon a time";
  const want = await greedy(p, false, 128);
  const pg = await open(`${base}/?prompt=${encodeURIComponent(p)}&autorun=1`);
  const r = await finished(pg);
  return `?prompt=${encodeURIComponent(p)}&autorun=1: ${checkRun(r, want)}`;
});

clearTimeout(watchdog);
await browser.close();
process.exit(fails ? 1 : 0);

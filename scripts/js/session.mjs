// session.mjs: a specd session driven by the NATS JavaScript client
// (@nats-io/transport-node), as a voice front end would drive it.
//
//   node session.mjs [NATS_URL] [SESSION_ID]
//
// It subscribes to specd.v1.session.<sid>.tokens, publishes one prompt to
// specd.v1.session.<sid>.prompt, and reads token messages until the one
// with Specd-Status done, then the empty end-of-stream message. It checks
// that Specd-Seq counts 1, 2, 3… without a gap, that every message carries
// the same Specd-Request-Id and Specd-Session <sid>, and that the chunks'
// texts concatenated equal the done summary's text. Exit 0 and one line on
// success; exit 1 and the reason otherwise; bounded by a 30 s deadline.
import { connect } from "@nats-io/transport-node";

const url = process.argv[2] || process.env.NATS_URL || "nats://127.0.0.1:4222";
const sid = process.argv[3] || "js1";
const deadlineMS = 30_000;

function fail(msg) {
  console.error(`session.mjs: ${msg}`);
  process.exit(1);
}

const timer = setTimeout(() => fail(`no done message within ${deadlineMS} ms`), deadlineMS);

const nc = await connect({ servers: url, timeout: 5_000, name: "specd-js-session" });
const sub = nc.subscribe(`specd.v1.session.${sid}.tokens`);
await nc.flush(); // the server has the subscription before the prompt goes out

nc.publish(`specd.v1.session.${sid}.prompt`, JSON.stringify({ prompt: "The jury said", max_tokens: 32 }));

let want = 1;
let text = "";
let chunks = 0;
let id = "";
let summary = null;
for await (const m of sub) {
  if (summary !== null) {
    // After done: the empty end-of-stream message, without headers.
    if (m.data.length !== 0 || (m.headers && m.headers.get("Specd-Status") !== "")) {
      fail(`after done, want the empty end-of-stream message, got ${JSON.stringify(m.string())}`);
    }
    break;
  }
  const h = m.headers;
  if (!h) fail(`message without headers: ${JSON.stringify(m.string())}`);
  const status = h.get("Specd-Status");
  const seq = Number(h.get("Specd-Seq"));
  if (seq !== want) fail(`Specd-Seq ${h.get("Specd-Seq")}, want ${want} (status ${status})`);
  want++;
  if (h.get("Specd-Session") !== sid) fail(`Specd-Session ${JSON.stringify(h.get("Specd-Session"))}, want ${sid}`);
  const rid = h.get("Specd-Request-Id");
  if (!rid) fail(`message ${seq} has no Specd-Request-Id`);
  if (id === "") id = rid;
  if (rid !== id) fail(`message ${seq}: Specd-Request-Id ${rid}, want ${id}`);
  switch (status) {
    case "token": {
      const c = m.json();
      if (typeof c.text !== "string" || !Array.isArray(c.tokens)) fail(`token message ${seq} is not a chunk: ${m.string()}`);
      text += c.text;
      chunks++;
      break;
    }
    case "done":
      summary = m.json();
      break;
    case "error":
      fail(`error from specd (code ${h.get("Nats-Service-Error-Code")}): ${m.string()}`);
      break;
    default:
      fail(`message ${seq}: Specd-Status ${JSON.stringify(status)}`);
  }
}
clearTimeout(timer);
await nc.close();

if (summary === null) fail("subscription ended before done");
if (chunks === 0) fail("done without any token message");
if (summary.text !== text) fail(`done text ${JSON.stringify(summary.text)} != chunks concatenated ${JSON.stringify(text)}`);
if (summary.id !== id) fail(`done id ${summary.id}, want ${id}`);
if (summary.session !== sid) fail(`done session ${summary.session}, want ${sid}`);
if (!(summary.usage?.completion_tokens > 0 && summary.usage.completion_tokens <= 32)) {
  fail(`done usage.completion_tokens ${summary.usage?.completion_tokens}, want 1…32`);
}
console.log(`session ${sid}: ${chunks} chunks, Specd-Seq 1…${want - 1} gapless, ${summary.usage.completion_tokens} tokens, text equals done.text (${JSON.stringify(text.slice(0, 40))}…), then the empty message`);

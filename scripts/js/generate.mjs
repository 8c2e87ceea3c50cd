// generate.mjs: specd.v1.generate through the NATS JavaScript client's
// request-many (@nats-io/transport-node, strategy "sentinel": the stream
// ends at the first empty message).
//
//   node generate.mjs [NATS_URL]
//
// A good request must stream token messages (Specd-Seq 1, 2, 3…, gapless,
// one Specd-Request-Id), then done (whose text is the chunks' texts
// concatenated), then the empty end-of-stream message. A bad request
// ({"prompt": 5}) must get one error message (Specd-Status error,
// Nats-Service-Error-Code 400, an error naming the field "prompt"), then
// the empty message. Exit 0 and one line per request on success; exit 1
// and the reason otherwise.
import { connect } from "@nats-io/transport-node";

const url = process.argv[2] || process.env.NATS_URL || "nats://127.0.0.1:4222";

function fail(msg) {
  console.error(`generate.mjs: ${msg}`);
  process.exit(1);
}

const nc = await connect({ servers: url, timeout: 5_000, name: "specd-js-generate" });

// stream sends body and returns the reply messages up to and including the
// empty one; requestMany ends without an error at maxWait, so a stream
// without its empty message is caught here.
async function stream(body) {
  const it = await nc.requestMany("specd.v1.generate", JSON.stringify(body), { strategy: "sentinel", maxWait: 20_000 });
  const msgs = [];
  for await (const m of it) msgs.push(m);
  if (msgs.length === 0) fail(`${JSON.stringify(body)}: no reply within 20 s`);
  const last = msgs[msgs.length - 1];
  if (last.data.length !== 0) fail(`${JSON.stringify(body)}: the stream did not end with the empty message (last: ${last.string()})`);
  if (last.headers && last.headers.get("Specd-Status") !== "") fail(`${JSON.stringify(body)}: the empty message has Specd-Status ${last.headers.get("Specd-Status")}`);
  const rest = msgs.slice(0, -1);
  rest.forEach((m, i) => {
    const seq = m.headers?.get("Specd-Seq");
    if (Number(seq) !== i + 1) fail(`${JSON.stringify(body)}: message ${i + 1} has Specd-Seq ${JSON.stringify(seq)}`);
  });
  return rest;
}

// A good request.
const max = 16;
const good = await stream({ prompt: "The jury said", max_tokens: max });
const id = good[0].headers.get("Specd-Request-Id");
let text = "";
for (const [i, m] of good.entries()) {
  const st = m.headers.get("Specd-Status");
  if (m.headers.get("Specd-Request-Id") !== id) fail(`message ${i + 1}: Specd-Request-Id ${m.headers.get("Specd-Request-Id")}, want ${id}`);
  const final = i === good.length - 1;
  if (final && st !== "done") fail(`last message before the empty one has Specd-Status ${st} (${m.string()}), want done`);
  if (!final && st !== "token") fail(`message ${i + 1} has Specd-Status ${st}, want token`);
  if (!final) text += m.json().text;
}
if (good.length < 2) fail("no token message before done");
const sum = good[good.length - 1].json();
if (sum.text !== text) fail(`done text ${JSON.stringify(sum.text)} != chunks concatenated ${JSON.stringify(text)}`);
if (sum.id !== id) fail(`done id ${sum.id}, want ${id}`);
if (!(sum.usage.completion_tokens >= 1 && sum.usage.completion_tokens <= max)) fail(`completion_tokens ${sum.usage.completion_tokens}, want 1…${max}`);
console.log(`generate: ${good.length - 1} token messages + done (${sum.usage.completion_tokens} tokens, finish ${sum.finish_reason}) + empty; text ${JSON.stringify(text)}`);

// A bad request.
const bad = await stream({ prompt: 5 });
if (bad.length !== 1) fail(`bad request: want one error message before the empty one, got ${bad.length}`);
const e = bad[0];
if (e.headers.get("Specd-Status") !== "error") fail(`bad request: Specd-Status ${e.headers.get("Specd-Status")}, want error`);
if (e.headers.get("Nats-Service-Error-Code") !== "400") fail(`bad request: Nats-Service-Error-Code ${e.headers.get("Nats-Service-Error-Code")}, want 400`);
const eb = e.json();
if (eb.code !== 400 || !/"prompt"/.test(eb.error)) fail(`bad request: error body ${e.string()} does not name the field "prompt" with code 400`);
console.log(`generate: bad request -> 400 ${JSON.stringify(eb.error)} + empty`);

await nc.close();

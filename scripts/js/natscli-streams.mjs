// natscli-streams.mjs reads what the nats command-line tool printed and
// checks the specd reply streams in it. It uses no NATS client: the
// messages are the ones natscli received.
//
//   node natscli-streams.mjs FILE STREAM=STATUS…
//
// FILE is the output (stdout and stderr together) of
//   nats req specd.v1.generate BODY --wait-for-empty      (STREAM: req)
// or of
//   nats sub 'specd.v1.session.SID.>'                      (STREAM: a subject)
// STATUS is done or error: the stream must be Specd-Seq 1, 2, 3… without a
// gap under one Specd-Request-Id, token messages, then one STATUS message,
// then the empty end-of-stream message ("nil body"); for done, the chunks'
// texts concatenated must equal the summary's text. It prints one line per
// stream (the done text as JSON last) and exits 1 if any expectation fails.
import { readFileSync } from "node:fs";

const [file, ...want] = process.argv.slice(2);
if (!file || want.length === 0) {
  console.error("usage: node natscli-streams.mjs FILE STREAM=done|error…");
  process.exit(2);
}
const lines = readFileSync(file, "utf8").split("\n");

// Messages: {stream, headers: Map, body: string|null (null: nil body)}.
const msgs = [];
let cur = null;
let inHeaders = false;
const stamp = /^\d\d:\d\d:\d\d /; // natscli's log prefix (req)
for (const raw of lines) {
  let m;
  if ((m = /^\d\d:\d\d:\d\d Received with rtt /.exec(raw))) {
    cur = { stream: "req", headers: new Map(), body: undefined };
    msgs.push(cur);
    inHeaders = true;
    continue;
  }
  if ((m = /^\[#\d+\] Received on "([^"]+)"/.exec(raw))) {
    cur = { stream: m[1], headers: new Map(), body: undefined };
    msgs.push(cur);
    inHeaders = true;
    continue;
  }
  if (cur === null) continue;
  const line = raw.replace(stamp, "");
  if (inHeaders) {
    const h = /^([A-Za-z][A-Za-z0-9-]*): (.*)$/.exec(line);
    if (h) {
      cur.headers.set(h[1], h[2]);
      continue;
    }
    inHeaders = false;
    if (line === "") continue; // the blank line after the headers
  }
  if (cur.body === undefined && line !== "") cur.body = line === "nil body" ? null : line;
}

let failed = false;
for (const w of want) {
  const [stream, status] = w.split("=");
  const s = msgs.filter((m) => m.stream === stream);
  const bad = (why) => {
    console.log(`${stream}: FAIL ${why}`);
    failed = true;
  };
  if (s.length === 0) {
    bad("no messages");
    continue;
  }
  const last = s[s.length - 1];
  if (last.body !== null || last.headers.size !== 0) {
    bad(`does not end with the empty message (last: ${last.body})`);
    continue;
  }
  const rest = s.slice(0, -1);
  if (rest.length === 0) {
    bad("only the empty message");
    continue;
  }
  const id = rest[0].headers.get("Specd-Request-Id");
  let text = "";
  let why = "";
  rest.forEach((m, i) => {
    if (why) return;
    const seq = m.headers.get("Specd-Seq");
    const st = m.headers.get("Specd-Status");
    const final = i === rest.length - 1;
    if (Number(seq) !== i + 1) why = `message ${i + 1} has Specd-Seq ${seq}`;
    else if (status === "done" && m.headers.get("Specd-Request-Id") !== id) why = `message ${i + 1}: Specd-Request-Id ${m.headers.get("Specd-Request-Id")}, want ${id}`;
    else if (final && st !== status) why = `final message has Specd-Status ${st}, want ${status}: ${m.body}`;
    else if (!final && st !== "token") why = `message ${i + 1} has Specd-Status ${st}, want token`;
    else if (!final) {
      try {
        text += JSON.parse(m.body).text;
      } catch {
        why = `message ${i + 1}: body is not a JSON chunk: ${m.body}`;
      }
    }
  });
  if (why) {
    bad(why);
    continue;
  }
  const fin = rest[rest.length - 1];
  let body;
  try {
    body = JSON.parse(fin.body);
  } catch {
    bad(`final message body is not JSON: ${fin.body}`);
    continue;
  }
  if (status === "done") {
    if (body.text !== text) {
      bad(`done text ${JSON.stringify(body.text)} != chunks concatenated ${JSON.stringify(text)}`);
      continue;
    }
    console.log(`${stream}: ok ${rest.length - 1} token messages, done (${body.usage?.completion_tokens} tokens, finish ${body.finish_reason}), empty; Specd-Seq 1…${rest.length} gapless, one request id; text ${JSON.stringify(text)}`);
  } else {
    console.log(`${stream}: ok error ${body.code} ${JSON.stringify(body.error)}, empty`);
  }
}
process.exit(failed ? 1 : 0);

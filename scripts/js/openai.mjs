// openai.mjs: the official OpenAI JavaScript client (npm openai, pinned in
// package-lock.json) against specd serve's HTTP API.
//
//   node openai.mjs [BASE_URL]      (default http://127.0.0.1:8080/v1)
//
// Prints one line per check, "PASS name — detail" or "FAIL name — why",
// and exits 1 if any check failed:
//   models      models.list() lists specd-target
//   stream      a streamed chat completion with stream_options.include_usage:
//               content deltas, one finish_reason, then a usage chunk (no
//               choices) with completion_tokens > 0 and total = prompt +
//               completion; each content chunk's specd.draft + specd.target
//               is its content, and the chunks' specd.accepted + 1 add up
//               to completion_tokens
//   completion  completions.create (not streamed), max_tokens 16: text
//               non-empty, 0 < completion_tokens <= 16, total = prompt +
//               completion, a finish_reason
//   greedy      the same chat request as "stream", not streamed, at
//               temperature 0: its message equals the streamed text, with
//               the same finish_reason and usage
//   not found   model "no-such-model": the client throws NotFoundError, 404
import OpenAI, { NotFoundError } from "openai";

const baseURL = process.argv[2] || process.env.OPENAI_BASE_URL || "http://127.0.0.1:8080/v1";
// specd serve without --api-key takes any key; the client insists on one.
const client = new OpenAI({ baseURL, apiKey: process.env.SPECD_API_KEY || "none", maxRetries: 0, timeout: 30_000 });
const model = process.env.SPECD_MODEL || "specd-target";

let fails = 0;
const pass = (name, detail) => console.log(`PASS ${name} — ${detail}`);
const fail = (name, why) => {
  fails++;
  console.log(`FAIL ${name} — ${why}`);
};
// check runs one named check; a thrown error fails it.
async function check(name, fn) {
  try {
    const detail = await fn();
    pass(name, detail);
  } catch (e) {
    fail(name, e && e.stack ? e.stack.split("\n").slice(0, 3).join(" | ") : String(e));
  }
}
function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}
const q = (s) => JSON.stringify(s);

await check("models", async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert(ids.includes(model), `models.list() gave ${q(ids)}, want ${model} among them`);
  return `models.list(): ${ids.join(", ")}`;
});

const chatReq = {
  model,
  messages: [{ role: "user", content: "The jury said" }],
  max_tokens: 32,
  temperature: 0,
};

let streamed = null; // {text, finish, usage}
await check("stream", async () => {
  const stream = await client.chat.completions.create({ ...chatReq, stream: true, stream_options: { include_usage: true } });
  let text = "", deltas = 0, finish = null, finishes = 0, usage = null, afterUsage = 0, chunks = 0, specTokens = 0, role = null;
  for await (const chunk of stream) {
    chunks++;
    assert(chunk.object === "chat.completion.chunk", `chunk ${chunks}: object ${q(chunk.object)}`);
    if (usage) afterUsage++;
    if (chunk.usage) {
      usage = chunk.usage;
      assert(chunk.choices.length === 0, `the usage chunk has ${chunk.choices.length} choices, want none`);
    }
    for (const ch of chunk.choices) {
      if (ch.delta?.role) role = ch.delta.role;
      const c = ch.delta?.content;
      if (c) {
        deltas++;
        text += c;
        assert(ch.specd, `chunk ${chunks} has content but no specd object`);
        assert(ch.specd.draft + ch.specd.target === c, `chunk ${chunks}: specd.draft + specd.target = ${q(ch.specd.draft + ch.specd.target)}, content ${q(c)}`);
      }
      if (ch.specd) {
        assert(ch.specd.accepted >= 0 && ch.specd.accepted <= ch.specd.drafted, `chunk ${chunks}: accepted ${ch.specd.accepted} of drafted ${ch.specd.drafted}`);
        specTokens += ch.specd.accepted + 1;
      }
      if (ch.finish_reason) {
        finish = ch.finish_reason;
        finishes++;
      }
    }
  }
  assert(role === "assistant", `no delta with role assistant (got ${q(role)})`);
  assert(deltas > 0, "no content deltas");
  assert(finishes === 1, `${finishes} chunks with a finish_reason, want 1`);
  assert(usage, "no usage chunk despite stream_options.include_usage");
  assert(afterUsage === 0, `${afterUsage} chunks after the usage chunk`);
  assert(usage.completion_tokens > 0, `usage.completion_tokens ${usage.completion_tokens}`);
  assert(usage.total_tokens === usage.prompt_tokens + usage.completion_tokens, `usage ${q(usage)} does not add up`);
  assert(specTokens === usage.completion_tokens, `chunks' specd.accepted + 1 add up to ${specTokens}, usage.completion_tokens is ${usage.completion_tokens}`);
  streamed = { text, finish, usage };
  return `${chunks} chunks, ${deltas} content deltas, finish_reason ${finish}, usage ${usage.prompt_tokens}+${usage.completion_tokens}=${usage.total_tokens} (= the chunks' accepted+1); text ${q(text)}`;
});

await check("completion", async () => {
  const r = await client.completions.create({ model, prompt: "The jury said", max_tokens: 16 });
  assert(r.object === "text_completion", `object ${q(r.object)}`);
  assert(r.choices.length === 1, `${r.choices.length} choices`);
  const { text, finish_reason } = r.choices[0];
  const u = r.usage;
  assert(typeof text === "string" && text.length > 0, `text ${q(text)}`);
  assert(finish_reason === "length" || finish_reason === "stop", `finish_reason ${q(finish_reason)}`);
  assert(u && u.prompt_tokens > 0 && u.completion_tokens > 0 && u.completion_tokens <= 16, `usage ${q(u)}`);
  assert(u.total_tokens === u.prompt_tokens + u.completion_tokens, `usage ${q(u)} does not add up`);
  return `finish_reason ${finish_reason}, usage ${u.prompt_tokens}+${u.completion_tokens}=${u.total_tokens}; text ${q(text)}`;
});

await check("greedy", async () => {
  assert(streamed, "no streamed text to compare with (stream failed)");
  const r = await client.chat.completions.create(chatReq);
  assert(r.object === "chat.completion", `object ${q(r.object)}`);
  const m = r.choices[0]?.message;
  assert(m && m.role === "assistant", `message ${q(m)}`);
  assert(m.content === streamed.text, `not streamed: ${q(m.content)}; streamed: ${q(streamed.text)}`);
  assert(r.choices[0].finish_reason === streamed.finish, `finish_reason ${r.choices[0].finish_reason}, streamed ${streamed.finish}`);
  assert(q(r.usage) === q(streamed.usage), `usage ${q(r.usage)}, streamed ${q(streamed.usage)}`);
  return `temperature 0: the whole message equals the streamed text (${m.content.length} characters), finish_reason ${streamed.finish}, same usage`;
});

await check("not found", async () => {
  try {
    await client.chat.completions.create({ ...chatReq, model: "no-such-model" });
  } catch (e) {
    assert(e instanceof NotFoundError, `threw ${e?.constructor?.name}: ${e?.message}`);
    assert(e.status === 404, `status ${e.status}`);
    return `model "no-such-model": NotFoundError, status 404, code ${e.code}: ${e.message}`;
  }
  throw new Error("no error for an unknown model");
});

process.exit(fails ? 1 : 0);

// examples/orders through its generated client (openapi-typescript +
// openapi-fetch): every declared response, decoded typed.
import { randomUUID } from "node:crypto";
import createClient from "openapi-fetch";
import type { paths } from "./gen/orders.js";
import { control, everyOperation, expectError, literal, load, overLimit } from "./harness.js";

const { run, base, server } = load();
const c = createClient<paths>({ baseUrl: base });
const acme = { "X-API-Key": "ak_demo_acme_0123456789" };
const globex = { "X-API-Key": "ak_demo_globex_0123456789" };
const book = { customer: "Ada Lovelace", email: "ada@example.com", lines: [{ sku: "BOOK-1", qty: 2 }] };

type Hdr = { "X-Tenant-ID": string; "Idempotency-Key": string };
const post = (header: Partial<Hdr>, auth: Record<string, string>, body: typeof book) =>
  c.POST("/orders", { params: { header: header as Hdr }, headers: auth, body });

// 409 and 503 from idempotency: a first POST stays in its handler (the
// server holds the orders store) and holds the idempotency store's one
// key; the same key again, then another key.
{
  await control("hold");
  const key = randomUUID();
  const slow = run.call("POST /orders", true, post({ "X-Tenant-ID": "acme", "Idempotency-Key": key }, acme, book));
  await control("claimed");
  for (const [k, want] of [[key, "FX_IDEMPOTENCY_IN_FLIGHT"], [randomUUID(), "FX_SERVICE_UNAVAILABLE"]] as const) {
    const r = await run.call("POST /orders", true, post({ "X-Tenant-ID": "acme", "Idempotency-Key": k }, acme, book));
    const code = r.error ? literal(r.error.error.code) : "";
    if (code !== want || !r.response.headers.get("Retry-After")) throw new Error(`POST /orders while one is in flight: ${r.response.status} ${code}, want ${want}`);
  }
  await control("release");
  if (!(await slow).data) throw new Error("POST /orders held in its handler: no order");
}

// POST /orders: created, replayed, the key reused for another order, no
// key, an invalid order, then the guards.
const k1 = randomUUID();
const created = await run.call("POST /orders", true, post({ "X-Tenant-ID": "acme", "Idempotency-Key": k1 }, acme, book));
if (!created.data) throw new Error(`POST /orders: ${created.response.status}`);
const id: string = created.data.id; // always sent: required
const location = created.response.headers.get("Location");
if (location !== `/orders/${id}`) throw new Error(`Location ${location}`);
const replay = await run.call("POST /orders", true, post({ "X-Tenant-ID": "acme", "Idempotency-Key": k1 }, acme, book));
if (replay.response.headers.get("Idempotent-Replayed") !== "true") throw new Error("no Idempotent-Replayed");
const posts: [boolean, Partial<Hdr>, Record<string, string>, typeof book][] = [
  [true, { "X-Tenant-ID": "acme", "Idempotency-Key": k1 }, acme, { ...book, customer: "Bob" }],
  [false, { "X-Tenant-ID": "acme" }, acme, book],
  [false, { "X-Tenant-ID": "acme", "Idempotency-Key": randomUUID() }, acme, { ...book, lines: [{ sku: "b!", qty: 0 }] }],
  [false, { "X-Tenant-ID": "acme", "Idempotency-Key": randomUUID() }, {}, book], // no credentials
  [false, { "Idempotency-Key": randomUUID() }, acme, book],
  [true, { "X-Tenant-ID": "globex", "Idempotency-Key": randomUUID() }, acme, book],
];
for (const [valid, header, auth, body] of posts) {
  const r = await run.call("POST /orders", valid, post(header, auth, body));
  const e = r.error?.error;
  if (!e) throw new Error(`POST /orders: ${r.response.status}, want an error`);
  switch (e.code) {
    case "FX_VALIDATION_ERROR": {
      const where: string = e.details.issues[0]?.location ?? "";
      if (where !== "body") throw new Error(`issue at ${where}`);
      break;
    }
    case "FX_IDEMPOTENCY_KEY_REUSED":
    case "FX_IDEMPOTENCY_KEY_REQUIRED":
    case "FX_TENANT_REQUIRED": {
      const reason: string = e.details.reason;
      void reason;
      break;
    }
    default:
      literal(e.code);
  }
}

// GET /orders/{id}: the order, none, an id that cannot be one, the guards.
for (const [valid, oid, header, auth] of [
  [true, id, { "X-Tenant-ID": "acme" }, acme],
  [true, "ord_999", { "X-Tenant-ID": "acme" }, acme],
  [false, "42", { "X-Tenant-ID": "acme" }, acme],
  [false, id, { "X-Tenant-ID": "acme" }, {}], // no credentials
  [false, id, {}, acme],
  [true, id, { "X-Tenant-ID": "globex" }, acme],
] as const) {
  const r = await run.call("GET /orders/{id}", valid,
    c.GET("/orders/{id}", { params: { path: { id: oid }, header: header as { "X-Tenant-ID": string } }, headers: auth }));
  if (r.data && r.data.lines?.[0]?.sku !== "BOOK-1") throw new Error("GET /orders/{id}: wrong order");
  if (r.error) literal(r.error.error.code);
}

// GET /orders: a page, a bad limit, the guards.
for (const [valid, query, header, auth] of [
  [true, { status: "open" as const, limit: 1 }, { "X-Tenant-ID": "acme" }, acme],
  [false, { limit: 500 }, { "X-Tenant-ID": "acme" }, acme],
  [false, {}, { "X-Tenant-ID": "acme" }, {}], // no credentials
  [false, {}, {}, acme],
  [true, {}, { "X-Tenant-ID": "globex" }, acme],
] as const) {
  const r = await run.call("GET /orders", valid,
    c.GET("/orders", { params: { query, header: header as { "X-Tenant-ID": string } }, headers: auth }));
  if (r.data) {
    const orders: { id: string }[] = r.data.orders ?? [];
    if (orders.length !== 1) throw new Error(`GET /orders: ${orders.length}`);
  }
  if (r.error) literal(r.error.error.code);
}

// an order the document accepts (it lets a field it does not list
// through), over the server's body limit
{
  const big = { ...book, note: overLimit };
  const r = await run.call("POST /orders", true, post({ "X-Tenant-ID": "acme", "Idempotency-Key": randomUUID() }, acme, big));
  expectError("POST /orders", r, 413, "FX_PAYLOAD_TOO_LARGE");
}

// every operation, with a request it accepts, under each of everyOperation
for (const { headers: h, status, code } of everyOperation) {
  const auth = { ...acme, ...h };
  expectError("POST /orders", await run.call("POST /orders", true,
    post({ "X-Tenant-ID": "acme", "Idempotency-Key": randomUUID() }, auth, book)), status, code);
  expectError("GET /orders/{id}", await run.call("GET /orders/{id}", true,
    c.GET("/orders/{id}", { params: { path: { id }, header: { "X-Tenant-ID": "acme" } }, headers: auth })), status, code);
  expectError("GET /orders", await run.call("GET /orders", true,
    c.GET("/orders", { params: { header: { "X-Tenant-ID": "acme" } }, headers: auth })), status, code);
}

// 429: globex's quota (600 a minute, refilled as time passes) is spent
// directly on the server, and kept spent while each call goes through
// the client (a token refilled while Prism forwards is taken at once).
const exhaust = async <T>(call: () => Promise<T>): Promise<T> => {
  const state = { done: false, limited: 0 };
  const flood = async () => {
    for (let n = 0; n < 5000 && !state.done; n++) {
      const r = await fetch(`${server}/orders`, { headers: { ...globex, "X-Tenant-ID": "globex" } });
      await r.arrayBuffer();
      if (r.status === 429) state.limited++;
    }
  };
  const floods = Array.from({ length: 8 }, flood);
  for (let waited = 0; state.limited === 0; waited += 20) {
    if (waited > 60000) throw new Error("globex's quota was never spent");
    await new Promise((r) => setTimeout(r, 20));
  }
  const r = await call();
  state.done = true;
  await Promise.all(floods);
  return r;
};
const g = { "X-Tenant-ID": "globex" };
const limited: (() => Promise<{ retry: string | null; status: number; code: string }>)[] = [
  async () => {
    const r = await run.call("GET /orders", true, c.GET("/orders", { params: { header: g }, headers: globex }));
    return { retry: r.response.headers.get("Retry-After"), status: r.response.status, code: r.error ? literal(r.error.error.code) : "" };
  },
  async () => {
    const r = await run.call("GET /orders/{id}", true, c.GET("/orders/{id}", { params: { path: { id }, header: g }, headers: globex }));
    return { retry: r.response.headers.get("Retry-After"), status: r.response.status, code: r.error ? literal(r.error.error.code) : "" };
  },
  async () => {
    const r = await run.call("POST /orders", true, post({ ...g, "Idempotency-Key": randomUUID() }, globex, book));
    return { retry: r.response.headers.get("Retry-After"), status: r.response.status, code: r.error ? literal(r.error.error.code) : "" };
  },
];
for (const call of limited) {
  // A token is refilled every 100 ms, and one can reach the client's call
  // before the floods take it: a call that got through is made again, ten
  // times at most.
  let { retry, status, code } = await exhaust(call);
  for (let again = 0; again < 10 && status >= 200 && status < 300; again++) {
    ({ retry, status, code } = await exhaust(call));
  }
  if (code !== "FX_RATE_LIMITED" || !retry) throw new Error(`want 429 with Retry-After: ${status}`);
}
run.finish("examples/orders");

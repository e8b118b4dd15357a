// examples/hello through its generated client (openapi-typescript +
// openapi-fetch): every declared response, decoded typed.
import createClient from "openapi-fetch";
import type { paths } from "./gen/hello.js";
import { everyOperation, expectError, literal, load, overLimit } from "./harness.js";

const { run, base } = load();
const c = createClient<paths>({ baseUrl: base });
const key = { "X-API-Key": "fx-demo-key-not-a-secret" };

{
  const r = await run.call("GET /", true, c.GET("/"));
  if (r.error) literal(r.error.error.code);
}
{
  const r = await run.call("GET /hello", true, c.GET("/hello"));
  if (r.data === undefined) throw new Error("GET /hello: no body");
}
for (const id of ["7", "missing"]) {
  const r = await run.call("GET /users/{id}", true, c.GET("/users/{id}", { params: { path: { id } } }));
  if (r.error) {
    const code: "APP_USER_NOT_FOUND" | "FX_INTERNAL_ERROR" | "FX_HEADERS_TOO_LARGE" = literal(r.error.error.code);
    const message: string = r.error.error.message;
    void code, message;
  }
}
{
  const ok = await run.call("POST /orders", true,
    c.POST("/orders", { body: { customer: "Ada", items: [{ sku: "A-1", qty: 2 }] } }));
  if (ok.response.status !== 201) throw new Error(`POST /orders: ${ok.response.status}`);
  const bad = await run.call("POST /orders", false,
    c.POST("/orders", { params: { query: { notify: "maybe" as unknown as boolean } }, body: { customer: "", items: [{ sku: "A-1", qty: 0 }] } }));
  if (bad.error && bad.error.error.code === "FX_VALIDATION_ERROR") {
    const issues = bad.error.error.details.issues;
    const first: string = issues[0]?.message ?? "";
    if (issues.length < 2) throw new Error(`POST /orders: ${issues.length} issues: ${first}`);
  }
}
// no credentials: a request the document refuses (its security), then the key
for (const [valid, headers] of [[false, {}], [true, key]] as const) {
  const r = await run.call("GET /me", valid, c.GET("/me", { headers }));
  if (r.error) {
    const code: "FX_UNAUTHENTICATED" | "FX_INTERNAL_ERROR" | "FX_HEADERS_TOO_LARGE" = literal(r.error.error.code);
    if (code === "FX_UNAUTHENTICATED" && !r.response.headers.get("WWW-Authenticate")) throw new Error("401 without WWW-Authenticate");
  }
}
// an order the document accepts, over the server's body limit
{
  const r = await run.call("POST /orders", true, c.POST("/orders", { body: { customer: overLimit, items: [{ sku: "A-1", qty: 2 }] } }));
  expectError("POST /orders", r, 413, "FX_PAYLOAD_TOO_LARGE");
}
// every operation, with a request it accepts, under each of everyOperation
for (const { headers: h, status, code } of everyOperation) {
  expectError("GET /", await run.call("GET /", true, c.GET("/", { headers: h })), status, code);
  expectError("GET /hello", await run.call("GET /hello", true, c.GET("/hello", { headers: h })), status, code);
  expectError("GET /users/{id}", await run.call("GET /users/{id}", true,
    c.GET("/users/{id}", { params: { path: { id: "7" } }, headers: h })), status, code);
  expectError("POST /orders", await run.call("POST /orders", true,
    c.POST("/orders", { body: { customer: "Ada", items: [{ sku: "A-1", qty: 2 }] }, headers: h })), status, code);
  expectError("GET /me", await run.call("GET /me", true, c.GET("/me", { headers: { ...key, ...h } })), status, code);
}
run.finish("examples/hello");

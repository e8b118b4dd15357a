// examples/openapi through its generated client (openapi-typescript +
// openapi-fetch): every declared response, decoded typed.
import createClient from "openapi-fetch";
import type { paths } from "./gen/openapi.js";
import { control, everyOperation, expectError, literal, load, overLimit } from "./harness.js";

const { run, base } = load();
const c = createClient<paths>({ baseUrl: base });
const admin = { "X-API-Key": "ak_demo_admin_0123456789" };

{
  const r = await run.call("POST /users", true, c.POST("/users", { body: { name: "Ada", email: "ada@example.com" } }));
  if (r.data?.id !== "u1") throw new Error(`POST /users: ${r.response.status}`);
  const bad = await run.call("POST /users", false, c.POST("/users", { body: { name: "", email: "ada" } }));
  if (bad.error?.error.code === "FX_VALIDATION_ERROR") {
    const paths: (string | number)[][] = bad.error.error.details.issues.map((i) => i.path);
    if (paths.length !== 2) throw new Error(`POST /users: ${JSON.stringify(paths)}`);
  }
}
for (const id of ["u1", "u2"]) {
  const r = await run.call("GET /users/{id}", true, c.GET("/users/{id}", { params: { path: { id } } }));
  if (r.data) {
    const email: string = r.data.email; // always sent: required, not optional
    void email;
  }
  if (r.error) {
    const code: "USER_NOT_FOUND" | "FX_INTERNAL_ERROR" | "FX_HEADERS_TOO_LARGE" = literal(r.error.error.code);
    void code;
  }
}
// no credentials; no tenant; another tenant; the caller's own
const stats = (headers: Record<string, string>) =>
  c.GET("/admin/stats", { params: { header: headers as { "X-Tenant-ID": string } }, headers });
for (const [valid, h] of [
  [false, { "X-Tenant-ID": "acme" }],
  [false, admin],
  [true, { ...admin, "X-Tenant-ID": "initech" }],
  [true, { ...admin, "X-Tenant-ID": "acme" }],
] as const) {
  const r = await run.call("GET /admin/stats", valid, stats(h));
  if (r.data) {
    const tenant: string = r.data.tenant;
    const users: number = r.data.users;
    if (tenant !== "acme" || users !== 1) throw new Error(`GET /admin/stats: ${tenant} ${users}`);
  }
  if (r.error) {
    const code: "FX_TENANT_REQUIRED" | "FX_UNAUTHENTICATED" | "FX_FORBIDDEN" | "FX_INTERNAL_ERROR" | "FX_HEADERS_TOO_LARGE" = literal(r.error.error.code);
    void code;
  }
}
for (const p of ["/livez", "/readyz"] as const) {
  await run.call(`GET ${p}`, true, c.GET(p));
}
// the user store unreachable: readiness answers 503
await control("down");
{
  const r = await run.call("GET /readyz", true, c.GET("/readyz"));
  if (r.error) {
    const code: "FX_SERVICE_UNAVAILABLE" | "FX_INTERNAL_ERROR" | "FX_HEADERS_TOO_LARGE" = literal(r.error.error.code);
    if (code !== "FX_SERVICE_UNAVAILABLE" || !r.response.headers.get("Retry-After")) throw new Error(`GET /readyz: ${code}`);
  } else {
    throw new Error(`GET /readyz with the user store unreachable: ${r.response.status}`);
  }
}
await control("up");
// a user the document accepts, over the server's body limit
{
  const r = await run.call("POST /users", true, c.POST("/users", { body: { name: "Ada", email: `${overLimit}@example.com` } }));
  expectError("POST /users", r, 413, "FX_PAYLOAD_TOO_LARGE");
}
// every operation, with a request it accepts, under each of everyOperation
for (const { headers: h, status, code } of everyOperation) {
  expectError("POST /users", await run.call("POST /users", true,
    c.POST("/users", { body: { name: "Ada", email: "ada@example.com" }, headers: h })), status, code);
  expectError("GET /users/{id}", await run.call("GET /users/{id}", true,
    c.GET("/users/{id}", { params: { path: { id: "u1" } }, headers: h })), status, code);
  expectError("GET /admin/stats", await run.call("GET /admin/stats", true,
    stats({ ...admin, "X-Tenant-ID": "acme", ...h })), status, code);
  expectError("GET /livez", await run.call("GET /livez", true, c.GET("/livez", { headers: h })), status, code);
  expectError("GET /readyz", await run.call("GET /readyz", true, c.GET("/readyz", { headers: h })), status, code);
}
run.finish("examples/openapi");

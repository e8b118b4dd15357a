// The run of one generated TypeScript client against a live example,
// through Prism in proxy mode: every call is recorded with the outcome it
// got (method and path template, status, error code) and the violations
// Prism reported in its sl-violations header. At the end the run fails
// unless (1) every response the served document declares, each
// (operation, status, code), was exercised, none excused; (2) Prism
// reported no response violation; (3) every request the client meant to
// be valid had no request violation, and every request meant to be
// invalid had at least one (Prism and the server agree that it is).
import { appendFileSync, readFileSync } from "node:fs";

// fault is the header of the fault switch of the example as its
// TestServeForClients serves it (fxtest.FaultHeader in the Go
// repository): a request carrying it answers the 500 FX_INTERNAL_ERROR
// every operation declares. The document does not name it, and it is
// no violation of it: Prism passes it on.
export const fault = { "X-Fx-Test-Fault": "on" };

// everyOperation are the request headers every operation answers the
// same way whatever its contract, each with that answer; each example's
// client sends each set with a request every operation accepts
// otherwise: the fault switch's 500, and a header that puts the head of
// the request over the server's default limit (fx.DefaultHeaderLimit,
// 8 KiB), which the connection layer answers 431 before any route.
export const everyOperation = [
  { headers: fault, status: 500, code: "FX_INTERNAL_ERROR" },
  { headers: { "X-Padding": "a".repeat(8 << 10) }, status: 431, code: "FX_HEADERS_TOO_LARGE" },
] as const;

// overLimit is a string long enough to put a request body over the
// server's default limit (fx.DefaultBodyLimit, 4 MiB): 413.
export const overLimit = "a".repeat((4 << 20) + 1);

type Json = any; // the served document, read as plain JSON

// literal accepts only a string-literal type: a code typed as plain
// string fails to compile here, so each call proves its codes are an enum.
export function literal<T extends string>(v: T & (string extends T ? never : unknown)): T {
  return v;
}

export interface Result {
  response: Response;
  error?: unknown;
}

// expectError checks that a call was answered status with the error
// envelope of code, decoded typed: the client's error type has a code of
// literal types (a code typed as plain string, or one this operation
// does not declare, fails to compile) and a message string.
export function expectError<C extends string>(
  op: string,
  r: { response: Response; error?: { error: { code: C; message: string } } },
  status: number,
  code: NoInfer<C> & (string extends C ? never : unknown),
): void {
  const e = r.error?.error;
  if (r.response.status !== status || e?.code !== code || typeof e.message !== "string" || e.message === "") {
    throw new Error(`${op}: ${r.response.status} ${JSON.stringify(r.error)}, want ${status} ${code} with a message`);
  }
}

export class Run {
  readonly exercised = new Set<string>();
  readonly problems: string[] = [];
  calls = 0;
  constructor(readonly doc: Json) {}

  // call records the outcome of one generated-client call; op is
  // "METHOD /path/{template}", valid says whether the request conforms
  // to the document (its parameters, body and security: a request
  // without the credentials an operation requires is invalid).
  async call<R extends Result>(op: string, valid: boolean, p: Promise<R>): Promise<R> {
    const r = await p;
    this.calls++;
    const status = r.response.status;
    let outcome = `${op} ${status}`;
    if (status >= 400) {
      const code = (r.error as { error?: { code?: unknown } } | undefined)?.error?.code;
      if (typeof code !== "string") {
        this.problems.push(`${outcome}: no typed error envelope: ${JSON.stringify(r.error)}`);
      }
      outcome += ` ${code}`;
      this.checkFields(outcome, (r.error as { error?: object } | undefined)?.error ?? {});
    }
    this.exercised.add(outcome);
    const raw = r.response.headers.get("sl-violations");
    const violations: { location: string[]; message: string }[] = raw ? JSON.parse(raw) : [];
    const onResponse = violations.filter((v) => v.location[0] === "response");
    const onRequest = violations.filter((v) => v.location[0] === "request");
    for (const v of onResponse) {
      this.problems.push(`${outcome}: response violation ${v.location.join(".")}: ${v.message}`);
    }
    if (valid && onRequest.length > 0) {
      this.problems.push(`${outcome}: a valid request has violations: ${JSON.stringify(onRequest)}`);
    }
    if (!valid && onRequest.length === 0) {
      this.problems.push(`${outcome}: a request meant to be invalid has no request violation`);
    }
    return r;
  }

  // checkFields checks that every field of the error object sent is one
  // the declared schema of outcome types.
  checkFields(outcome: string, sent: object): void {
    const schema = this.outcomes().get(outcome);
    if (!schema) return; // not declared: finish reports it
    const undeclared = Object.keys(sent).filter((k) => !(k in (schema.properties ?? {})));
    if (undeclared.length === 0) return;
    this.problems.push(`${outcome}: the server sent ${undeclared.join(", ")}, which the document does not type: ${JSON.stringify(sent)}`);
  }

  resolve(s: Json): Json {
    while (s && typeof s.$ref === "string") {
      s = s.$ref.slice(2).split("/").reduce((o: Json, k: string) => o[k], this.doc);
    }
    return s;
  }

  // declared lists the document's responses as outcomes, every
  // (operation, status) pair with each code of an error:
  // "GET /users/{id} 200", "GET /users/{id} 404 USER_NOT_FOUND". A
  // response given by reference (one shared under components/responses)
  // counts as written in place; an error status without an envelope
  // with codes is a problem.
  declared(): string[] {
    return [...this.outcomes().keys()];
  }

  // outcomes maps each declared outcome to the schema of its error
  // object (null for a success).
  private outcomes(): Map<string, Json> {
    if (this.cached) return this.cached;
    const out = new Map<string, Json>();
    for (const [path, ops] of Object.entries<Json>(this.doc.paths)) {
      for (const [method, op] of Object.entries<Json>(ops)) {
        if (method === "parameters" || typeof op !== "object") continue;
        for (const [status, ref] of Object.entries<Json>(op.responses)) {
          const name = `${method.toUpperCase()} ${path} ${status}`;
          if (Number(status) < 400) {
            out.set(name, null);
            continue;
          }
          const resp = this.resolve(ref);
          const schema = this.resolve(resp?.content?.["application/json"]?.schema);
          const err = this.resolve(schema?.properties?.error);
          const kinds: Json[] = err?.oneOf ? err.oneOf.map((k: Json) => this.resolve(k)) : [err];
          let codes = 0;
          for (const k of kinds) {
            for (const code of k?.properties?.code?.enum ?? []) {
              out.set(`${name} ${code}`, k);
              codes++;
            }
          }
          if (codes === 0) this.problems.push(`${name}: an error response with no envelope of declared codes`);
        }
      }
    }
    this.cached = out;
    return out;
  }
  private cached?: Map<string, Json>;

  // finish reports and exits non-zero on any problem: a declared outcome
  // not exercised is one, whatever it is.
  finish(name: string): void {
    const declared = this.declared();
    for (const o of declared) {
      if (!this.exercised.has(o)) this.problems.push(`declared but not exercised: ${o}`);
    }
    for (const o of this.exercised) {
      if (!declared.includes(o)) this.problems.push(`exercised but not declared: ${o}`);
    }
    const hit = declared.filter((o) => this.exercised.has(o)).length;
    console.log(
      `${name}: ${this.calls} calls through Prism, ${hit} of ${declared.length} declared responses exercised and decoded typed, ` +
        `${this.problems.length} problems`,
    );
    for (const p of this.problems) console.log(`  PROBLEM ${p}`);
    if (this.problems.length > 0) process.exit(1);
  }
}

// control sends one line to an example served by its package's
// TestServeForClients (node.sh gives its stdin as FX_CONTROL, a named
// pipe, and its output as FX_CONTROL_OUT) and waits, at most 10 s, until
// it prints "ok LINE": the line is done.
export async function control(line: string): Promise<void> {
  const pipe = process.env.FX_CONTROL;
  const out = process.env.FX_CONTROL_OUT;
  if (!pipe || !out) throw new Error(`control ${line}: the example does not run as its TestServeForClients serves it`);
  const done = () => readFileSync(out, "utf8").split("\n").filter((l) => l === `ok ${line}`).length;
  const before = done();
  appendFileSync(pipe, line + "\n");
  for (let waited = 0; done() === before; waited += 10) {
    if (waited > 10000) throw new Error(`control ${line}: no "ok ${line}" from the example`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function load(): { run: Run; base: string; server: string } {
  const doc = JSON.parse(readFileSync(process.env.FX_DOC!, "utf8"));
  return { run: new Run(doc), base: process.env.FX_PRISM!, server: process.env.FX_SERVER! };
}

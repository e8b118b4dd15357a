// The run of one generated TypeScript client against a live example,
// through Prism in proxy mode: every call is recorded with the outcome it
// got (method and path template, status, error code) and the violations
// Prism reported in its sl-violations header. At the end the run fails
// unless (1) every response the served document declares was exercised,
// apart from the ones the example names with a reason; (2) Prism
// reported no response violation; (3) every request the client meant to
// be valid had no request violation, and every request meant to be
// invalid had at least one (Prism and the server agree that it is).
import { appendFileSync, readFileSync } from "node:fs";

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

  resolve(s: Json): Json {
    while (s && typeof s.$ref === "string") {
      s = s.$ref.slice(2).split("/").reduce((o: Json, k: string) => o[k], this.doc);
    }
    return s;
  }

  // declared lists the document's responses as outcomes:
  // "GET /users/{id} 200", "GET /users/{id} 404 USER_NOT_FOUND".
  declared(): string[] {
    const out: string[] = [];
    for (const [path, ops] of Object.entries<Json>(this.doc.paths)) {
      for (const [method, op] of Object.entries<Json>(ops)) {
        for (const [status, resp] of Object.entries<Json>(op.responses)) {
          const name = `${method.toUpperCase()} ${path} ${status}`;
          if (Number(status) < 400) {
            out.push(name);
            continue;
          }
          const schema = this.resolve(resp.content["application/json"].schema);
          const err = this.resolve(schema.properties.error);
          const kinds = err.oneOf ? err.oneOf.map((k: Json) => this.resolve(k)) : [err];
          for (const k of kinds) {
            for (const code of k.properties.code.enum) out.push(`${name} ${code}`);
          }
        }
      }
    }
    return out;
  }

  // finish reports and exits non-zero on any problem. unreachable names
  // declared outcomes a black-box client cannot provoke, each with why;
  // 500 FX_INTERNAL_ERROR and 413 FX_PAYLOAD_TOO_LARGE, which fx declares
  // on every route (of a kind), are left out as fxtest's coverage does.
  finish(name: string, unreachable: Record<string, string>): void {
    const declared = this.declared();
    const missed = declared.filter(
      (o) => !this.exercised.has(o) && !o.endsWith(" 500 FX_INTERNAL_ERROR") && !o.endsWith(" 413 FX_PAYLOAD_TOO_LARGE") && !(o in unreachable),
    );
    for (const o of missed) this.problems.push(`declared but not exercised: ${o}`);
    for (const o of this.exercised) {
      if (!declared.includes(o)) this.problems.push(`exercised but not declared: ${o}`);
    }
    for (const o of Object.keys(unreachable)) {
      if (!declared.includes(o)) this.problems.push(`unreachable ${o} is not declared: remove it`);
    }
    const counted = declared.filter((o) => !o.endsWith(" 500 FX_INTERNAL_ERROR") && !o.endsWith(" 413 FX_PAYLOAD_TOO_LARGE"));
    const hit = counted.filter((o) => this.exercised.has(o)).length;
    console.log(
      `${name}: ${this.calls} calls through Prism, ${hit} of ${counted.length} declared responses exercised and decoded typed` +
        ` (${Object.keys(unreachable).length} named unreachable), ${this.problems.length} problems`,
    );
    for (const [o, why] of Object.entries(unreachable)) console.log(`  not exercised here: ${o} (${why})`);
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

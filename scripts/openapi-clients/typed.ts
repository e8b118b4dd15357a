// Type-checks only if openapi-typescript typed examples/orders' errors:
// code a union of literals, details typed per code (narrowed by code).
import type { components, paths } from "./examplesorders";
type S = components["schemas"];

function reason(e: S["PostOrders422Error"]["error"]): string {
  if (e.code === "FX_VALIDATION_ERROR") {
    return e.details.issues.map((i) => i.location + " " + i.path.join(".") + ": " + i.message).join("; ");
  }
  const r: string = e.details.reason;
  return r;
}
const code: S["GetOrdersById404Error"]["error"]["code"] = "APP_ORDER_NOT_FOUND";
const tenant: S["PostOrders400Error"]["error"]["code"][] = ["FX_TENANT_REQUIRED", "FX_IDEMPOTENCY_KEY_REQUIRED"];
// Type-checks only if the list of orders and each order's lines are
// arrays, never null (--strict): a typed operation sends [] for nil.
type List = paths["/orders"]["get"]["responses"][200]["content"]["application/json"];
function lines(l: List): number {
  return l.orders.reduce((n, o) => n + o.lines.length, 0);
}
export { reason, code, tenant, lines };

// Type-checks only if openapi-typescript typed examples/orders' errors:
// code a union of literals, details typed per code (narrowed by code).
import type { components } from "./examplesorders";
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
export { reason, code, tenant };
